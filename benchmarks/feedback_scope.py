"""Rocchio feedback's scope: re-scoring the first pass's candidates vs a second search of the whole index.

Over the cached evaluation stores of ``benchmarks/retrieval_beir.py`` (auto analyzer), for each collection:
the default hybrid search (convex fusion, Rocchio on the candidates), the same with
``feedback.rocchio_scope=index`` (a second dense search with the moved vector) and with no feedback;
nDCG@10 and recall@100 with paired bootstrap CIs per collection and over all queries pooled.

Usage::

    python benchmarks/feedback_scope.py [--datasets scifact,cranfield,cisi,med,npl] [--depth 100]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import retrieval_beir as rb

from ragwright.eval.commands import eval_store_path
from ragwright.eval.configs import parse_config
from ragwright.eval.datasets import load_beir
from ragwright.eval.runner import run_config
from ragwright.models.embedders import default_embedder
from ragwright.rag import Rag
from ragwright.stores.sqlite import SqliteStore

CONFIGS = (("candidates", "hybrid"), ("index", "hybrid+feedback.rocchio_scope=index"), ("none", "hybrid+feedback=null"))
PAIRS = (("candidates", "index"), ("candidates", "none"), ("index", "none"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="scifact,cranfield,cisi,med,npl")
    parser.add_argument("--depth", type=int, default=rb.DEPTH, help="top_k of each search (nDCG@10 is read from it)")
    args = parser.parse_args(argv)
    embedder = default_embedder()
    results: dict[str, dict[str, rb.Row]] = {}
    lines: list[list[str]] = []
    for name in args.datasets.split(","):
        folder = (rb.DATA / name).resolve()
        data = load_beir(folder, "test")
        path = eval_store_path(folder, embedder.name)
        if not path.exists():
            raise SystemExit(f"{path} is missing: run benchmarks/retrieval_beir.py --datasets {name} first")
        rows: dict[str, rb.Row] = {}
        with Rag(SqliteStore(path, keyword_analyzer="auto"), embedder, cache=True) as rag:
            rag.search("warm up", top_k=10)
            for row, spec in CONFIGS:
                start = time.time()
                run = run_config(rag, data, parse_config(spec), depth=args.depth)
                rows[row] = rb.row_of(name, row, run.run, data.qrels, run.latencies)
                rb.log(f"{name} {row}: nDCG@10 {rows[row].ndcg.mean:.4f} ({time.time() - start:.0f} s)")
        results[name] = rows
        lines.extend(rb.paired_row(name, rows[a], rows[b]) for a, b in PAIRS)
    for a, b in PAIRS:
        both = rb.pooled(results, a, b)
        if both is not None:
            lines.append(rb.paired_row("all", *both))
    print(f"Rocchio scope, top_k={args.depth}, nDCG@10 (recall@100 in the per-collection table)")
    print(
        rb.table(
            ["collection", *(row for row, _ in CONFIGS)],
            [
                [name, *(f"{rows[r].ndcg.mean:.4f} ({rows[r].recall100:.4f})" for r, _ in CONFIGS)]
                for name, rows in results.items()
            ],
        )
    )
    print(rb.table(["collection", "row", "against", "difference [95% CI]", "better", "W/L/T"], lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
