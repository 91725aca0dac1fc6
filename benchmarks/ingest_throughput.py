"""Ingestion wall time against the embedder alone on the same chunks, in the same run.

For each corpus: ingest it into a fresh SQLite store (parse, chunk, embed, index, registry), then
embed exactly the chunks that ended up in the store with the bare embedder, and print the ratio.
Goal: ingestion ≤ 1.15× the embedder's time.

    python benchmarks/ingest_throughput.py [--corpus scifact|docs|both] [--limit N]

The docs corpus is ``../shared/docs-corpus`` without ``hostile/`` (files built to exhaust parsers) and
its MANIFEST. Parsing (PDF text, OCR of scanned pages) dominates there, so the table also shows the
parse stage's seconds and share of the wall time (stage seconds overlap: parsing runs on a producer
thread while the embedder works).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import tempfile
import time
from pathlib import Path

from ragwright.models.embedders import load_embedder
from ragwright.rag import Rag
from ragwright.sources import FolderSource, JsonlSource
from ragwright.sources.base import Source
from ragwright.sources.filesystem import DEFAULT_EXCLUDE
from ragwright.stores.sqlite import SqliteStore

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


class _Limited:
    """The first *n* items of a source."""

    def __init__(self, source: Source, n: int) -> None:
        self.source, self.n = source, n

    @property
    def root(self) -> str | None:
        return None

    def items(self):  # type: ignore[no-untyped-def]
        return itertools.islice(self.source.items(), self.n)

    def __len__(self) -> int:
        return min(self.n, len(self.source))


def measure(name: str, source: Source, embedder_spec: str) -> list[str]:
    embedder = load_embedder(embedder_spec)
    embedder.embed_documents(["warm up"])
    with tempfile.TemporaryDirectory() as tmp:
        rag = Rag(SqliteStore(Path(tmp) / "s.db"), embedder)
        start = time.perf_counter()
        report = rag.ingest(source)
        wall = time.perf_counter() - start
        texts = [
            c.text_for_embedding for rec in rag.store.list_records() for c in rag.store.document_chunks(rec.document_id)
        ]
        rag.close()
    start = time.perf_counter()
    embedder.embed_documents(texts)
    bare = time.perf_counter() - start
    for failure in report.failed:  # what was not indexed, and why (a timeout under load shows here)
        print(f"  failed: {Path(failure.document).name} [{failure.stage}] {failure.reason[:120]}", flush=True)
    stages = ", ".join(f"{k} {v:.1f}s" for k, v in sorted(report.stage_seconds.items()))
    parse = report.stage_seconds.get("parse", 0.0)
    return [
        name,
        f"{report.added}",
        f"{len(report.failed)}",
        f"{len(texts)}",
        f"{wall:.1f}",
        f"{bare:.1f}",
        f"{wall / bare:.2f}x" if bare else "-",
        f"{parse:.1f} ({parse / wall:.0%})" if wall else "-",
        stages,
    ]


def cpu_line() -> str:
    """The CPU model, its cores here and the instruction sets int8 inference speeds up with."""
    model, flags = "unknown CPU", set[str]()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model == "unknown CPU":
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        pass
    wanted = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")
    found = ", ".join(f for f in wanted if f in flags) or "none of " + ", ".join(wanted)
    return f"CPU: {model}, {os.cpu_count()} cores; int8-relevant flags: {found}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", choices=["scifact", "docs", "both"], default="both")
    parser.add_argument("--limit", type=int, default=1000, help="SciFact documents to ingest")
    parser.add_argument("--embedder", default="default")
    args = parser.parse_args()
    print(cpu_line(), flush=True)  # the ratio depends on the CPU: a fast int8 embedder leaves parsing exposed
    rows = [["corpus", "docs", "failed", "chunks", "ingest s", "embed-only s", "ratio", "parse s (share)", "stages"]]
    if args.corpus in ("scifact", "both"):
        source = _Limited(JsonlSource(SHARED / "data" / "scifact" / "corpus.jsonl"), args.limit)
        rows.append(measure(f"scifact[:{args.limit}]", source, args.embedder))
        print(" | ".join(rows[-1]), flush=True)  # each row as soon as it is measured
    if args.corpus in ("docs", "both"):
        docs = FolderSource(SHARED / "docs-corpus", exclude=(*DEFAULT_EXCLUDE, "hostile", "MANIFEST.md"))
        rows.append(measure("docs-corpus (no hostile/)", docs, args.embedder))
        print(" | ".join(rows[-1]), flush=True)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    print(json.dumps({"goal": "ingest <= 1.15x embed-only"}))


if __name__ == "__main__":
    main()
