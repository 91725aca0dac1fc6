"""Ingestion cost of GraphRAG's extractors: seconds per 1k chunks, with and without the graph.

Ingests the same documents (``../shared/docs-corpus`` markdown, html and plain files by default) into fresh
SQLite stores with the default embedder (MiniLM int8 ONNX), once without the graph and once per
extractor, and prints a table with the ratio to plain ingestion (issue 24: default ≤ 1.5×).

The LLM extractor (``--extractors rules,spacy,llm``) reads every chunk with the chat model (``--llm``,
default the local Qwen2.5-Coder-0.5B through llama.cpp, its default settings), far too slow for the whole
corpus on two cores: it ingests only a sample of a few documents (``--llm-docs``: the short Markdown
ones by default), beside plain ingestion of the same sample, and its seconds per 1k chunks are
**extrapolated** from that sample (the row says so). The model's calls, tokens and seconds (from its
ledger) and the chunks whose reply was unusable (the rule extractor's result is kept for those) follow.

    .venv/bin/python benchmarks/graph_ingest_cost.py [--extractors rules,spacy,llm] [--repeat 2]
        [--limit 60] [--llm local:0.5b] [--llm-docs docx/,md/]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from ragwright.graph import GraphOptions
from ragwright.models.embedders import default_embedder
from ragwright.models.llms import load_chat
from ragwright.models.llms.base import Message
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.sqlite import SqliteStore

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "docs-corpus"


def documents(limit: int) -> dict[str, bytes]:
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".md", ".txt", ".html") and "hostile" not in p.parts)
    return {str(p.relative_to(CORPUS)): p.read_bytes() for p in files[:limit]}


def run(
    docs: dict[str, bytes], extractor: str | None, llm: Any = None, stats: dict[str, Any] | None = None
) -> tuple[float, int]:
    embedder = default_embedder()
    embedder.embed_documents(["warm up"])
    with tempfile.TemporaryDirectory() as tmp:
        graph = GraphOptions(extractor=extractor) if extractor else None
        rag = Rag(SqliteStore(Path(tmp) / "s.db"), embedder, graph=graph, llm=llm)
        started = time.perf_counter()
        report = rag.ingest(BytesSource(docs))
        seconds = time.perf_counter() - started
        if stats is not None and rag.graph is not None:
            stats["fallbacks"] = getattr(rag.graph.index.extractor, "fallbacks", 0)
        rag.close()
    return seconds, report.chunks


def llm_sample(docs: dict[str, bytes], spec: str, prefixes: str) -> None:
    """The LLM extractor on the documents under *prefixes*, beside plain ingestion of the same ones."""
    llm = load_chat(spec)
    if llm is None:
        raise SystemExit(f"--llm {spec!r} is no chat model")
    llm.chat([Message("user", "Say OK.")], max_tokens=4)  # load the weights outside the timing
    ledger = getattr(llm, "ledger", None)
    before = ledger.snapshot() if ledger is not None else {}
    sample = {name: data for name, data in docs.items() if name.startswith(tuple(prefixes.split(",")))}
    base, chunks = run(sample, None)
    stats: dict[str, Any] = {}
    seconds, _ = run(sample, "llm", llm, stats)
    after = ledger.snapshot() if ledger is not None else {}
    used = {k: float(after[k]) - float(before[k]) for k in after}
    per_1k = 1000 / max(chunks, 1)
    print(f"\nLLM extractor ({llm.name}): a sample of {len(sample)} documents = {chunks} chunks, extrapolated to 1k")
    print("| extractor | chunks | seconds | s per 1k chunks (extrapolated) | × no graph (same sample) |")
    print("|---|---|---|---|---|")
    print(f"| none (sample) | {chunks} | {base:.1f} | {base * per_1k:.0f} | 1.00 |")
    print(f"| llm (sample) | {chunks} | {seconds:.1f} | {seconds * per_1k:.0f} | {seconds / base:.2f} |")
    if used:
        print(
            f"model calls {used['llm_calls']:.0f} (failed {used['llm_failures']:.0f}; replies unusable, rules kept: "
            f"{stats.get('fallbacks', 0)}), "
            f"{used['llm_seconds']:.1f} s in the model; per 1k chunks ≈ {used['prompt_tokens'] * per_1k:,.0f} prompt "
            f"+ {used['completion_tokens'] * per_1k:,.0f} completion tokens, {used['llm_seconds'] * per_1k:,.0f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--extractors", default="rules")
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--llm", default="local:0.5b", help="chat model of the llm extractor (load_chat spec)")
    parser.add_argument("--llm-docs", default="docx/,md/", help="the llm sample: documents under these folders")
    args = parser.parse_args()
    docs = documents(args.limit)
    names = [n for n in args.extractors.split(",") if n]
    rows: dict[str, list[tuple[float, int]]] = {}
    for _ in range(args.repeat):  # interleaved, so a busy machine slows every configuration alike
        for name in ["none", *(n for n in names if n != "llm")]:
            rows.setdefault(name, []).append(run(docs, None if name == "none" else name))
    base = min(s for s, _ in rows["none"])
    print(f"{len(docs)} documents; best of {args.repeat}")
    print("| extractor | chunks | seconds | s per 1k chunks | × no graph |\n|---|---|---|---|---|")
    for name, runs in rows.items():
        seconds, chunks = min(runs)
        print(f"| {name} | {chunks} | {seconds:.1f} | {1000 * seconds / max(chunks, 1):.0f} | {seconds / base:.2f} |")
    if "llm" in names:
        llm_sample(docs, args.llm, args.llm_docs)


if __name__ == "__main__":
    main()
