"""Bytes for the distributed layer: vectors, retrieval outcomes (results and decisions) and answers.

JSON throughout (never pickle: a shared cache must not be a way to run code in another process).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ragwright.model.chunk import Chunk
from ragwright.model.outcome import RetrievalOutcome
from ragwright.model.results import ArmHit, Citation, RagResponse, SearchResult

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def chunk_to_dict(c: Chunk) -> dict[str, Any]:
    return {
        "id": c.id,
        "document_id": c.document_id,
        "text": c.text,
        "position": c.position,
        "section_path": list(c.section_path),
        "page": c.page,
        "page_end": c.page_end,
        "parent_id": c.parent_id,
        "prev_id": c.prev_id,
        "next_id": c.next_id,
        "metadata": c.metadata,
        "tenant": c.tenant,
        "acl": list(c.acl),
        "embed_text": c.embed_text,
    }


def chunk_from_dict(d: dict[str, Any]) -> Chunk:
    return Chunk(
        **{**d, "section_path": tuple(d["section_path"]), "acl": tuple(d["acl"])},
    )


def result_to_dict(r: SearchResult) -> dict[str, Any]:
    return {
        "chunk": chunk_to_dict(r.chunk),
        "score": r.score,
        "arms": {name: [hit.rank, hit.score] for name, hit in r.arms.items()},
        "fusion": r.fusion,
        "compressed_text": r.compressed_text,
    }


def result_from_dict(d: dict[str, Any]) -> SearchResult:
    return SearchResult(
        chunk=chunk_from_dict(d["chunk"]),
        score=float(d["score"]),
        arms={name: ArmHit(int(rank), float(score)) for name, (rank, score) in d["arms"].items()},
        fusion=d.get("fusion"),
        compressed_text=d.get("compressed_text"),
    )


class ResultsCodec:
    """A :class:`RetrievalOutcome` (results + decisions, under the decisions' flat names) as JSON."""

    def encode(self, value: RetrievalOutcome | Iterable[SearchResult]) -> bytes:
        """*value*: an outcome, or a list carrying one (``Rag.search``'s results)."""
        outcome = value if isinstance(value, RetrievalOutcome) else RetrievalOutcome.of(value)
        payload = {"results": [result_to_dict(r) for r in outcome.results], "extensions": outcome.extensions()}
        return json.dumps(payload, default=str).encode("utf-8")

    def decode(self, data: bytes) -> RetrievalOutcome:
        payload = json.loads(data)
        results = (result_from_dict(d) for d in payload["results"])
        return RetrievalOutcome.from_extensions(results, payload["extensions"])


class VectorCodec:
    """A float32 vector as raw bytes."""

    def encode(self, value: npt.NDArray[np.float32]) -> bytes:
        import numpy as np

        return np.asarray(value, dtype=np.float32).tobytes()

    def decode(self, data: bytes) -> npt.NDArray[np.float32]:
        import numpy as np

        return np.frombuffer(data, dtype=np.float32).copy()


class ScoresCodec:
    """A list of floats (reranker scores) as JSON."""

    def encode(self, value: list[float]) -> bytes:
        return json.dumps(value).encode("utf-8")

    def decode(self, data: bytes) -> list[float]:
        return [float(v) for v in json.loads(data)]


class AnswerCodec:
    """A :class:`RagResponse` as JSON (sources and citations in full; tuple fields kept tuples)."""

    def encode(self, value: RagResponse) -> bytes:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if f.name == "sources":
                v = [result_to_dict(r) for r in v]
            elif f.name == "citations":
                v = [dataclasses.asdict(c) for c in v]
            elif isinstance(v, tuple):
                v = list(v)
            out[f.name] = v
        return json.dumps(out, default=str).encode("utf-8")

    def decode(self, data: bytes) -> RagResponse:
        raw = json.loads(data)
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(RagResponse):
            if f.name not in raw:
                continue
            v = raw[f.name]
            if f.name == "sources":
                v = tuple(result_from_dict(d) for d in v)
            elif f.name == "citations":
                v = tuple(Citation(**d) for d in v)
            elif isinstance(v, list) and isinstance(f.default, tuple):
                v = tuple(v)
            kwargs[f.name] = v
        return RagResponse(**kwargs)
