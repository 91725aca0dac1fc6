"""The query-sampled sub-corpus of benchmarks/subcorpus.py (used by benchmarks/chunking_cranfield.py
``--sample-queries``): seeded and reproducible, every judged-relevant document of the kept queries,
each query's BM25 hard negatives from the whole corpus, nothing else."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from ragwright.eval.datasets import BeirDataset, load_beir

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
TOPICS = ["glacier", "volcano", "comet", "coral", "desert", "monsoon", "tundra", "canyon"]


@pytest.fixture(scope="module")
def subcorpus() -> Iterator[ModuleType]:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import subcorpus as module
    finally:
        sys.path.remove(str(BENCHMARKS))
    yield module


def _dataset(root: Path) -> BeirDataset:
    """Per topic: one relevant document, one near miss sharing the query's words (a hard negative),
    and one unrelated filler; query 'q-unjudged' has only a zero-grade judgment."""
    root.mkdir()
    corpus, queries, qrels = [], [], ["query-id\tcorpus-id\tscore\n"]
    for i, topic in enumerate(TOPICS):
        corpus.append({"_id": f"rel-{topic}", "title": topic, "text": f"The {topic} formed over centuries."})
        corpus.append({"_id": f"near-{topic}", "title": "", "text": f"{topic} {topic} formation survey notes"})
        corpus.append({"_id": f"fill-{i}", "title": "", "text": f"unrelated filler record number {i}"})
        queries.append({"_id": f"q-{topic}", "text": f"{topic} formation"})
        qrels.append(f"q-{topic}\trel-{topic}\t1\n")
    queries.append({"_id": "q-unjudged", "text": "filler record"})
    qrels.append("q-unjudged\tfill-0\t0\n")
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus), encoding="utf-8")
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("".join(qrels), encoding="utf-8")
    return load_beir(root, "test")


def _corpus_ids(data: BeirDataset) -> list[str]:
    return [json.loads(line)["_id"] for line in data.corpus_path.read_text(encoding="utf-8").splitlines()]


def test_a_query_sample_keeps_the_relevant_documents_and_each_querys_bm25_negatives(
    subcorpus: ModuleType, tmp_path: Path
) -> None:
    data = _dataset(tmp_path / "full")
    sample = subcorpus.query_sample(data, 3, 2, 7, tmp_path / "a")
    kept = sorted(sample.data.judged_queries)
    topics = [q.removeprefix("q-") for q in kept]
    assert len(kept) == 3 and "q-unjudged" not in kept
    ids = _corpus_ids(sample.data)
    # the relevant document and the near miss of each kept query; no other topic's documents, no filler
    assert sorted(ids) == sorted([f"rel-{t}" for t in topics] + [f"near-{t}" for t in topics])
    assert ids == [d for d in _corpus_ids(data) if d in ids]  # the corpus keeps file order
    assert set(sample.data.qrels) == set(kept)  # judgments and queries cut to the sample
    assert (sample.queries, sample.judged, sample.relevant, sample.negatives, sample.documents, sample.total) == (
        3,
        8,
        3,
        3,
        6,
        24,
    )
    assert "3 of 8 judged queries" in sample.describe() and "6 of 24 documents" in sample.describe()


def test_a_query_sample_is_reproducible_by_seed(subcorpus: ModuleType, tmp_path: Path) -> None:
    data = _dataset(tmp_path / "full")
    first = subcorpus.query_sample(data, 3, 1, 11, tmp_path / "a").data
    again = subcorpus.query_sample(data, 3, 1, 11, tmp_path / "b").data
    assert first.judged_queries == again.judged_queries
    assert _corpus_ids(first) == _corpus_ids(again)
    others = {tuple(subcorpus.query_sample(data, 3, 1, s, tmp_path / f"s{s}").data.judged_queries) for s in range(6)}
    assert len(others) > 1  # the seed chooses the queries


def test_without_negatives_the_corpus_is_the_relevant_documents(subcorpus: ModuleType, tmp_path: Path) -> None:
    data = _dataset(tmp_path / "full")
    sample = subcorpus.query_sample(data, 20, 0, 0, tmp_path / "a")
    assert sample.queries == 8  # capped at the judged queries with a relevant document
    assert sorted(_corpus_ids(sample.data)) == sorted(f"rel-{t}" for t in TOPICS)
    assert sample.negatives == 0
