from __future__ import annotations

import itertools
import json
import math
import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragwright.errors import ConfigError, StoreError
from ragwright.index import Bm25Index, DefaultAnalyzer, get_analyzer
from ragwright.index.bm25_snapshot import FORMAT, FORMAT_VERSION

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]


def brute_force(docs: dict[str, str], query: str, k1: float = 1.5, b: float = 0.75) -> dict[str, float]:
    """Lucene BM25 written out term by term (the definition the index must meet)."""
    analyze = DefaultAnalyzer()
    toks = {cid: analyze(text) for cid, text in docs.items()}
    n = len(toks)
    if n == 0:
        return {}
    avgdl = sum(len(t) for t in toks.values()) / n or 1.0
    out: dict[str, float] = {}
    for cid, terms in toks.items():
        score = 0.0
        for q in analyze(query):
            df = sum(q in t for t in toks.values())
            tf = terms.count(q)
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf / (tf + k1 * (1 - b + b * len(terms) / avgdl))
        if score > 0:
            out[cid] = score
    return out


def ranked(scores: dict[str, float], k: int) -> list[str]:
    return [cid for cid, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


# -- basics -------------------------------------------------------------------------------------


def test_search_matches_the_definition() -> None:
    docs = {
        "a": "the quick brown fox jumps",
        "b": "the lazy dog",
        "c": "quick quick dog",
        "d": "",
        "e": "nothing relevant here at all",
    }
    index = Bm25Index()
    index.upsert(docs.items())
    assert len(index) == 5 and "d" in index and "z" not in index
    for query in ["quick dog", "dog dog", "fox", "the", "absent", ""]:
        expected = brute_force(docs, query)
        got = index.scores(query)
        assert got.keys() == expected.keys()
        for cid, value in expected.items():
            assert got[cid] == pytest.approx(value, rel=1e-6)
        assert [cid for cid, _ in index.search(query, 10)] == ranked(got, 10)


def test_never_returns_zero_scores_and_breaks_ties_by_id() -> None:
    index = Bm25Index()
    index.upsert([("z", "apple"), ("m", "apple"), ("a", "apple"), ("q", "pear")])
    hits = index.search("apple", 10)
    assert [cid for cid, _ in hits] == ["a", "m", "z"]  # equal scores: by id; "q" (score 0) never
    assert index.search("apple", 2) == hits[:2]
    assert index.search("kiwi", 10) == []
    assert index.search("apple", 0) == []
    assert index.search("apple", 10, min_score=hits[0][1] + 1) == []
    assert index.search("apple", 10, min_score=hits[0][1]) == hits


def test_replace_and_remove() -> None:
    index = Bm25Index()
    index.upsert([("a", "red apple"), ("b", "green pear"), ("c", "red cherry")])
    assert index.search("pear", 5) == index.search("pear", 5)
    index.upsert([("b", "red grape")])  # replaces the text
    assert index.search("pear", 5) == []
    assert {cid for cid, _ in index.search("red", 5)} == {"a", "b", "c"}
    index.remove(["a", "unknown"])
    assert "a" not in index and len(index) == 2
    assert {cid for cid, _ in index.search("red", 5)} == {"b", "c"}
    fresh = Bm25Index()
    fresh.upsert([("b", "red grape"), ("c", "red cherry")])
    assert index.search("red grape cherry", 5) == fresh.search("red grape cherry", 5)
    index.clear()
    assert len(index) == 0 and index.search("red", 5) == []


def test_same_id_twice_in_one_batch_keeps_the_last() -> None:
    index = Bm25Index()
    index.upsert([("a", "first text"), ("a", "second text")])
    fresh = Bm25Index()
    fresh.upsert([("a", "second text")])
    assert len(index) == 1
    assert index.scores("first second text") == fresh.scores("first second text")


def test_repeated_query_terms_count_per_occurrence() -> None:
    index = Bm25Index()
    index.upsert([("a", "cat dog"), ("b", "dog dog bird"), ("c", "fish")])
    once, twice = index.scores("cat"), index.scores("cat cat")
    assert twice["a"] == pytest.approx(2 * once["a"])


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"k1": -0.1}, "k1"),
        ({"k1": math.inf}, "k1"),
        ({"b": 1.5}, "b"),
        ({"b": -0.1}, "b"),
        ({"analyzer": "x"}, "analyzer"),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        Bm25Index(**kwargs)


def test_bad_search_arguments() -> None:
    index = Bm25Index()
    with pytest.raises(ConfigError, match="k="):
        index.search("x", -1)
    with pytest.raises(ConfigError, match="min_score"):
        index.search("x", 1, min_score=math.nan)


def test_analyzer_object_and_name() -> None:
    index = Bm25Index(get_analyzer("english"), k1=1.2, b=0.5)
    assert index.analyzer_name == "english/1" and (index.k1, index.b) == (1.2, 0.5)
    index.upsert([("a", "The running dogs")])
    assert index.search("dog runs", 1)[0][0] == "a"


# -- incremental == rebuild ---------------------------------------------------------------------

texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), st.lists(st.tuples(st.sampled_from("abcdefghij"), texts), max_size=4)),
        st.tuples(st.just("remove"), st.lists(st.sampled_from("abcdefghijk"), max_size=3)),
        st.tuples(st.just("search"), st.just([])),
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(ops=ops, query=st.lists(st.sampled_from([*WORDS, "missing"]), min_size=1, max_size=4).map(" ".join))
def test_incremental_equals_rebuild(ops: list[tuple[str, list[Any]]], query: str) -> None:
    index = Bm25Index()
    state: dict[str, str] = {}
    for op, arg in ops:
        if op == "upsert":
            index.upsert(arg)
            state.update(arg)
        elif op == "remove":
            index.remove(arg)
            for cid in arg:
                state.pop(cid, None)
        else:
            index.search(query, 3)  # consolidates (and compacts) at arbitrary points
    fresh = Bm25Index()
    fresh.upsert(state.items())
    assert len(index) == len(state) and all(cid in index for cid in state)
    assert index.scores(query) == fresh.scores(query)  # bit-identical: same statistics, same arithmetic
    assert index.search(query, 4) == fresh.search(query, 4)
    expected = brute_force(state, query)
    got = index.scores(query)
    assert got.keys() == expected.keys()
    assert all(got[c] == pytest.approx(expected[c], rel=1e-6) for c in expected)


@settings(max_examples=60, deadline=None)
@given(ops=ops, query=st.lists(st.sampled_from([*WORDS, "missing"]), min_size=1, max_size=4).map(" ".join))
def test_lazy_contributions_with_a_tiny_cache_equal_the_eager_ones(
    ops: list[tuple[str, list[Any]]], query: str
) -> None:
    """The path of large indexes (contributions per term on first use, document frequencies counted
    past tombstones, least recently used contributions dropped) scores bit-identically to the eager one."""
    import ragwright.index.bm25 as bm25

    eager, lazy = Bm25Index(), Bm25Index()
    for op, arg in ops:
        for index in (eager, lazy):
            if op == "upsert":
                index.upsert(arg)
            elif op == "remove":
                index.remove(arg)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(bm25, "_EAGER_POSTINGS", 0)
        m.setattr(bm25, "CONTRIBUTION_CACHE_BYTES", 1)
        for q in (query, query, "alpha beta", query):
            assert lazy.scores(q) == eager.scores(q)
            assert lazy.search(q, 4) == eager.search(q, 4)
        assert len(lazy._current().cache) <= 1


@settings(max_examples=80, deadline=None)
@given(
    ops=ops,
    query=st.lists(st.sampled_from([*WORDS, "missing"]), min_size=1, max_size=4).map(" ".join),
    every=st.integers(1, 12),
)
def test_merging_pending_postings_along_the_way_changes_nothing(
    ops: list[tuple[str, list[Any]]], query: str, every: int
) -> None:
    """A bulk load merges its pending postings every ``_MERGE_POSTINGS`` (bounding its memory): the
    index it builds scores bit-identically to one that merged everything at once."""
    import ragwright.index.bm25 as bm25

    state: dict[str, str] = {}
    with pytest.MonkeyPatch.context() as m:
        m.setattr(bm25, "_MERGE_POSTINGS", every)
        index = Bm25Index()
        for op, arg in ops:
            if op == "upsert":
                index.upsert(arg)
                state.update(arg)
            elif op == "remove":
                index.remove(arg)
                for cid in arg:
                    state.pop(cid, None)
            else:
                index.search(query, 3)
    fresh = Bm25Index()
    fresh.upsert(state.items())
    assert index.scores(query) == fresh.scores(query)
    assert index.search(query, 4) == fresh.search(query, 4)


def test_term_frequencies_are_stored_small_and_exact() -> None:
    docs = {"a": "alpha " * 3 + "beta", "c": "beta gamma"}
    index = Bm25Index()
    index.upsert(docs.items())
    view = index._current()
    assert all(t.dtype == np.uint16 for t in view.tfs)
    assert view.tfs[index._vocab["alpha"]].tolist() == [3]
    docs["b"] = "alpha " * 70_000  # past uint16: that merge keeps float32 (exact for counts)
    index.upsert([("b", docs["b"])])
    view = index._current()
    assert view.tfs[index._vocab["alpha"]].tolist() == [3, 70_000]
    expected = brute_force(docs, "alpha")
    assert index.scores("alpha") == pytest.approx(expected, rel=1e-6)


# -- the allowed filter -------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=st.dictionaries(st.text("abcdefghijklmnop", min_size=1, max_size=3), texts, max_size=30),
    picks=st.lists(st.integers(0, 40), max_size=15),
    k=st.integers(1, 8),
    min_score=st.sampled_from([0.0, 0.0, 0.2, 0.6]),
    removed=st.lists(st.integers(0, 40), max_size=5),
)
def test_allowed_is_applied_before_top_k(
    corpus: dict[str, str], picks: list[int], k: int, min_score: float, removed: list[int]
) -> None:
    ids = sorted(corpus)
    index = Bm25Index()
    index.upsert(corpus.items())
    gone = {ids[i % len(ids)] for i in removed} if ids else set()
    index.remove(gone)
    allowed = {ids[i % len(ids)] for i in picks} if ids else set()
    allowed.add("not-indexed")
    query = "alpha beta eta"
    everything = index.scores(query)
    expected = ranked({c: s for c, s in everything.items() if c in allowed and s >= min_score}, k)
    got = index.search(query, k, allowed=allowed, min_score=min_score)
    assert [cid for cid, _ in got] == expected
    assert all(cid in allowed and cid not in gone and score > 0 for cid, score in got)
    assert index.search(query, k, allowed=sorted(allowed) * 2, min_score=min_score) == got  # duplicates
    assert index.search(query, k, allowed=set()) == []


# -- snapshots ----------------------------------------------------------------------------------


def test_snapshot_roundtrip(tmp_path: Path) -> None:
    rng = random.Random(7)
    index = Bm25Index("english", k1=1.2, b=0.6)
    docs = [(f"d{i}", " ".join(rng.choices([*WORDS, "running", "dogs", "Ωμέγα", "人工智能"], k=6))) for i in range(60)]
    index.upsert(docs)
    index.search("alpha", 1)
    index.remove([f"d{i}" for i in range(0, 60, 7)])  # tombstones, below the compaction threshold
    index.upsert([("d1", "zeta running"), ("new", "人工 dogs")])  # pending at save time
    path = tmp_path / "bm25.npz"
    index.save(path)
    loaded = Bm25Index.load(path)
    assert (loaded.analyzer_name, loaded.k1, loaded.b, len(loaded)) == ("english/1", 1.2, 0.6, len(index))
    for query in ["alpha beta", "dog run", "人工智能", "ωμέγα zeta", "nothing"]:
        assert loaded.search(query, 10) == index.search(query, 10)
        assert loaded.scores(query) == pytest.approx(index.scores(query), rel=1e-6)
    loaded.upsert([("x", "alpha alpha")])  # a loaded index keeps working incrementally
    loaded.remove(["d2"])
    index.upsert([("x", "alpha alpha")])
    index.remove(["d2"])
    assert loaded.search("alpha", 5) == index.search("alpha", 5)


def test_snapshot_of_an_empty_index(tmp_path: Path) -> None:
    Bm25Index().save(tmp_path / "empty.npz")
    loaded = Bm25Index.load(tmp_path / "empty.npz")
    assert len(loaded) == 0 and loaded.search("x", 3) == []


def test_snapshot_refuses_other_analyzers_and_versions(tmp_path: Path) -> None:
    path = tmp_path / "bm25.npz"
    index = Bm25Index("default")
    index.upsert([("a", "running dogs")])
    index.save(path)
    with pytest.raises(ConfigError, match="analyzer"):
        Bm25Index.load(path, analyzer=get_analyzer("english"))

    class Custom:
        name = "custom/3"

        def __call__(self, text: str) -> list[str]:
            return text.split()

    custom = Bm25Index(Custom())
    custom.upsert([("a", "Hello World")])
    custom.save(tmp_path / "custom.npz")
    with pytest.raises(ConfigError, match="custom/3"):
        Bm25Index.load(tmp_path / "custom.npz")
    assert Bm25Index.load(tmp_path / "custom.npz", analyzer=Custom()).search("Hello", 1)[0][0] == "a"

    with np.load(path) as z:
        arrays = {name: z[name] for name in z.files}
    meta = json.loads(arrays["meta"].tobytes())
    assert (meta["format"], meta["version"]) == (FORMAT, FORMAT_VERSION)
    for changed in ({"version": FORMAT_VERSION + 1}, {"analyzer": "default/0"}):
        arrays["meta"] = np.frombuffer(json.dumps(meta | changed).encode(), dtype=np.uint8)
        with (tmp_path / "other.npz").open("wb") as fh:
            np.savez(fh, **arrays)
        with pytest.raises(ConfigError):
            Bm25Index.load(tmp_path / "other.npz")


def test_damaged_snapshot_is_a_store_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(StoreError):
        Bm25Index.load(bad)
    index = Bm25Index()
    index.upsert([("a", "x y"), ("b", "y z")])
    index.save(tmp_path / "ok.npz")
    with np.load(tmp_path / "ok.npz") as z:
        arrays = {name: z[name] for name in z.files}
    arrays["post_slots"] = arrays["post_slots"] + 5  # points past the documents
    with (tmp_path / "broken.npz").open("wb") as fh:
        np.savez(fh, **arrays)
    with pytest.raises(StoreError, match="inconsistent"):
        Bm25Index.load(tmp_path / "broken.npz")
    with pytest.raises(FileNotFoundError):
        Bm25Index.load(tmp_path / "missing.npz")


# -- threads ------------------------------------------------------------------------------------


def test_concurrent_upserts_removes_and_searches() -> None:
    index = Bm25Index()
    rng = random.Random(3)
    index.upsert((f"seed{i}", " ".join(rng.choices(WORDS, k=5))) for i in range(200))
    finals: list[dict[str, str | None]] = [{} for _ in range(3)]
    errors: list[BaseException] = []
    stop = threading.Event()

    def writer(w: int) -> None:
        local = random.Random(w)
        try:
            for step in range(300):
                cid = f"w{w}-{local.randrange(40)}"
                if local.random() < 0.25:
                    index.remove([cid])
                    finals[w][cid] = None
                else:
                    text = " ".join(local.choices(WORDS, k=local.randrange(1, 7)))
                    index.upsert([(cid, text)])
                    finals[w][cid] = text
                if step % 50 == 0:
                    index.remove([f"seed{local.randrange(200)}"])  # shared ids: drive compaction too
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def reader() -> None:
        local = random.Random()
        try:
            while not stop.is_set():
                allowed = {f"w0-{i}" for i in range(0, 40, 3)}
                hits = index.search(" ".join(local.choices(WORDS, k=3)), 5, allowed=allowed)
                assert all(cid in allowed for cid, _ in hits)
                assert all(a[1] >= b[1] for a, b in itertools.pairwise(hits))
                index.search("alpha zeta", 10)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    readers = [threading.Thread(target=reader) for _ in range(3)]
    writers = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert not errors, errors
    state = {cid: text for final in finals for cid, text in final.items() if text is not None}
    seeds = [cid for cid in (f"seed{i}" for i in range(200)) if cid in index]
    fresh = Bm25Index()
    rng = random.Random(3)
    seed_texts = {f"seed{i}": " ".join(rng.choices(WORDS, k=5)) for i in range(200)}
    fresh.upsert([(cid, seed_texts[cid]) for cid in seeds] + list(state.items()))
    assert len(index) == len(fresh)
    for query in ["alpha", "beta gamma", "theta eta eps"]:
        assert index.search(query, 20) == fresh.search(query, 20)


# -- oracle: bm25s ------------------------------------------------------------------------------


def _scifact(shared: Path, n: int | None) -> Iterator[tuple[str, str]]:
    with (shared / "data" / "scifact" / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in itertools.islice(fh, n):
            rec = json.loads(line)
            yield str(rec["_id"]), f"{rec['title']} {rec['text']}"


@pytest.mark.parametrize("analyzer", ["default", "english"])
def test_scores_equal_bm25s_lucene(shared: Path, analyzer: str) -> None:
    bm25s = pytest.importorskip("bm25s")
    docs = list(_scifact(shared, 2000))
    with (shared / "data" / "scifact" / "queries.jsonl").open(encoding="utf-8") as fh:
        queries = [json.loads(line)["text"] for line in itertools.islice(fh, 50)]
    queries += ["cell cell cell death", "protein protein"]  # repeated query terms count per occurrence
    analyze = get_analyzer(analyzer)
    index = Bm25Index(analyze, k1=1.5, b=0.75)
    index.upsert(docs)
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75, backend="numpy")
    retriever.index([analyze(text) for _, text in docs], show_progress=False)
    doc_ids = [cid for cid, _ in docs]
    compared = 0
    for query in queries:
        tokens = [t for t in analyze(query) if t in retriever.vocab_dict]
        if not tokens:
            assert index.search(query, 10) == []
            continue
        theirs_all = retriever.get_scores(tokens)
        ours_all = index.scores(query)
        nz = np.flatnonzero(theirs_all > 0)
        assert {doc_ids[i] for i in nz} == ours_all.keys()
        ours_vec = np.array([ours_all[doc_ids[i]] for i in nz])
        np.testing.assert_allclose(ours_vec, theirs_all[nz], rtol=1e-4)
        # top-10: the same documents in the same order, up to ties at equal scores
        top = index.search(query, 10)
        order = np.argsort(-theirs_all, kind="stable")[: len(top)]
        np.testing.assert_allclose([s for _, s in top], theirs_all[order], rtol=1e-4)
        cut = top[-1][1] * (1 + 1e-5)
        assert {c for c, s in top if s > cut} == {doc_ids[i] for i in order if theirs_all[i] > cut}
        compared += 1
    assert compared >= 45


@pytest.mark.slow
def test_scifact_ndcg_at_10(shared: Path) -> None:
    from ragwright.eval.datasets import load_beir
    from ragwright.eval.metrics import ndcg_at_k

    ds = load_beir(shared / "data" / "scifact", "test")
    index = Bm25Index("english", k1=1.5, b=0.75)
    index.upsert(_scifact(shared, None))
    assert len(index) == 5183
    run = {qid: [cid for cid, _ in index.search(text, 10)] for qid, text in ds.judged_queries.items()}
    assert len(run) == 300
    ndcg = float(np.mean(list(ndcg_at_k(run, ds.qrels, 10).values())))
    assert ndcg >= 0.680, ndcg  # bm25s (lucene, k1 1.5, b .75, stop words + Snowball): 0.6863
