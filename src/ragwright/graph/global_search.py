"""Global search (Edge et al. 2024; Louvain communities: Blondel et al. 2008): map-reduce over the
community summaries the caller may fully see.

*Map*: every summary of the caller's tenant whose cited chunks the caller may all see (any one hidden
and the summary is skipped whole) is scored against the question: the cosine of the question and the
summary (its title, entities and sentences) times how much of the corpus the community covers,
``1 + ln(documents) + ln(chunks) / 4`` (its cited chunks and their distinct documents), halved when
the summary quotes no prose. *Reduce*: the best summaries become the themes of the answer, at most
one per document (the document of a theme's first sentence) while others remain, then at most two, so
a corpus-wide question draws on several documents; each theme's representative sentences are quoted
and cited (``[Source N]``, the chunk the sentence is from; the citation quotes the chunk's own text,
the answer's line the same sentence with its whitespace collapsed). Extractive: no model writes anything, so
every cited chunk contains the sentence citing it.

A question embeds only itself: a summary's embedding is the one written with it
(:func:`~ragwright.graph.communities.build_communities` given the embedder) when the same model made it,
else computed once per process and kept by the summary's text and the model's name (a rebuilt summary
with new text is embedded again).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ragwright.graph.communities import summary_text
from ragwright.graph.tables import GraphTables
from ragwright.graph.visibility import Visibility
from ragwright.model.results import Citation, RagResponse, SearchResult

if TYPE_CHECKING:
    import numpy.typing as npt

    from ragwright.models.embedders.base import Embedder

#: Themes drawn from one document at most (a first pass allows one each).
PER_DOCUMENT: Final = 2
#: Summary embeddings kept in this process, by (model name, summary text); the oldest go beyond this.
CACHE_SIZE: Final = 8192
_VECTORS: dict[tuple[str, str], Any] = {}


@dataclass
class Theme:
    title: str
    score: float
    entities: list[str] = field(default_factory=list)
    sentences: list[tuple[str, str]] = field(default_factory=list)  # (text, chunk id)


def coverage(payload: dict[str, Any]) -> float:
    """How much of the corpus a summary's community covers: ``1 + ln(documents) + ln(chunks) / 4``
    (1 for one chunk of one document), halved when none of its sentences is prose."""
    documents = max(1, int(payload.get("documents", 1)))
    chunks = max(1, int(payload.get("chunks", 1)))
    weight = 1.0 + math.log(documents) + math.log(chunks) / 4
    return weight if payload.get("prose", True) else weight / 2


def _spread(order: list[int], homes: list[str], themes: int) -> list[int]:
    """The first *themes* of *order* (best first), one per home document while others remain, then up to
    :data:`PER_DOCUMENT`; kept in score order."""
    chosen: list[int] = []
    for cap in (1, PER_DOCUMENT):
        for i in order:
            if len(chosen) >= themes:
                break
            if i not in chosen and sum(homes[j] == homes[i] for j in chosen) < cap:
                chosen.append(i)
    return sorted(chosen, key=order.index)


def summary_vectors(payloads: list[dict[str, Any]], embedder: Embedder) -> npt.NDArray[Any]:
    """The summaries' embeddings, unit length: written with the summary by the same model, or kept from an
    earlier question, or (only those neither) embedded now in one batch."""
    import numpy as np

    name = str(embedder.name)
    texts = [summary_text(p) for p in payloads]
    rows: list[Any] = []
    missing: list[int] = []
    for i, (p, text) in enumerate(zip(payloads, texts, strict=True)):
        stored = p.get("embedding") if p.get("embedder") == name else None
        row = np.asarray(stored, dtype=np.float32) if stored else _VECTORS.get((name, text))
        rows.append(row)
        if row is None:
            missing.append(i)
    if missing:
        for i, vector in zip(missing, embedder.embed_documents([texts[i] for i in missing]), strict=True):
            rows[i] = np.asarray(vector, dtype=np.float32)
            _VECTORS[(name, texts[i])] = rows[i]
        while len(_VECTORS) > CACHE_SIZE:
            del _VECTORS[next(iter(_VECTORS))]
    m = np.vstack(rows)
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)  # type: ignore[no-any-return]


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
    m = summary_vectors([p for p, _ in candidates], embedder)
    q = np.asarray(embedder.embed_query(question), dtype=np.float32)
    cosines = m @ (q / max(float(np.linalg.norm(q)), 1e-9))
    scores = [float(cosines[i]) * coverage(p) for i, (p, _) in enumerate(candidates)]
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    homes = [str(p["sentences"][0].get("document_id", p["sentences"][0]["chunk_id"])) for p, _ in candidates]
    chosen: list[Theme] = []
    sources: list[SearchResult] = []
    numbers: dict[str, int] = {}
    citations: list[Citation] = []
    lines = ["Main themes:"]
    for i in _spread(order, homes, themes):
        payload, _ids = candidates[i]
        theme = Theme(payload["title"], scores[i], [e["name"] for e in payload["entities"]])
        quoted = []
        for s in payload["sentences"][:2]:
            chunk = view.chunks([s["chunk_id"]]).get(s["chunk_id"])
            if chunk is None:
                continue
            if chunk.id not in numbers:
                numbers[chunk.id] = len(numbers) + 1
                sources.append(SearchResult(chunk, scores[i], fusion="graph-global"))
            n = numbers[chunk.id]
            citations.append(Citation(n, chunk.id, chunk.document_id, s["text"]))
            quoted.append(f"{' '.join(s['text'].split())} [Source {n}]")  # one line; the quote is the chunk's
            theme.sentences.append((s["text"], chunk.id))
        chosen.append(theme)
        lines.append(f"- {theme.title}: " + " ".join(quoted))
    answer = "\n".join(lines)
    return RagResponse(answer, tuple(sources), tuple(citations), mode="graph-global"), chosen
