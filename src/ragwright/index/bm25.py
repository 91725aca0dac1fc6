"""An incremental, thread-safe, in-memory BM25 index.

Scoring is BM25 (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and Beyond")
in Lucene's variant (what ``bm25s`` calls ``method="lucene"``)::

    idf(t)     = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    score(q,d) = Σ_{t in q} idf(t) · tf(t,d) / (tf(t,d) + k1 · (1 - b + b · |d| / avgdl))

with ``N``, ``df`` and ``avgdl`` the statistics of the *current* collection, so an index built
incrementally scores exactly like one rebuilt from its final contents. (Lucene ≥ 8 and bm25s leave
out the constant ``(k1 + 1)`` factor of the textbook formula; rankings are the same either way.)
A query term that occurs twice counts twice, as in bm25s. A query may also be given already analysed,
as a mapping of terms to weights (what pseudo-relevance feedback builds): each term then counts with its
weight. A language-aware analyzer (the default, ``"auto"``) analyses each indexed text in its own
language (given with the text, or detected) and a query for the languages the index holds.

Layout. Each term has a postings list: document slots (``int32``) and term frequencies (``uint16``;
``float32`` for postings merged together with a document that holds a term more than 65,535 times).
Upserts append to a pending buffer; the first search after a change merges it into the per-term numpy
arrays (copy-on-write, so searches already running keep a consistent view), recomputes the per-slot
length norms, and freezes a :class:`_View`. Removed documents are tombstoned (masked at query time)
and the postings are compacted once a quarter of the slots is dead. A term's document frequency is
its postings' length less their tombstoned slots, counted per view when first needed: no per-document
list of terms is kept (on the 1M-chunk SciFact store that list alone took ~340 MB).
A query gathers each term's postings, adds its ``idf · tf / (tf + norm)`` contributions (cached per
view, least recently used dropped past :data:`CONTRIBUTION_CACHE_BYTES`) into a dense score array,
masks tombstones or restricts to the ``allowed`` slots, and picks the top ``k``
with ``np.partition``: no per-document Python in the query path.
"""

from __future__ import annotations

import math
import threading
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from typing import TYPE_CHECKING, TypeAlias, cast

from ragwright.errors import ConfigError
from ragwright.index._ranking import RankedIndex
from ragwright.index.analyzers import Analyzer, LanguageAwareAnalyzer, get_analyzer
from ragwright.index.language import detect_language

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    I32 = npt.NDArray[np.int32]
    F32 = npt.NDArray[np.float32]
    F64 = npt.NDArray[np.float64]
    TF = npt.NDArray[np.uint16] | npt.NDArray[np.float32]  # term frequencies (uint16 unless too large)

__all__ = ["Bm25Index", "KeywordQuery"]

_COMPACT_FRACTION = 0.25  # compact once this share of the slots is tombstoned
_EAGER_POSTINGS = 4_000_000  # up to this many postings, a new view computes every contribution at once
_TF_MAX = 65_535  # term frequencies up to this are kept as uint16
#: Upserts are merged into the postings once this many postings are pending, so that a bulk build never
#: holds every pending posting and the sort that merges them at once (at 1M chunks, ~59M postings: ~1.3 GB
#: of transient arrays in one merge; ~0.2 GB this way, for a few seconds more of copying).
_MERGE_POSTINGS = 8_000_000
#: The contributions a view keeps (least recently used terms go first): all of them up to ~30M postings,
#: the terms queries use beyond (at 1M chunks every term's would take ~240 MB).
CONTRIBUTION_CACHE_BYTES = 128 << 20


def tf_array(counts: npt.NDArray[np.int64] | npt.NDArray[np.uint32]) -> TF:
    """Term frequencies as stored: ``uint16`` when they fit, else ``float32`` (both exact for counts)."""
    import numpy as np

    if counts.size and int(counts.max()) > _TF_MAX:
        return counts.astype(np.float32)
    return counts.astype(np.uint16)


@dataclass(eq=False)
class _View:
    """A frozen, consistent picture of the index that searches read without the lock."""

    n_slots: int
    ids: list[str]  # slot -> chunk id (append-only within one compaction epoch)
    slot_of: dict[str, int]  # live chunk id -> slot (later upserts add to it: see _ranking.allowed_slots)
    slots: list[I32]  # term id -> posting slots
    tfs: list[TF]  # term id -> term frequencies, aligned with ``slots``
    n_docs: int
    norm: F64  # slot -> k1 · (1 - b + b · dl / avgdl)
    dead: npt.NDArray[np.intp]  # tombstoned slots
    dead_mask: npt.NDArray[np.bool_] | None  # slot -> tombstoned (None when there are none)
    cache: dict[int, F32] = field(default_factory=dict)  # term id -> contributions, least recently used first
    cached_bytes: int = 0
    dfs: dict[int, int] = field(default_factory=dict)  # term id -> live document frequency, once counted

    def df(self, tid: int) -> int:
        """Live documents holding term *tid*: its postings less the tombstoned ones."""
        slots = self.slots[tid]
        if self.dead_mask is None:
            return int(slots.size)
        got = self.dfs.get(tid)
        if got is None:
            import numpy as np

            got = self.dfs[tid] = int(slots.size) - int(np.count_nonzero(self.dead_mask[slots]))
        return got

    def precompute(self) -> None:
        """Every term's contributions at once (one vectorised pass), for an index small enough that this
        costs less than computing them term by term on first use; larger ones stay lazy."""
        import numpy as np

        sizes = np.fromiter((s.size for s in self.slots), dtype=np.int64, count=len(self.slots))
        total = int(sizes.sum())
        if total == 0 or total > _EAGER_POSTINGS:
            return
        slots = np.concatenate(self.slots)
        df = sizes
        if self.dead_mask is not None:
            terms = np.repeat(np.arange(sizes.size), sizes)
            df = sizes - np.bincount(terms[self.dead_mask[slots]], minlength=sizes.size)
        n = self.n_docs  # the same arithmetic as contribution(), term for term: identical scores either way
        idf = np.array([math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for d in df.astype(float).tolist()])
        tfs = np.concatenate(self.tfs).astype(np.float32, copy=False)
        values = (tfs * np.repeat(idf.astype(np.float32), sizes) / (tfs + self.norm[slots])).astype("float32")
        self.cache.update(enumerate(np.split(values, np.cumsum(sizes)[:-1])))
        self.cached_bytes = values.nbytes

    def contribution(self, tid: int) -> F32:
        """``idf · tf / (tf + norm)`` for every posting of term *tid* (kept per view, within
        :data:`CONTRIBUTION_CACHE_BYTES`; the same values whenever they are computed)."""
        cache = self.cache
        got = cache.pop(tid, None)  # taken out and put back: the most recently used go last
        if got is None:
            import numpy as np

            df = float(self.df(tid))
            idf = math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))
            tf = np.asarray(self.tfs[tid], dtype=np.float32)  # float32 arithmetic whatever the stored dtype
            got = (tf * idf / (tf + self.norm[self.slots[tid]])).astype("float32")
            self.cached_bytes += got.nbytes
            while self.cached_bytes > CONTRIBUTION_CACHE_BYTES and cache:  # searches share a view: no lock,
                try:  # so another thread may have taken an entry first
                    old = cache.pop(next(iter(cache)), None)
                except (StopIteration, RuntimeError):
                    break
                if old is not None:
                    self.cached_bytes -= old.nbytes
        cache[tid] = got
        return got


#: A keyword query: text (analysed here), or analysed terms with weights (pseudo-relevance feedback).
KeywordQuery: TypeAlias = "str | Mapping[str, float]"


class Bm25Index(RankedIndex["KeywordQuery"]):
    """BM25 over chunk ids and texts; upsert, remove and search from any thread."""

    scale = "BM25"

    def __init__(self, analyzer: str | Analyzer = "default", *, k1: float = 1.5, b: float = 0.75) -> None:

        if not (isinstance(k1, int | float) and math.isfinite(k1) and k1 >= 0):
            raise ConfigError.invalid("k1", k1, "a finite number >= 0 (Lucene's default is 1.2, ours 1.5)")
        if not (isinstance(b, int | float) and 0.0 <= b <= 1.0):
            raise ConfigError.invalid("b", b, "a number between 0 and 1 (default 0.75)")
        if isinstance(analyzer, str):
            analyzer = get_analyzer(analyzer)
        elif not (callable(analyzer) and isinstance(getattr(analyzer, "name", None), str)):
            raise ConfigError.invalid(
                "analyzer", analyzer, "'auto', 'default', 'english' or an Analyzer (name + __call__)"
            )
        self._analyzer: Analyzer = analyzer
        self._k1 = float(k1)
        self._b = float(b)
        self._lock = threading.RLock()
        self._vocab: dict[str, int] = {}
        self._ids: list[str] = []
        self._slot_of: dict[str, int] = {}
        self._dl = array("q")  # slot -> document length in tokens (a flat buffer numpy copies at once)
        self._lang: list[str | None] = []  # slot -> the language its text was analysed in
        self._languages: Counter[str] = Counter()  # live texts per known language
        self._languages_view: dict[str, int] | None = None  # a frozen copy for queries (None after a change)
        self._total_len = 0
        self._dead: list[int] = []
        # Upserts not yet in the postings, as flat buffers (no small objects per document to fragment
        # the heap): each pending document's slot and number of distinct terms, then its term ids and tfs.
        self._pending_docs = array("i")
        self._pending_sizes = array("i")
        self._pending_tids = array("i")
        self._pending_tfs = array("I")
        self._slots: list[I32] = []
        self._tfs: list[TF] = []
        self._view: _View | None = None
        self._built = False  # a view was frozen since the index was made or loaded

    # -- properties -----------------------------------------------------------------------------

    @property
    def analyzer_name(self) -> str:
        """The versioned name of the analyzer (recorded in snapshots)."""
        return self._analyzer.name

    @property
    def analyzer(self) -> Analyzer:
        return self._analyzer

    @property
    def k1(self) -> float:
        return self._k1

    @property
    def b(self) -> float:
        return self._b

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._slot_of

    def __repr__(self) -> str:
        return f"Bm25Index(analyzer={self.analyzer_name!r}, k1={self._k1}, b={self._b}, docs={len(self)})"

    # -- mutations ------------------------------------------------------------------------------

    def upsert(self, items: Iterable[tuple[str, str] | tuple[str, str, str | None]]) -> None:
        """Index ``(chunk_id, text)`` or ``(chunk_id, text, language)`` tuples; a chunk id already present
        is replaced. *language* (an ISO 639-1 code, ``None`` when unknown) is what a language-aware
        analyzer stems the text with; without it such an analyzer detects the language itself."""
        analyzer = self._analyzer
        analyzed: list[tuple[str, Counter[str], str | None]] = []
        for item in items:  # analysed outside the lock
            cid, text = str(item[0]), item[1]
            language = item[2] if len(item) > 2 else None
            if isinstance(analyzer, LanguageAwareAnalyzer):
                if language is None:
                    language = detect_language(text)
                terms = analyzer.index_terms(text, language)
            else:
                terms = analyzer(text)
            analyzed.append((cid, Counter(terms), language))
        if analyzed:
            self._add_counts(analyzed)

    def _add_counts(self, docs: list[tuple[str, Counter[str], str | None]]) -> None:

        with self._lock:
            vocab = self._vocab
            for cid, counts, language in docs:
                old = self._slot_of.get(cid)
                if old is not None:
                    self._kill(old)
                tids: list[int] = []
                for term in counts:
                    tid = vocab.get(term)
                    if tid is None:
                        tid = vocab[term] = len(vocab)
                    tids.append(tid)
                slot = len(self._ids)
                self._ids.append(cid)
                self._slot_of[cid] = slot
                self._pending_docs.append(slot)
                self._pending_sizes.append(len(tids))
                self._pending_tids.extend(tids)
                self._pending_tfs.extend(counts.values())
                length = sum(counts.values())
                self._dl.append(length)
                self._total_len += length
                self._lang.append(language)
                if language:
                    self._languages[language] += 1
                    self._languages_view = None
                if len(self._pending_tids) >= _MERGE_POSTINGS:
                    self._merge_pending(more_to_come=True)
            self._view = None

    def remove(self, ids: Iterable[str]) -> None:
        """Remove chunks by id; unknown ids are ignored."""
        with self._lock:
            gone = False
            for cid in ids:
                slot = self._slot_of.get(cid)
                if slot is not None:
                    self._kill(slot)
                    gone = True
            if gone:
                self._view = None

    def clear(self) -> None:
        """Remove every chunk."""
        with self._lock:
            self.remove(list(self._slot_of))

    def _kill(self, slot: int) -> None:
        """Tombstone the live *slot* (the lock is held)."""
        del self._slot_of[self._ids[slot]]
        language = self._lang[slot]
        if language:
            self._languages_view = None
            self._languages[language] -= 1
            if self._languages[language] <= 0:
                del self._languages[language]
        self._total_len -= self._dl[slot]
        self._dead.append(slot)

    def _alive(self, slot: int) -> bool:
        return self._slot_of.get(self._ids[slot]) == slot

    # -- consolidation --------------------------------------------------------------------------

    def _current(self) -> _View:
        """The view for searching; builds a new one (under the lock) after any change."""
        view = self._view
        if view is not None:
            return view
        with self._lock:
            if self._view is None:
                bulk = self._built is False or 2 * len(self._pending_docs) >= len(self._ids)
                self._merge_pending()
                if self._dead and len(self._dead) > _COMPACT_FRACTION * len(self._ids):
                    self._compact()
                self._view = self._freeze()
                if bulk:  # after a build or a bulk load only: a few upserts leave it lazy (a query's terms)
                    self._view.precompute()
                self._built = True
            return self._view

    def _merge_pending(self, *, more_to_come: bool = False) -> None:
        """Move the pending upserts into the postings. A new term's postings are slices of this merge's
        sorted arrays, or copies of them when *more_to_come* (a bulk load part way): later merges
        replace some terms' postings, and a slice would keep this merge's whole arrays alive."""
        import numpy as np

        n_terms = len(self._vocab)
        slots, tfs = list(self._slots), list(self._tfs)  # copy-on-write: old views keep theirs
        empty_i, empty_f = np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint16)
        slots.extend([empty_i] * (n_terms - len(slots)))
        tfs.extend([empty_f] * (n_terms - len(tfs)))
        docs = np.array(self._pending_docs, dtype=np.int32)
        sizes = np.array(self._pending_sizes, dtype=np.int64)
        tids = np.frombuffer(self._pending_tids, dtype=np.int32)  # the buffers are replaced below, not reused
        counts = np.frombuffer(self._pending_tfs, dtype=np.uint32)
        self._pending_docs, self._pending_sizes = array("i"), array("i")
        self._pending_tids, self._pending_tfs = array("i"), array("I")
        alive = np.fromiter((self._alive(d) for d in docs.tolist()), dtype=bool, count=docs.size)
        if not alive.all():  # skip the documents removed (or replaced) since
            keep = np.repeat(alive, sizes)
            tids, counts = tids[keep], counts[keep]
            docs, sizes = docs[alive], sizes[alive]
        if tids.size:
            # One array at a time, each freed as soon as it is replaced (the pending buffers included):
            # the transient arrays of a large merge are most of a bulk build's peak memory.
            freq = tf_array(counts)
            del counts
            order = np.argsort(tids, kind="stable")  # slots stay ascending within each term
            tids = tids[order]
            freq = freq[order]
            owner = np.repeat(docs, sizes)[order]
            del order
            starts = np.flatnonzero(np.diff(tids, prepend=-1))
            ends = np.append(starts[1:], tids.size)
            for tid, a, z in zip(tids[starts].tolist(), starts.tolist(), ends.tolist(), strict=True):
                if slots[tid].size:
                    slots[tid] = np.concatenate((slots[tid], owner[a:z]))
                    tfs[tid] = np.concatenate((tfs[tid], freq[a:z]))
                elif more_to_come:
                    slots[tid], tfs[tid] = owner[a:z].copy(), freq[a:z].copy()
                else:
                    slots[tid], tfs[tid] = owner[a:z], freq[a:z]
        self._slots, self._tfs = slots, tfs

    def _compact(self) -> None:
        """Drop tombstoned slots and renumber the live ones (new objects; old views stay valid)."""
        import numpy as np

        n = len(self._ids)
        alive = np.ones(n, dtype=bool)
        alive[np.array(self._dead, dtype=np.intp)] = False
        renumber = (np.cumsum(alive) - 1).astype(np.int32)
        slots: list[I32] = []
        tfs: list[TF] = []
        for s, f in zip(self._slots, self._tfs, strict=True):
            keep = alive[s]
            slots.append(renumber[s[keep]])
            tfs.append(f[keep])
        live = np.flatnonzero(alive).tolist()
        self._slots, self._tfs = slots, tfs
        self._ids = [self._ids[i] for i in live]
        self._slot_of = {cid: i for i, cid in enumerate(self._ids)}
        self._dl = array("q", np.frombuffer(self._dl, dtype=np.int64)[live].tobytes())
        self._lang = [self._lang[i] for i in live]
        self._dead = []

    def _freeze(self) -> _View:
        import numpy as np

        n_docs = len(self._slot_of)
        avgdl = self._total_len / n_docs if n_docs and self._total_len else 1.0
        dl = np.frombuffer(self._dl, dtype=np.int64).astype(np.float64)
        norm = self._k1 * (1.0 - self._b + self._b * dl / avgdl)
        dead = np.array(self._dead, dtype=np.intp)
        dead_mask = None
        if dead.size:
            dead_mask = np.zeros(len(self._ids), dtype=bool)
            dead_mask[dead] = True
        return _View(
            n_slots=len(self._ids),
            ids=self._ids,
            slot_of=self._slot_of,
            slots=self._slots,
            tfs=self._tfs,
            n_docs=n_docs,
            norm=norm,
            dead=dead,
            dead_mask=dead_mask,
        )

    # -- queries --------------------------------------------------------------------------------

    def query_terms(self, query: str) -> list[str]:
        """The terms *query* is analysed into: a language-aware analyzer analyses it for its own
        language and the languages of the indexed texts."""
        if isinstance(self._analyzer, LanguageAwareAnalyzer):
            languages = self._languages_view
            if languages is None:
                with self._lock:
                    languages = self._languages_view = dict(self._languages)
            return self._analyzer.query_terms(query, languages)
        return self._analyzer(query)

    @property
    def languages(self) -> dict[str, int]:
        """How many live texts were analysed in each (known) language."""
        with self._lock:
            return dict(self._languages)

    def _dense_scores(self, view: _View, query: KeywordQuery) -> F64 | None:
        """Scores of every slot (tombstones included), or ``None`` when no query term is indexed.

        One ``bincount`` over the concatenated postings of the query terms: per slot, the terms are
        added in query order whatever the slot numbering, so a rebuilt index scores identically.
        """
        import numpy as np

        vocab, n_terms = self._vocab, len(view.slots)
        counts: dict[int, float] = {}
        weighted = query if isinstance(query, Mapping) else Counter(self.query_terms(query))
        for term, weight in weighted.items():
            tid = vocab.get(term)
            if tid is not None and tid < n_terms and weight > 0 and view.df(tid) > 0:
                counts[tid] = counts.get(tid, 0.0) + weight
        if not counts:
            return None
        slots = np.concatenate([view.slots[tid] for tid in counts])
        weights = np.concatenate(
            [view.contribution(tid) * np.float32(n) if n != 1 else view.contribution(tid) for tid, n in counts.items()]
        )
        return cast("F64", np.bincount(slots, weights=weights, minlength=view.n_slots))

    # -- snapshots ------------------------------------------------------------------------------

    def save(self, path: str | PathLike[str]) -> None:
        """Write a snapshot (numpy ``.npz``, no pickle) that :meth:`load` reads back."""
        from ragwright.index.bm25_snapshot import save_snapshot

        save_snapshot(self, path)

    @classmethod
    def load(cls, path: str | PathLike[str], *, analyzer: Analyzer | None = None) -> Bm25Index:
        """Read a snapshot written by :meth:`save`.

        The analyzer is rebuilt from the recorded name (or *analyzer* is used, when given, and must
        carry the same name); a snapshot from another analyzer or format version is refused with
        :class:`~ragwright.errors.ConfigError`.
        """
        from ragwright.index.bm25_snapshot import load_snapshot

        return load_snapshot(cls, path, analyzer)
