"""An incremental, thread-safe inverted index of learned sparse vectors, scored by dot product.

Each term has a postings list (document slots ``int32``, weights ``float32``). Upserts go to a
pending buffer merged into the per-term arrays by the first search after a change (copy-on-write:
searches already running keep their view); removed documents are tombstoned and the postings are
compacted once a quarter of the slots is dead. A query gathers the postings of its terms, scales them
by the query weights and sums per slot with one ``bincount``; the filter (``allowed``) restricts the
candidates *before* the top-``k`` cut. No per-document Python in the query path.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from ragwright.index._ranking import RankedIndex
from ragwright.models.sparse.base import SparseVector

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    I32 = npt.NDArray[np.int32]
    F32 = npt.NDArray[np.float32]

__all__ = ["SparseIndex"]

_COMPACT_FRACTION = 0.25


@dataclass(eq=False, frozen=True)
class _View:
    n_slots: int
    ids: list[str]
    slot_of: dict[str, int]
    postings: dict[int, tuple[I32, F32]]  # term id -> (slots, weights)
    dead: npt.NDArray[np.intp]


class SparseIndex(RankedIndex[SparseVector]):
    """Sparse vectors by chunk id; upsert, remove and search from any thread."""

    scale = "dot-product"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._ids: list[str] = []
        self._slot_of: dict[str, int] = {}
        self._docs: list[SparseVector | None] = []  # slot -> vector (None once removed)
        self._dead: list[int] = []
        self._pending: list[int] = []  # slots not yet in the postings
        self._postings: dict[int, tuple[I32, F32]] = {}
        self._view: _View | None = None

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._slot_of

    def ids(self) -> list[str]:
        """The live chunk ids."""
        with self._lock:
            return list(self._slot_of)

    def get(self, chunk_id: str) -> SparseVector | None:
        slot = self._slot_of.get(chunk_id)
        return None if slot is None else self._docs[slot]

    # -- mutations ------------------------------------------------------------------------------
    def upsert(self, items: Iterable[tuple[str, SparseVector]]) -> None:
        """Index ``(chunk_id, vector)`` pairs; an id already present is replaced."""
        with self._lock:
            for cid, vec in items:
                old = self._slot_of.get(cid)
                if old is not None:
                    self._kill(old)
                slot = len(self._ids)
                self._ids.append(cid)
                self._slot_of[cid] = slot
                self._docs.append(vec)
                self._pending.append(slot)
            self._view = None

    def remove(self, ids: Iterable[str]) -> None:
        """Remove chunks by id; unknown ids are ignored."""
        with self._lock:
            for cid in ids:
                slot = self._slot_of.get(cid)
                if slot is not None:
                    self._kill(slot)
            self._view = None

    def _kill(self, slot: int) -> None:
        del self._slot_of[self._ids[slot]]
        self._docs[slot] = None
        self._dead.append(slot)

    # -- consolidation --------------------------------------------------------------------------
    def _current(self) -> _View:
        view = self._view
        if view is not None:
            return view
        with self._lock:
            if self._view is None:
                if self._dead and len(self._dead) > _COMPACT_FRACTION * len(self._ids):
                    self._compact()
                else:
                    self._merge([s for s in self._pending if self._docs[s] is not None])
                self._pending = []
                import numpy as np

                self._view = _View(
                    len(self._ids), self._ids, self._slot_of, self._postings, np.array(self._dead, dtype=np.intp)
                )
            return self._view

    def _merge(self, slots: list[int]) -> None:
        import numpy as np

        postings = dict(self._postings)  # copy-on-write
        docs = [self._docs[s] for s in slots]
        vecs = [d for d in docs if d is not None and d.indices.size]
        if vecs:
            terms = np.concatenate([v.indices for v in vecs])
            weights = np.concatenate([v.values for v in vecs])
            owner = np.repeat(
                np.array([s for s, d in zip(slots, docs, strict=True) if d is not None and d.indices.size], np.int32),
                [v.indices.size for v in vecs],
            )
            order = np.argsort(terms, kind="stable")
            terms, weights, owner = terms[order], weights[order], owner[order]
            starts = np.flatnonzero(np.diff(terms, prepend=-1))
            ends = np.append(starts[1:], terms.size)
            for tid, a, z in zip(terms[starts].tolist(), starts.tolist(), ends.tolist(), strict=True):
                have = postings.get(tid)
                if have is None:
                    postings[tid] = (owner[a:z], weights[a:z])
                else:
                    postings[tid] = (np.concatenate((have[0], owner[a:z])), np.concatenate((have[1], weights[a:z])))
        self._postings = postings

    def _compact(self) -> None:
        """Renumber the live slots and rebuild every postings list (new objects; old views stay valid)."""
        live = [i for i, d in enumerate(self._docs) if d is not None]
        self._ids = [self._ids[i] for i in live]
        self._docs = [self._docs[i] for i in live]
        self._slot_of = {cid: i for i, cid in enumerate(self._ids)}
        self._dead = []
        self._postings = {}
        self._merge(list(range(len(self._ids))))

    # -- queries --------------------------------------------------------------------------------
    def _dense_scores(self, view: _View, query: SparseVector) -> npt.NDArray[np.float64] | None:
        import numpy as np

        lists = [
            (view.postings[t], w)
            for t, w in zip(query.indices.tolist(), query.values.tolist(), strict=True)
            if t in view.postings and w > 0
        ]
        if not lists:
            return None
        slots = np.concatenate([p[0] for p, _ in lists])
        weights = np.concatenate([p[1].astype(np.float64) * w for p, w in lists])
        return cast("npt.NDArray[np.float64]", np.bincount(slots, weights=weights, minlength=view.n_slots))
