"""What ``ragwright eval`` does, kept apart from the CLI's argument handling."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragwright._paths import cache_root
from ragwright.errors import ConfigError
from ragwright.eval.configs import parse_config
from ragwright.eval.datasets import load_beir
from ragwright.eval.items import load_rag_benchmark
from ragwright.eval.rag_eval import evaluate_rag, ingest_benchmark
from ragwright.eval.report import render_table, summarize, write_report
from ragwright.eval.runner import run_config


def eval_store_path(dataset_dir: Path, embedder_name: str) -> Path:
    """A cache store per (dataset, embedder): ingestion runs once, later evaluations reuse it."""
    key = hashlib.sha256(str(dataset_dir.resolve()).encode()).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{dataset_dir.name}-{embedder_name}").strip("-")
    return cache_root() / "eval" / f"{slug}-{key}.db"


def is_rag_set(path: Path) -> bool:
    return (path / "items.jsonl").is_file() and (path / "corpus.jsonl").is_file()


def run_beir_eval(
    dataset_dir: Path,
    configs: Sequence[str],
    *,
    embedder: Any,
    split: str = "test",
    store_path: Path | None = None,
    limit: int | None = None,
    depth: int = 100,
    report_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    keyword_analyzer: str = "auto",
) -> tuple[dict[str, Any], str]:
    """Ingest (once) and evaluate *configs* on a BEIR dataset; returns (JSON payload, table text)."""
    from ragwright.rag import Rag
    from ragwright.sources import JsonlSource
    from ragwright.stores.open import open_store

    parsed = [parse_config(c) for c in configs] or [parse_config("dense")]
    names = [c.name for c in parsed]
    if len(set(names)) != len(names):
        raise ConfigError(f"configs must be distinct, got {names}")
    data = load_beir(dataset_dir, split)
    path = store_path or eval_store_path(dataset_dir, embedder.name)
    with Rag(open_store(path, keyword_analyzer=keyword_analyzer), embedder) as rag:
        ingest = rag.ingest(JsonlSource(data.corpus_path), progress=progress)
        runs = [run_config(rag, data, c, depth=depth, limit=limit) for c in parsed]
    report = summarize(dataset_dir.name, split, runs)
    payload = report.to_dict()
    payload["store"] = str(path)
    payload["keyword_analyzer"] = keyword_analyzer
    payload["ingest"] = ingest.to_dict()
    if report_dir is not None:
        payload["report"] = str(write_report(report, report_dir))
    return payload, render_table(report)


def run_rag_eval(set_dir: Path, *, embedder: Any, base: Path | None = None) -> tuple[dict[str, Any], str]:
    """Ingest a RAG benchmark set into a fresh in-memory store and evaluate ``ask`` on every item."""
    from ragwright.rag import Rag
    from ragwright.stores.memory import MemoryStore

    bench = load_rag_benchmark(set_dir, base=base)
    with Rag(MemoryStore(), embedder) as rag:
        ingest_benchmark(rag, bench)
        result = evaluate_rag(rag, bench)
    payload = result.to_dict()
    lines = [f"{set_dir.name}: {payload['items']} items (95% bootstrap CIs)"]
    for name, iv in payload["metrics"].items():
        lines.append(f"  {name:<20} {iv['mean']:.3f} [{iv['ci_low']:.3f}, {iv['ci_high']:.3f}]")
    lines.append("  categories: " + ", ".join(f"{k} {v}" for k, v in sorted(payload["categories"].items())))
    return payload, "\n".join(lines)


def run_qa_eval(state: Any, path: Path, *, limit: int | None = None, judge: bool = False) -> tuple[dict[str, Any], str]:
    """Ask every record of a QA.jsonl file against the CLI's store (its defaults) and score the answers."""
    from ragwright.eval.qa import evaluate_qa, load_qa, render

    items = load_qa(path)[:limit] if limit else load_qa(path)
    with state.open(must_exist=True) as rag:
        grader = rag.llm if judge else None
        if judge and grader is None:
            raise ConfigError("--judge needs a chat model: ragwright --llm local eval QA.jsonl --judge")
        report = evaluate_qa(rag.ask, items, judge=grader)
    payload = report.to_dict()
    payload["dataset"] = str(path)
    payload["store"] = str(state.store)
    return payload, render(report, path.name)
