"""Ingestion cost of GraphRAG's extractors: seconds per 1k chunks, with and without the graph.

Ingests the same documents (``../shared/docs-corpus`` markdown, html and plain files by default) into fresh
SQLite stores with the default embedder (MiniLM int8 ONNX), once without the graph and once per
extractor, and prints a table with the ratio to plain ingestion (issue 24: default ≤ 1.5×).

    .venv/bin/python benchmarks/graph_ingest_cost.py [--extractors rules,spacy] [--repeat 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from ragwright.graph import GraphOptions
from ragwright.models.embedders import default_embedder
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.sqlite import SqliteStore

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "docs-corpus"


def documents(limit: int) -> dict[str, bytes]:
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".md", ".txt", ".html") and "hostile" not in p.parts)
    return {str(p.relative_to(CORPUS)): p.read_bytes() for p in files[:limit]}


def run(docs: dict[str, bytes], extractor: str | None) -> tuple[float, int]:
    embedder = default_embedder()
    embedder.embed_documents(["warm up"])
    with tempfile.TemporaryDirectory() as tmp:
        graph = GraphOptions(extractor=extractor) if extractor else None
        rag = Rag(SqliteStore(Path(tmp) / "s.db"), embedder, graph=graph)
        started = time.perf_counter()
        report = rag.ingest(BytesSource(docs))
        seconds = time.perf_counter() - started
        rag.close()
    return seconds, report.chunks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--extractors", default="rules")
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    docs = documents(args.limit)
    rows: dict[str, list[tuple[float, int]]] = {}
    for _ in range(args.repeat):  # interleaved, so a busy machine slows every configuration alike
        for name in ["none", *args.extractors.split(",")]:
            rows.setdefault(name, []).append(run(docs, None if name == "none" else name))
    base = min(s for s, _ in rows["none"])
    print(f"{len(docs)} documents; best of {args.repeat}")
    print("| extractor | chunks | seconds | s per 1k chunks | × no graph |\n|---|---|---|---|---|")
    for name, runs in rows.items():
        seconds, chunks = min(runs)
        print(f"| {name} | {chunks} | {seconds:.1f} | {1000 * seconds / max(chunks, 1):.0f} | {seconds / base:.2f} |")


if __name__ == "__main__":
    main()
