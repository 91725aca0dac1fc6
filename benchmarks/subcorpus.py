"""Smaller BEIR datasets for the benchmarks whose stages are too slow for a whole corpus (LLM enrichment).

* :func:`sampled` — the corpus cut to a number of documents, every judged-relevant one kept, all queries;
* :func:`query_sample` — *n* judged queries drawn with a seed, and a corpus of their judged-relevant
  documents plus, for each query, its top *negatives* documents under BM25 over the **whole** corpus
  (hard negatives): the documents a first stage would have put in front of the query, so the ranking
  problem stays realistic while the corpus shrinks to a few hundred documents.

Both write the subset in BEIR layout under a folder and return it loaded.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from ragwright.eval.datasets import BeirDataset, load_beir
from ragwright.index.bm25 import Bm25Index


@dataclass(frozen=True)
class QuerySample:
    """A query-sampled dataset and what it holds."""

    data: BeirDataset
    queries: int  # queries kept
    judged: int  # judged queries with a relevant document in the whole dataset
    relevant: int  # judged-relevant documents of the kept queries (all kept)
    negatives: int  # documents added only as some query's BM25 top-k
    documents: int  # documents of the sub-corpus
    total: int  # documents of the whole corpus
    seed: int

    def describe(self) -> str:
        return (
            f"query sample (seed {self.seed}): {self.queries} of {self.judged} judged queries; corpus "
            f"{self.documents} of {self.total} documents = {self.relevant} judged-relevant + {self.negatives} "
            "BM25 hard negatives (each query's top-k over the whole corpus)"
        )


def _records(data: BeirDataset) -> list[tuple[str, str]]:
    """``(id, line)`` of every corpus record, in file order."""
    with data.corpus_path.open(encoding="utf-8") as src:
        return [(str(json.loads(line)["_id"]), line) for line in src if line.strip()]


def _write(data: BeirDataset, lines: list[str], queries: set[str] | None, root: Path) -> BeirDataset:
    """*lines* as the corpus of a copy of *data* under *root* (only *queries* and their judgments, if given)."""
    root.mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(lines), encoding="utf-8")
    with (data.root / "queries.jsonl").open(encoding="utf-8") as src:
        kept = [line for line in src if line.strip() and (queries is None or str(json.loads(line)["_id"]) in queries)]
    (root / "queries.jsonl").write_text("".join(kept), encoding="utf-8")
    (root / "qrels").mkdir()
    for f in (data.root / "qrels").iterdir():
        rows = f.read_text(encoding="utf-8").splitlines(keepends=True)
        if queries is not None:
            rows = [r for r in rows if r.split("\t", 1)[0] in queries or r.startswith("query-id")]
        (root / "qrels" / f.name).write_text("".join(rows), encoding="utf-8")
    return load_beir(root, data.split)


def sampled(data: BeirDataset, size: int, tmp: Path) -> BeirDataset:
    """*data* restricted to *size* documents: every judged-relevant one first, then others in file order."""
    relevant = {d for q in data.judged_queries for d, g in data.qrels[q].items() if g > 0}
    records = _records(data)
    keep = [line for doc, line in records if doc in relevant]
    others = [line for doc, line in records if doc not in relevant]
    return _write(data, (keep + others)[: max(size, len(keep))], None, tmp / data.root.name)


def bm25_top(data: BeirDataset, queries: list[str], k: int) -> dict[str, list[str]]:
    """Each query id's top *k* document ids under BM25 (title + text) over the whole corpus."""
    index = Bm25Index()
    with data.corpus_path.open(encoding="utf-8") as src:
        index.upsert(
            (str(rec["_id"]), f"{rec.get('title', '')} {rec.get('text', '')}")
            for rec in (json.loads(line) for line in src if line.strip())
        )
    return {q: [doc for doc, _ in index.search(data.queries[q], k)] for q in queries}


def query_sample(data: BeirDataset, n: int, negatives: int, seed: int, tmp: Path) -> QuerySample:
    """*n* judged queries drawn with *seed* (those with a relevant document), their judged-relevant documents
    and each query's top *negatives* BM25 documents over the whole corpus; corpus lines keep file order."""
    judged = sorted(q for q in data.judged_queries if any(g > 0 for g in data.qrels[q].values()))
    chosen = sorted(random.Random(seed).sample(judged, min(n, len(judged))))
    relevant = {d for q in chosen for d, g in data.qrels[q].items() if g > 0}
    ranked = bm25_top(data, chosen, negatives) if negatives > 0 else {}
    keep = relevant | {d for docs in ranked.values() for d in docs}
    records = _records(data)
    lines = [line for doc, line in records if doc in keep]
    sub = _write(data, lines, set(chosen), tmp / data.root.name)
    present = {doc for doc, _ in records}
    return QuerySample(
        data=sub,
        queries=len(chosen),
        judged=len(judged),
        relevant=len(relevant & present),
        negatives=len(keep - relevant),
        documents=len(lines),
        total=len(records),
        seed=seed,
    )
