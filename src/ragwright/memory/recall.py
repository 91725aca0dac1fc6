"""Recall: the remembered items of one scope most similar to a query, above the minimum score.

``PersistentMemoryOptions.min_score`` is a floor on cosine similarity. A backend whose scores are on
an opaque ranking scale (``ScoreScale.OPAQUE_RANKING``, e.g. fused RRF sums) skips the threshold and
takes its results in rank order instead (a similarity-tuned cut-off would filter an ordinal score
arbitrarily); that is logged (``memory_min_score_skipped``, debug). What is recalled
is then cut, lowest-ranked first and whole items only, to ``max_recall_tokens``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ragwright.chunk.tokens import count_tokens
from ragwright.memory.options import PersistentMemoryOptions
from ragwright.memory.store import MemoryBackend, MemoryHit, MemoryScope
from ragwright.models.embedders.base import Embedder
from ragwright.stores.base import ScoreScale

log = logging.getLogger(__name__)

#: How the recalled items are introduced to the chat model.
RECALL_PREFIX = "Remembered from earlier conversations with this user (may be out of date):"


def select(hits: Sequence[MemoryHit], options: PersistentMemoryOptions, scale: ScoreScale) -> list[MemoryHit]:
    """*hits* (best first) kept by the minimum score — or, on an opaque scale, by rank alone — then cut
    to ``top_k`` and to ``max_recall_tokens``."""
    if scale == ScoreScale.OPAQUE_RANKING:
        chosen = list(hits[: options.top_k])
    else:
        chosen = [h for h in hits if h.score >= options.min_score][: options.top_k]
    out, used = [], 0
    for hit in chosen:
        cost = count_tokens(hit.item.text) + 3  # "- " and the newline
        if used + cost > options.max_recall_tokens:
            break
        out.append(hit)
        used += cost
    return out


def recall(
    backend: MemoryBackend, embedder: Embedder, query: str, scope: MemoryScope, options: PersistentMemoryOptions
) -> list[MemoryHit]:
    """The items of *scope* to recall for *query* (see the module docstring)."""
    scale = backend.score_scale
    if scale == ScoreScale.OPAQUE_RANKING and options.min_score != 0.0:
        log.debug(
            "memory_min_score_skipped: %s ranks on an opaque scale; memory.persistent.min_score=%g is not applied, "
            "results are taken in rank order",
            type(backend).__name__,
            options.min_score,
        )
    vector = embedder.embed_query(query)
    hits = backend.search(scope, vector, options.top_k, embedder.name)
    return select(hits, options, scale)


def recall_text(hits: Sequence[MemoryHit]) -> str | None:
    """The recalled items as one message's text (``None`` for none)."""
    if not hits:
        return None
    return RECALL_PREFIX + "\n" + "\n".join(f"- {' '.join(h.item.text.split())}" for h in hits)
