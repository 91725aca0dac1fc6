"""In-memory bytes as a source (tests, uploads)."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping

from ragwright.sources.base import SourceItem


class BytesSource:
    """Documents given as ``{document_id: bytes}``; the id doubles as the name hint."""

    def __init__(self, documents: Mapping[str, bytes], *, root: str | None = None) -> None:
        self.documents = dict(documents)
        self._root = root

    @property
    def root(self) -> str | None:
        return self._root

    def items(self) -> Iterator[SourceItem]:
        for doc_id, data in self.documents.items():
            yield SourceItem(
                document_id=doc_id, uri=f"memory:{doc_id}", load=functools.partial(bytes, data), name_hint=doc_id
            )

    def __len__(self) -> int:
        return len(self.documents)
