"""In-memory bytes as a source (tests, uploads)."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping

from ragwright.sources.base import SourceItem


class BytesSource:
    """Documents given as ``{document_id: bytes}``.

    ``names`` gives a file name per document id (a hint that tells Markdown from plain text); without
    one, the id itself is the hint.
    """

    def __init__(
        self, documents: Mapping[str, bytes], *, names: Mapping[str, str] | None = None, root: str | None = None
    ) -> None:
        self.documents = dict(documents)
        self.names = dict(names or {})
        self._root = root

    @property
    def root(self) -> str | None:
        return self._root

    def items(self) -> Iterator[SourceItem]:
        for doc_id, data in self.documents.items():
            yield SourceItem(
                document_id=doc_id,
                uri=f"memory:{doc_id}",
                load=functools.partial(bytes, data),
                name_hint=self.names.get(doc_id, doc_id),
                size=len(data),
            )

    def __len__(self) -> int:
        return len(self.documents)
