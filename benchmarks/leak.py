"""Leak benchmark: the leak rate of every retrieval mode, per store, as many identities.

Runs :class:`ragwright.testing.leaks.LeakAudit` — a multi-tenant corpus with per-document ACLs,
>= 200 probe queries per identity (marker words of documents the identity must not see, vocabulary,
injection-style requests) through every mode (dense, BM25, hybrid RRF and weighted, parents,
auto-merge, neighbours, MMR + redundancy, ``ask``), cold and warm, after ACL updates and after
deletions — and prints one table. The figure that matters is the leak rate: it must be 0.

Usage::

    python benchmarks/leak.py [--queries 200] [--stores memory,sqlite]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

from ragwright.options import ParentOptions  # noqa: E402
from ragwright.rag import Rag  # noqa: E402
from ragwright.testing.doubles import HashingEmbedder  # noqa: E402
from ragwright.testing.leaks import LeakAudit  # noqa: E402


def factories(tmp: Path) -> dict[str, Callable[[], Rag]]:
    from ragwright.stores.memory import MemoryStore
    from ragwright.stores.sqlite import SqliteStore

    parents = ParentOptions(chunk_size=120, overlap=10)
    return {
        "memory": lambda: Rag(MemoryStore(), HashingEmbedder(max_tokens=24), parents=parents),
        "sqlite": lambda: Rag(SqliteStore(tmp / "leak.db"), HashingEmbedder(max_tokens=24), parents=parents),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=200, help="probe queries per identity")
    parser.add_argument("--stores", default="memory,sqlite")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        available = factories(Path(tmp))
        head = ("store", "identities", "probes", "searches", "results", "leaks", "rate", "s")
        print("{:8} {:>10} {:>7} {:>9} {:>8} {:>6} {:>6} {:>6}".format(*head))
        modes: set[str] = set()
        for name in args.stores.split(","):
            started = time.perf_counter()
            report = LeakAudit(available[name], queries_per_identity=args.queries).run()
            modes |= set(report.by_mode)
            print(
                f"{name:8} {report.identities:>10} {report.probe_queries:>7} {report.searches:>9} "
                f"{report.results_checked:>8} {report.leaks:>6} {report.leak_rate:>6.3f} "
                f"{time.perf_counter() - started:>6.1f}"
            )
            for example in report.examples:
                print("  leak:", example)
        print("modes:", ", ".join(sorted(modes)))


if __name__ == "__main__":
    main()
