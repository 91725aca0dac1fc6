"""Registry records: what the index knows about each source document."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ragwright.errors import ConfigError
from ragwright.model.identity import DEFAULT_TENANT, PUBLIC


class DocumentStatus(StrEnum):
    INDEXED = "indexed"
    FAILED = "failed"
    DELETED = "deleted"

    @classmethod
    def parse(cls, value: str | DocumentStatus | None) -> DocumentStatus | None:
        """A status a caller named (None or "" for every status); an unknown one is a ConfigError naming
        the accepted values."""
        if not value:
            return None
        try:
            return cls(value)
        except ValueError:
            accepted = ", ".join(s.value for s in cls)
            raise ConfigError.invalid("status", value, f"one of {accepted}") from None


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """One row of the registry.

    Change detection compares ``content_hash`` and the pipeline versions (parser, chunker, embedding
    model): all equal means the document is skipped with no parse and no embed.

    ``metadata`` is the caller's metadata only. What ingestion keeps about a document for itself has its
    own fields (typed columns in the SQL stores):

    - ``name_hint``: the file name a rebuild parses the staged bytes with (``None``: not recorded);
    - ``parent``: the document an attachment belongs to; ``children``: a document's attachments;
    - ``metadata_keys``: the metadata keys its chunks carry, what a filter can match (``None``: not
      recorded, for documents ingested before it was);
    - ``warnings``: what the parser warned about;
    - ``source_meta``: the metadata the source gave the item (a rebuild gives the chunks the same);
    - ``error_type`` and ``attempts``: of a failed document (a dead letter), the exception's class name
      and how many ingestions in a row failed.
    """

    document_id: str
    source: str
    content_hash: str
    status: DocumentStatus
    parser_version: str = ""
    chunker_version: str = ""
    embedding_model: str = ""
    chunk_count: int = 0
    stage: str | None = None
    reason: str | None = None
    tenant: str = DEFAULT_TENANT
    acl: tuple[str, ...] = (PUBLIC,)
    source_root: str | None = None
    title: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)
    name_hint: str | None = None
    parent: str | None = None
    children: tuple[str, ...] = ()
    metadata_keys: tuple[str, ...] | None = None
    warnings: tuple[str, ...] = ()
    source_meta: Mapping[str, Any] = field(default_factory=dict)
    error_type: str | None = None
    attempts: int = 0

    def pipeline_key(self) -> tuple[str, str, str, str]:
        return (self.content_hash, self.parser_version, self.chunker_version, self.embedding_model)

    def to_dict(self) -> dict[str, Any]:
        return {
            "document_id": self.document_id,
            "source": self.source,
            "content_hash": self.content_hash,
            "status": self.status.value,
            "parser_version": self.parser_version,
            "chunker_version": self.chunker_version,
            "embedding_model": self.embedding_model,
            "chunk_count": self.chunk_count,
            "stage": self.stage,
            "reason": self.reason,
            "tenant": self.tenant,
            "acl": list(self.acl),
            "title": self.title,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
