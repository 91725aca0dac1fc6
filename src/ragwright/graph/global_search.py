"""Global search (Edge et al. 2024; Louvain communities: Blondel et al. 2008): map-reduce over the
community summaries the caller may fully see.

*Map*: every summary of the caller's tenant whose cited chunks the caller may all see (any one hidden
and the summary is skipped whole) is scored against the question (cosine of the question and the
summary's title, entities and sentences). *Reduce*: the best summaries become the themes of the answer,
each with its representative sentences quoted and cited (``[Source N]``, the chunk the sentence is
from). Extractive: no model writes anything, so every cited chunk contains the sentence citing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragwright.graph.tables import GraphTables
from ragwright.graph.visibility import Visibility
from ragwright.model.results import Citation, RagResponse, SearchResult

if TYPE_CHECKING:
    from ragwright.models.embedders.base import Embedder


@dataclass
class Theme:
    title: str
    score: float
    entities: list[str] = field(default_factory=list)
    sentences: list[tuple[str, str]] = field(default_factory=list)  # (text, chunk id)


def global_search(
    tables: GraphTables,
    view: Visibility,
    question: str,
    embedder: Embedder,
    *,
    level: int = 0,
    themes: int = 5,
) -> tuple[RagResponse, list[Theme]]:
    import numpy as np

    candidates: list[tuple[dict[str, Any], list[str]]] = []
    for lv, _cm, payload, chunk_ids in tables.summaries(view.identity.tenant):
        if lv != level:
            continue
        if len(view.chunks(chunk_ids)) == len(set(chunk_ids)):  # fully visible, or not at all
            candidates.append((payload, chunk_ids))
    if not candidates:
        return RagResponse("", (), declined=True, mode="graph-global", decline_reason="no_sources"), []
    texts = [
        f"{p['title']}. "
        + " ".join(e["name"] for e in p["entities"])
        + ". "
        + " ".join(s["text"] for s in p["sentences"])
        for p, _ in candidates
    ]
    q = np.asarray(embedder.embed_query(question), dtype=np.float32)
    m = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
    m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)
    scores = m @ (q / max(float(np.linalg.norm(q)), 1e-9))
    order = sorted(range(len(candidates)), key=lambda i: (-float(scores[i]), i))[:themes]
    chosen: list[Theme] = []
    sources: list[SearchResult] = []
    numbers: dict[str, int] = {}
    citations: list[Citation] = []
    lines = ["Main themes:"]
    for i in order:
        payload, _ids = candidates[i]
        theme = Theme(payload["title"], float(scores[i]), [e["name"] for e in payload["entities"]])
        quoted = []
        for s in payload["sentences"][:2]:
            chunk = view.chunks([s["chunk_id"]]).get(s["chunk_id"])
            if chunk is None:
                continue
            if chunk.id not in numbers:
                numbers[chunk.id] = len(numbers) + 1
                sources.append(SearchResult(chunk, float(scores[i]), fusion="graph-global"))
            n = numbers[chunk.id]
            citations.append(Citation(n, chunk.id, chunk.document_id, s["text"]))
            quoted.append(f"{s['text']} [Source {n}]")
            theme.sentences.append((s["text"], chunk.id))
        chosen.append(theme)
        lines.append(f"- {theme.title}: " + " ".join(quoted))
    answer = "\n".join(lines)
    return RagResponse(answer, tuple(sources), tuple(citations), mode="graph-global"), chosen
