"""Query transforms on BEIR: hybrid vs hybrid + multi-query vs hybrid + HyDE with the local model.

Seed 003's rule is "keep a technique only where the benchmark shows a gain": this script measures the
gain (nDCG@10 with its 95% bootstrap interval, and the paired difference against plain hybrid on the
same queries) and the price (added latency per query, chat calls and generated tokens per query).

* Datasets: SciFact and Cranfield under ``../shared/data`` (BEIR layout), the cached evaluation store
  of ``ragwright eval`` (ingested once with the default embedder, see ``retrieval_beir.py``).
* Generation is slow on CPU (the 0.5B model writes ~30 tokens/s on one free core, far less on a busy
  one), so only a **subsample** of the judged queries runs: ``--queries N`` (default 50), drawn with a
  fixed ``--seed``; the output says how many. All three configurations see the same queries.
* Ranking: hybrid RRF (dense + BM25), top 100 chunks → documents (first occurrence), as ``ragwright eval``.
* Multi-query: ``--variants`` phrasings (default 3) from one call; the original weighted 1.5, variants 1.0.
  HyDE: ``--hypotheses`` passages (the seed's default is 3; fewer is cheaper) of at most
  ``--hyde-tokens`` tokens at temperature 0.8, averaged; BM25 keeps the raw query.
* A transform that fails on a query falls back (raw query), as in production; the fallbacks are counted.

Usage::

    python benchmarks/transforms_beir.py [--datasets scifact,cranfield] [--queries 50] [--hypotheses 3]
        [--llm local:0.5b] [--threads 1]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

from retrieval_beir import prepare_store  # noqa: E402  (sibling benchmark: the cached evaluation store)

from ragwright._sync import run_sync  # noqa: E402
from ragwright.eval.datasets import load_beir  # noqa: E402
from ragwright.eval.metrics import ndcg_at_k, recall_at_k  # noqa: E402
from ragwright.eval.runner import documents_from_results  # noqa: E402
from ragwright.eval.stats import bootstrap_ci, paired_bootstrap  # noqa: E402
from ragwright.model.identity import Identity  # noqa: E402
from ragwright.options import RetrievalOptions  # noqa: E402
from ragwright.retrieve import Retriever  # noqa: E402
from ragwright.retrieve.transforms import HydeOptions, MultiQueryOptions, TransformOptions  # noqa: E402
from ragwright.retrieve.transforms.plan import RetrievalTrace  # noqa: E402
from ragwright.stores.sqlite import SqliteStore  # noqa: E402

DEPTH = 100


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass
class ConfigResult:
    name: str
    run: dict[str, list[str]] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    fallbacks: Counter[str] = field(default_factory=Counter)
    llm_calls: int = 0
    completion_tokens: int = 0


def sample_queries(judged: dict[str, str], n: int, seed: int) -> list[tuple[str, str]]:
    """*n* judged queries drawn with *seed*, kept in file order (all of them when n >= the total)."""
    items = list(judged.items())
    if n >= len(items):
        return items
    keep = set(random.Random(seed).sample(range(len(items)), n))
    return [item for i, item in enumerate(items) if i in keep]


def run_config(name: str, retriever: Retriever, queries: list[tuple[str, str]], chat: Any | None) -> ConfigResult:
    options = RetrievalOptions(use_hybrid_search=True, top_k=DEPTH)
    out = ConfigResult(name)
    before = chat.ledger.snapshot() if chat is not None and hasattr(chat, "ledger") else None
    for i, (qid, text) in enumerate(queries, start=1):
        trace = RetrievalTrace(text)
        start = time.perf_counter()
        results = run_sync(retriever.retrieve(text, options, Identity(), trace=trace))
        out.latencies.append(time.perf_counter() - start)
        out.run[qid] = documents_from_results(results)
        out.fallbacks.update(trace.fallbacks)
        if i % 10 == 0 or i == len(queries):
            log(f"    {name}: {i}/{len(queries)} ({statistics.mean(out.latencies):.1f} s/query)")
    if before is not None:
        after = chat.ledger.snapshot()
        out.llm_calls = int(after.get("llm_calls", 0)) - int(before.get("llm_calls", 0))
        out.completion_tokens = int(after.get("completion_tokens", 0)) - int(before.get("completion_tokens", 0))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="scifact,cranfield")
    parser.add_argument("--data", type=Path, default=DATA, help="folder holding the BEIR datasets")
    parser.add_argument("--queries", type=int, default=50, help="judged queries per dataset (a seeded subsample)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the query subsample")
    parser.add_argument("--llm", default="local:0.5b", help="chat model spec for ragwright.models.llms.load_chat")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp n_threads (default 1, see DESIGN.md)")
    parser.add_argument("--variants", type=int, default=3, help="multi-query variant_count")
    parser.add_argument("--mq-tokens", type=int, default=128, help="max tokens of the multi-query reply")
    parser.add_argument("--hypotheses", type=int, default=3, help="HyDE hypothesis_count")
    parser.add_argument("--hyde-tokens", type=int, default=96, help="max tokens per HyDE passage")
    args = parser.parse_args(argv)

    from ragwright.models.embedders import default_embedder
    from ragwright.models.llms import load_chat

    embedder = default_embedder()
    chat = load_chat(args.llm, n_threads=args.threads) if args.llm.startswith("local") else load_chat(args.llm)
    if chat is None:
        parser.error("--llm none leaves nothing to compare")
    configs = {
        "hybrid": None,
        f"+ multi-query ({args.variants} variants)": TransformOptions(
            multi_query=MultiQueryOptions(variant_count=args.variants, max_tokens=args.mq_tokens)
        ),
        f"+ HyDE ({args.hypotheses} hypotheses)": TransformOptions(
            hyde=HydeOptions(hypothesis_count=args.hypotheses, max_tokens=args.hyde_tokens)
        ),
    }
    started = time.perf_counter()
    print(f"model: {chat.name}, n_threads {args.threads}; embedder {embedder.name}", flush=True)
    print(" | ".join(HEADER), flush=True)
    for name in [n.strip() for n in args.datasets.split(",") if n.strip()]:
        dataset_dir = (args.data / name).resolve()
        data = load_beir(dataset_dir, "test")
        judged = data.judged_queries
        queries = sample_queries(judged, args.queries, args.seed)
        path, desc = prepare_store(dataset_dir, data, embedder, reingest=False)
        print(f"note: {name}: {len(queries)} of {len(judged)} judged queries (seed {args.seed}); {desc}", flush=True)
        log(f"{name}: {len(queries)} of {len(judged)} queries; {desc}")
        results: dict[str, ConfigResult] = {}
        with SqliteStore(path) as store:
            warm = Retriever(store, embedder)
            run_sync(warm.retrieve("warm up", RetrievalOptions(use_hybrid_search=True), Identity()))
            for label, transforms in configs.items():
                log(f"  {label}")
                retriever = Retriever(store, embedder, llm=chat if transforms else None, transforms=transforms)
                results[label] = run_config(label, retriever, queries, chat if transforms else None)
        for row in table_rows(name, results, {qid: data.qrels[qid] for qid, _ in queries}, len(queries)):
            print(" | ".join(row), flush=True)  # each dataset as soon as it is done
    print("* = the paired 95% interval excludes 0. Subsampled queries: read the intervals, not just the means.")
    print(f"total {time.perf_counter() - started:.0f} s")
    return 0


HEADER = (
    "dataset",
    "config",
    "nDCG@10 [95% CI]",
    "Δ nDCG@10 vs hybrid [95% CI] (wins/losses)",
    "R@100",
    "p50 ms",
    "added ms/query",
    "LLM calls/q",
    "gen tok/q",
    "fallbacks",
)


def table_rows(
    name: str, results: dict[str, ConfigResult], qrels: dict[str, dict[str, int]], n: int
) -> list[list[str]]:
    base = results["hybrid"]
    base_ndcg = ndcg_at_k(base.run, qrels, 10)
    base_mean = statistics.mean(base.latencies)
    rows = []
    for label, res in results.items():
        ndcg = ndcg_at_k(res.run, qrels, 10)
        ci = bootstrap_ci(list(ndcg.values()))
        recall = statistics.mean(recall_at_k(res.run, qrels, 100).values())
        if res is base:
            delta, added = "-", "-"
        else:
            paired = paired_bootstrap(base_ndcg, ndcg)
            d = paired.difference
            mark = " *" if paired.significant else ""
            delta = f"{d.mean:+.4f} [{d.low:+.4f}, {d.high:+.4f}]{mark} ({paired.wins}W/{paired.losses}L)"
            added = f"{(statistics.mean(res.latencies) - base_mean) * 1000:,.0f}"
        fallbacks = ", ".join(f"{k} {v}" for k, v in sorted(res.fallbacks.items())) or "none"
        rows.append(
            [
                name,
                label,
                f"{ci.mean:.4f} [{ci.low:.4f}, {ci.high:.4f}]",
                delta,
                f"{recall:.4f}",
                f"{statistics.median(res.latencies) * 1000:,.0f}",
                added,
                f"{res.llm_calls / n:.1f}",
                f"{res.completion_tokens / n:.0f}",
                fallbacks,
            ]
        )
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
