"""The tag table of tag-based retrieval: each unique (key, value) tag embedded once per model.

A store that supports tag-based retrieval returns one from ``tag_table()``. Tags are linked to the
documents that carry them, and a query only ever sees the tags of documents the caller may see
(same tenant, shared ACL group, document still indexed), so a tag from another tenant is never
injected into a caller's filter.

Values travel as canonical JSON so their kind survives (the number ``2024`` is not the string ``"2024"``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ragwright.model.identity import Identity

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

TagPair = tuple[str, str]  # (key, value as canonical JSON)


def encode_value(value: Any) -> str:
    """Canonical JSON of a tag value (kind-preserving)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def decode_value(text: str) -> Any:
    return json.loads(text)


@runtime_checkable
class TagTable(Protocol):
    """Tag vectors (per embedding model) and which documents carry which tags."""

    def embedded(self, model: str) -> set[TagPair]:
        """The tags that already have a vector for *model*."""
        ...

    def add_vectors(self, model: str, entries: Sequence[tuple[str, str, Vector]]) -> None:
        """Store vectors for ``(key, value_json, vector)`` entries."""
        ...

    def set_document_tags(self, document_id: str, tags: Sequence[TagPair]) -> None:
        """Replace the tags a document carries."""
        ...

    def visible(self, model: str, identity: Identity) -> list[tuple[str, str, Vector]]:
        """``(key, value_json, vector)`` of every tag carried by an indexed document *identity* may see."""
        ...
