"""Chunks: the unit that is embedded, stored, retrieved and cited."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ragwright.model.identity import DEFAULT_TENANT, PUBLIC
from ragwright.model.ids import chunk_id, content_hash
from ragwright.model.metadata import Metadata


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable span of a document.

    ``text`` is what is displayed and cited; ``embed_text`` is what was embedded (the text with its
    section path prefixed, or contextual enrichment); it defaults to ``text``.
    """

    id: str
    document_id: str
    text: str
    position: int
    section_path: tuple[str, ...] = ()
    page: int | None = None
    page_end: int | None = None
    parent_id: str | None = None
    prev_id: str | None = None
    next_id: str | None = None
    metadata: Metadata = field(default_factory=dict)
    tenant: str = DEFAULT_TENANT
    acl: tuple[str, ...] = (PUBLIC,)
    embed_text: str | None = None

    @classmethod
    def create(cls, document_id: str, text: str, position: int, **fields: object) -> Chunk:
        """Build a chunk whose id is derived from (document id, content hash, position)."""
        cid = chunk_id(document_id, content_hash(text), position)
        return cls(id=cid, document_id=document_id, text=text, position=position, **fields)  # type: ignore[arg-type]

    @property
    def text_for_embedding(self) -> str:
        return self.embed_text if self.embed_text is not None else self.text

    @property
    def section(self) -> str:
        """The section path as the breadcrumb users see: ``"A > B"``."""
        return " > ".join(self.section_path)

    def with_access(self, tenant: str, acl: tuple[str, ...]) -> Chunk:
        return replace(self, tenant=tenant, acl=acl)

    def with_links(self, prev_id: str | None, next_id: str | None) -> Chunk:
        return replace(self, prev_id=prev_id, next_id=next_id)
