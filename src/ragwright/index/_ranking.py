"""The top-``k`` cut shared by the slot-based indexes (BM25 and learned sparse).

Both keep a frozen view with a slot per document: ``ids`` (slot -> chunk id), ``slot_of`` (live chunk
id -> slot), ``n_slots`` and the tombstoned ``dead`` slots. Given one dense score per slot, these
functions apply the caller's ``allowed`` filter *before* the cut and rank the survivors.
"""

from __future__ import annotations

import math
from collections.abc import Collection, KeysView, Mapping, Sequence, Set
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ragwright.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["RankedIndex", "SlotView", "allowed_slots", "check_search_args", "live_scores", "top_k"]


class SlotView(Protocol):
    """What the ranking needs from an index's frozen view."""

    @property
    def n_slots(self) -> int: ...
    @property
    def ids(self) -> Sequence[str]: ...
    @property
    def slot_of(self) -> Mapping[str, int]: ...
    @property
    def dead(self) -> npt.NDArray[np.intp]: ...


def check_search_args(k: int, min_score: float, scale: str) -> None:
    """Refuse a *k* that is not an integer >= 0 and a *min_score* that is not a number (NaN included)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ConfigError.invalid("k", k, "an integer >= 0")
    if not (isinstance(min_score, int | float) and not math.isnan(min_score)):
        raise ConfigError.invalid("min_score", min_score, f"a number on the {scale} scale (0 = no floor)")


def allowed_slots(view: SlotView, allowed: Collection[str]) -> npt.NDArray[np.intp]:
    """Slots of the allowed ids that are live in *view*.

    ``view.slot_of`` only ever maps live ids; ids added, replaced or removed after the view froze
    map to slots past ``view.n_slots`` or to nothing, so they drop out rather than leak.
    """
    import numpy as np

    get = view.slot_of.get
    slots = np.fromiter((get(cid, -1) for cid in allowed), dtype=np.intp, count=len(allowed))
    slots = slots[(slots >= 0) & (slots < view.n_slots)]
    if not isinstance(allowed, Set | KeysView):  # a list may name an id twice
        slots = np.unique(slots)
    return slots


def top_k(
    view: SlotView,
    scores: npt.NDArray[np.float64],
    k: int,
    allowed: Collection[str] | None,
    min_score: float,
) -> list[tuple[str, float]]:
    """The best ``k`` ``(chunk_id, score)`` of *scores* (one per slot), best first, ties by id.

    Only allowed, live slots scoring above 0 (and at least *min_score* when it is positive) count.
    Tombstoned slots of *scores* are zeroed in place when *allowed* is ``None``.
    """
    import numpy as np

    cand: npt.NDArray[np.intp] | None
    if allowed is None:
        if view.dead.size:
            scores[view.dead] = 0.0
        cand = None
        sub = scores
    else:
        cand = allowed_slots(view, allowed)
        sub = scores[cand]
    bound = _sampled_bound(sub, k)
    if bound > 0.0 and bound >= min_score:  # only scores at or above a known lower bound of the k-th best
        hit = np.flatnonzero(sub >= bound)
    else:
        hit = np.flatnonzero(sub > 0.0) if min_score <= 0 else np.flatnonzero(sub >= min_score)
    if hit.size > k:
        hit_scores = sub[hit]
        kth = np.partition(hit_scores, hit.size - k)[hit.size - k]
        hit = hit[hit_scores >= kth]  # keeps every tie at the cut, ordered by id below
    hit_slots = hit if cand is None else cand[hit]
    ids = view.ids
    ranked = sorted(
        zip(sub[hit].tolist(), [ids[s] for s in hit_slots.tolist()], strict=True),
        key=lambda pair: (-pair[0], pair[1]),
    )
    return [(cid, score) for score, cid in ranked[:k]]


#: Past this many scores, the top-k cut starts from a strided sample of this many (see _sampled_bound).
_SAMPLE = 32_768


def _sampled_bound(scores: npt.NDArray[np.float64], k: int) -> float:
    """A lower bound of the *k*-th best of *scores* (0.0 when none is cheap to get): the *k*-th best of a
    strided sample, itself *k* actual scores. Every score in the true top *k* (ties included) is at or
    above it, so the cut runs on the few scores that are, not on every non-zero one (at 1M chunks a
    query's non-zero scores number ~500k: a partition over them took ~5 ms, the sample ~0.2 ms)."""
    import numpy as np

    if scores.size <= 4 * _SAMPLE or k <= 0 or k > _SAMPLE // 16:
        return 0.0
    sample = scores[:: scores.size // _SAMPLE]
    return float(np.partition(sample, sample.size - k)[sample.size - k])


def live_scores(view: SlotView, scores: npt.NDArray[np.float64]) -> dict[str, float]:
    """Every live slot's non-zero score by chunk id (zeroes the tombstoned slots in place)."""
    import numpy as np

    if view.dead.size:
        scores[view.dead] = 0.0
    hit = np.flatnonzero(scores > 0.0)
    return {view.ids[s]: v for s, v in zip(hit.tolist(), scores[hit].tolist(), strict=True)}


Q = TypeVar("Q")


class RankedIndex(Generic[Q]):
    """``search`` and ``scores`` over a frozen view, for indexes that score every slot at once.

    A subclass provides ``_current()`` (its frozen view) and ``_dense_scores(view, query)`` (one score
    per slot, or ``None`` when no query term is indexed) and names its score scale in ``scale``.
    """

    scale = "score"

    def _current(self) -> Any:  # pragma: no cover - provided by the subclass
        raise NotImplementedError

    def _dense_scores(self, view: Any, query: Q) -> npt.NDArray[np.float64] | None:  # pragma: no cover
        raise NotImplementedError

    def search(
        self, query: Q, k: int, *, allowed: Collection[str] | None = None, min_score: float = 0.0
    ) -> list[tuple[str, float]]:
        """The best *k* chunks for *query* as ``(chunk_id, score)``, best first (ties by chunk id).

        *allowed* (the caller's security and metadata filter) restricts the candidates *before* the
        cut: the result is the best *k* among the allowed chunks, never padded. Chunks scoring 0 are
        never returned, nor any below *min_score* (on the index's own scale).
        """
        check_search_args(k, min_score, self.scale)
        if k == 0 or (allowed is not None and not allowed):
            return []
        view = self._current()
        scores = self._dense_scores(view, query)
        if scores is None:
            return []
        return top_k(view, scores, k, allowed, min_score)

    def scores(self, query: Q) -> dict[str, float]:
        """Every live chunk with a non-zero score for *query* (for tests and explanations)."""
        view = self._current()
        scores = self._dense_scores(view, query)
        if scores is None:
            return {}
        return live_scores(view, scores)
