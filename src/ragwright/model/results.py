"""What retrieval and answering return. A result carries its evidence (per-arm ranks and scores)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragwright.model.chunk import Chunk


@dataclass(frozen=True, slots=True)
class ArmHit:
    """Where one search arm ranked a chunk (1-based) and the score it gave, on the arm's own scale."""

    rank: int
    score: float


@dataclass(frozen=True, slots=True)
class SearchResult:
    """A retrieved chunk with its final score and the evidence behind it.

    ``score`` is a cosine similarity for pure dense search, and an RRF value (ordinal) once results
    are fused. ``arms`` maps an arm name (``dense``, ``bm25``, ``sparse``) to its :class:`ArmHit`.
    ``source`` names the federated source the chunk came from (``None`` outside a federated search:
    :mod:`ragwright.federation`), since chunk ids are unique within a store, not across stores.
    """

    chunk: Chunk
    score: float
    arms: dict[str, ArmHit] = field(default_factory=dict)
    fusion: str | None = None
    compressed_text: str | None = None
    source: str | None = None

    @property
    def chunk_id(self) -> str:
        return self.chunk.id

    @property
    def document_id(self) -> str:
        return self.chunk.document_id

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON shape of a search result (the CLI's ``--json`` contract); a federated result
        also has ``source``."""
        out = {
            "chunk_id": self.chunk.id,
            "document_id": self.chunk.document_id,
            "score": self.score,
            "text": self.chunk.text,
            "section_path": list(self.chunk.section_path),
            "page": self.chunk.page,
            "scanned": self.chunk.metadata.get("scanned") is True,  # text read by OCR (ingest.scanned)
            "arms": {name: {"rank": hit.rank, "score": hit.score} for name, hit in self.arms.items()},
        }
        if self.source is not None:
            out["source"] = self.source
        return out


@dataclass(frozen=True, slots=True)
class Citation:
    """A ``[Source N]`` reference in an answer, resolved to the chunk it names."""

    source: int
    chunk_id: str
    document_id: str
    quote: str | None = None

    @property
    def source_number(self) -> int:
        """The ``N`` of ``[Source N]`` (1-based position in ``RagResponse.sources``)."""
        return self.source

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "chunk_id": self.chunk_id,
            "document_id": self.document_id,
            "quote": self.quote,
        }


@dataclass(frozen=True, slots=True)
class RagResponse:
    """An answer with the sources it was given and the citations it makes.

    ``declined`` is a first-class outcome: the sources did not support an answer, and
    ``decline_reason`` says why (``no_sources``, ``below_relevance_threshold``,
    ``no_supporting_sentence``, ``model_insufficient_context``, ``unsupported_after_verification``).
    ``invalid_citations`` lists the ``[Source N]`` numbers that named no given source; ``uncited`` flags
    an answer that makes claims without one valid citation. ``verified`` is the groundedness verdict
    (``None`` when verification was off or could not run). ``usage`` counts the model calls made for
    this answer and the tokens the backend reported (streamed replies report none); ``timings`` are
    seconds per stage; ``retrieval_path`` is the path retrieval took (e.g. ``dense+bm25 → rrf → rerank``);
    ``answerability`` is the answerability model's probability that the evidence answers the question
    (``None`` when it did not run). Declines by that model have ``decline_reason`` ``answerability_<signal>``.
    ``route`` / ``route_reason``: the route a routed ask took (``none``, ``hybrid``, ``hierarchical``,
    ``graph_local``, ``graph_global``, ``agentic``) and why, fallbacks included (``None`` when not routed).
    ``trajectory``: an agentic answer's steps (tool, arguments, result ids, tokens), empty otherwise.
    """

    answer: str
    sources: tuple[SearchResult, ...]
    citations: tuple[Citation, ...] = ()
    declined: bool = False
    mode: str = "extractive"
    decline_reason: str | None = None
    invalid_citations: tuple[int, ...] = ()
    uncited: bool = False
    verified: bool | None = None
    model: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    retrieval_path: str | None = None
    answerability: float | None = None
    route: str | None = None
    route_reason: str | None = None
    trajectory: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "answer": self.answer,
            "declined": self.declined,
            "citations": [c.to_dict() for c in self.citations],
            "sources": [
                {"source": i, **r.to_dict(), "compressed_text": r.compressed_text}
                for i, r in enumerate(self.sources, start=1)
            ],
            "mode": self.mode,
            "decline_reason": self.decline_reason,
            "invalid_citations": list(self.invalid_citations),
            "uncited": self.uncited,
            "verified": self.verified,
            "model": self.model,
            "usage": dict(self.usage),
            "timings": dict(self.timings),
            "retrieval_path": self.retrieval_path,
            "answerability": self.answerability,
        }
        if self.route is not None:  # a routed ask (ragwright.rag_route)
            out["route"], out["route_reason"] = self.route, self.route_reason
        if self.trajectory:  # an agentic ask (ragwright.rag_agent): each step's tool, arguments, result ids, tokens
            out["trajectory"] = [dict(step) for step in self.trajectory]
        return out
