"""A chunker with the optional stages that follow chunking: contextual enrichment (:mod:`.enrich`), late
chunking (:mod:`.late`: ingestion asks :attr:`EnrichedChunker.late` for the chunks' vectors) and
propositions (:mod:`.propositions`: ingestion asks :attr:`EnrichedChunker.propositions` to split a
document's finished chunks — metadata and access set — into searched propositions and stored sources).

:class:`EnrichedChunker` wraps a base chunker (structural, recursive …), keeps its interface (every
other attribute is the inner chunker's) and adds each stage's signature to ``version`` and
``fingerprint``, so the registry re-processes exactly the documents a changed setting affects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragwright.model.chunk import Chunk
from ragwright.model.document import Document

if TYPE_CHECKING:
    from ragwright.chunk.enrich import ContextEnricher
    from ragwright.chunk.late import LateChunkEmbedder
    from ragwright.chunk.propositions import PropositionSplitter
    from ragwright.chunk.structural import BaseChunker
    from ragwright.models.llms.base import ChatLedger


class EnrichedChunker:
    """*inner*'s chunks, then each configured stage over them."""

    def __init__(
        self,
        inner: BaseChunker,
        *,
        enricher: ContextEnricher | None = None,
        late: LateChunkEmbedder | None = None,
        propositions: PropositionSplitter | None = None,
        ledger: ChatLedger | None = None,
    ) -> None:
        self.inner = inner
        self.enricher = enricher
        self.late = late
        self.propositions = propositions
        self._ledger = ledger

    def _stages(self) -> str:
        stages = [s.signature for s in (self.enricher, self.propositions, self.late) if s is not None]
        return "".join(f"+{s}" for s in stages)

    @property
    def version(self) -> str:
        return f"{self.inner.version}{self._stages()}"

    @property
    def fingerprint(self) -> str:
        return f"{self.inner.fingerprint}{self._stages()}"

    @property
    def ledger(self) -> ChatLedger | None:
        """The chat calls the stages made (``None`` when no stage uses a model)."""
        uses_llm = self.propositions is not None or (self.enricher is not None and self.enricher.mode == "llm")
        if not uses_llm:
            return None
        if self._ledger is not None:
            return self._ledger
        return self.propositions.ledger if self.propositions is not None else self.enricher.ledger  # type: ignore[union-attr]

    def chunk(self, document: Document) -> list[Chunk]:
        chunks = self.inner.chunk(document)
        if self.enricher is not None:
            chunks = self.enricher.enrich(document, chunks)
        return chunks

    def __getattr__(self, name: str) -> Any:  # options, budget, window … of the inner chunker
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)
