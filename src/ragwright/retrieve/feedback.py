"""Pseudo-relevance feedback: the query learns from its own best results.

:func:`rm3_query` builds the keyword arm's second query: the original terms plus the terms most likely
in the feedback results (RM3: Abdul-Jaleel et al. 2004, "UMass at TREC 2004", over the relevance model
of Lavrenko & Croft 2001), analysed exactly as the index analyses text. :func:`rocchio` moves the
dense query vector towards the feedback results' vectors (Rocchio 1971). Both are pure functions;
:class:`~ragwright.options.FeedbackOptions` says when they run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ragwright._validate import OptionsBase, check_bool, check_float, check_int
from ragwright.errors import ConfigError
from ragwright.index.analyzers import Analyzer, LanguageAwareAnalyzer
from ragwright.model.chunk import Chunk

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

__all__ = ["rm3_query", "rocchio"]


def _terms(analyzer: Analyzer, chunk: Chunk) -> list[str]:
    if isinstance(analyzer, LanguageAwareAnalyzer):
        language = chunk.metadata.get("language")
        return analyzer.index_terms(chunk.text_for_embedding, language if isinstance(language, str) else None)
    return analyzer(chunk.text_for_embedding)


def rm3_query(
    analyzer: Analyzer, query: str, feedback: Sequence[Chunk], *, terms: int, weight: float
) -> dict[str, float]:
    """Weighted keyword terms: ``(1 - weight) · c(t, q) + weight · |q| · P(t | R)``, where ``P(t | R)`` is
    the feedback chunks' mean term distribution cut to its *terms* most likely terms and renormalised."""
    if isinstance(analyzer, LanguageAwareAnalyzer):
        tags = (c.metadata.get("language") for c in feedback)
        original = Counter(analyzer.query_terms(query, Counter(t for t in tags if isinstance(t, str))))
    else:
        original = Counter(analyzer(query))
    relevance: dict[str, float] = {}
    docs = [t for t in (_terms(analyzer, c) for c in feedback) if t]
    for doc in docs:
        for term, count in Counter(doc).items():
            relevance[term] = relevance.get(term, 0.0) + count / len(doc) / len(docs)
    best = sorted(relevance.items(), key=lambda kv: (-kv[1], kv[0]))[:terms]
    mass = sum(p for _, p in best)
    length = sum(original.values()) or 1
    out = {term: (1.0 - weight) * count for term, count in original.items()}
    for term, p in best:
        out[term] = out.get(term, 0.0) + weight * length * p / mass
    return out


def rocchio(query_vector: Vector, feedback: Sequence[Vector], beta: float) -> Vector:
    """``q + beta · mean(feedback)``, unit length."""
    import numpy as np

    q = np.asarray(query_vector, dtype=np.float32)
    if not feedback:
        return q
    moved = q / (float(np.linalg.norm(q)) or 1.0) + np.float32(beta) * np.mean(np.stack(feedback), axis=0)
    norm = float(np.linalg.norm(moved))
    return (moved / norm if norm > 0 else q).astype(np.float32)


#: Where Rocchio's moved query vector searches: ``"candidates"`` re-scores the first pass's candidates
#: (every arm's hits, exact cosines from the stored vectors, no second index search), ``"index"`` runs a
#: second dense search over the whole index.
ROCCHIO_SCOPES: Final = ("candidates", "index")


@dataclass(frozen=True)
class FeedbackOptions(OptionsBase):
    """Pseudo-relevance feedback: retrieve once, learn from the best results, retrieve again.

    ``rm3``: the keyword arm's query gains the ``terms`` most likely terms of the top ``documents``
    results (RM3: Abdul-Jaleel et al. 2004), weighted ``rm3_weight`` against the original terms.
    ``rocchio``: the dense arm's query vector moves towards the mean of those results' vectors by
    ``rocchio_beta`` (Rocchio 1971). The arms that changed run again and everything is fused as before.
    ``FeedbackOptions()`` is Rocchio alone, which hybrid search uses by default (:data:`PRESETS`):
    chosen leave-one-collection-out on five collections (for every held-out collection, the other four
    chose it), +0.006 nDCG@10 over all their queries (paired 95 % CI [+0.001, +0.011]) for one more dense
    search. RM3 (``rm3=True``) is an option: it helps Cranfield and hurts SciFact and NPL.
    ``rocchio_scope``: ``"candidates"`` (the default) re-scores every arm's first-pass candidates with the
    moved vector (exact cosines from the stored vectors) instead of searching the index again
    (``"index"``): the same nDCG@10 on the five collections at a fraction of the cost
    (``benchmarks/RESULTS.md``, "Rocchio feedback on the first pass's candidates").
    """

    rm3: bool = False
    rocchio: bool = True
    documents: int = 3
    terms: int = 10
    rm3_weight: float = 0.3
    rocchio_beta: float = 0.5
    rocchio_scope: str = "candidates"

    def __post_init__(self) -> None:
        check_bool("rm3", self.rm3)
        check_bool("rocchio", self.rocchio)
        if not (self.rm3 or self.rocchio):
            raise ConfigError("FeedbackOptions needs rm3 or rocchio (or both); use feedback=None for none")
        check_int("documents", self.documents, minimum=1)
        check_int("terms", self.terms, minimum=1)
        check_float("rm3_weight", self.rm3_weight, lo=0.0, hi=1.0)
        check_float("rocchio_beta", self.rocchio_beta, lo=0.0)
        if self.rocchio_scope not in ROCCHIO_SCOPES:
            raise ConfigError.invalid("rocchio_scope", self.rocchio_scope, " or ".join(map(repr, ROCCHIO_SCOPES)))
