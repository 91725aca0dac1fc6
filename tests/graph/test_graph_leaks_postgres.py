"""The graph's leak audit (tests/security/test_graph_leaks.py) on PostgreSQL: local search, show and
global search leak nothing, and the audit fails when the graph's identity filter is removed."""

import pytest

from ragwright.graph import GraphOptions
from ragwright.rag import Rag
from ragwright.stores.postgres import PostgresStore
from ragwright.testing.doubles import HashingEmbedder
from ragwright.testing.leaks import LeakAudit
from tests.security.test_graph_leaks import GRAPH_MODES, IDENTITIES, remove_the_graph_filter

pytestmark = pytest.mark.integration


def graph_rag(dsn: str) -> Rag:
    return Rag(PostgresStore(dsn), HashingEmbedder(max_tokens=48), graph=GraphOptions(merge_similarity=None))


def test_graph_paths_leak_nothing_on_postgres(pg_dsn: str) -> None:
    audit = LeakAudit(lambda: graph_rag(pg_dsn), queries_per_identity=8, identities=IDENTITIES, ask_every=0)
    report = audit.run()
    assert set(report.by_mode) >= GRAPH_MODES, report.by_mode
    assert report.by_mode["graph-local"] > 100
    assert report.leaks == 0, report.examples


def test_the_audit_catches_a_graph_without_its_identity_filter_on_postgres(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    remove_the_graph_filter(monkeypatch)
    audit = LeakAudit(lambda: graph_rag(pg_dsn), queries_per_identity=4, identities=IDENTITIES, ask_every=0)
    report = audit.run()
    leaking = {mode for mode, n in report.leaks_by_mode.items() if n}
    assert {"graph-local", "graph-show"} <= leaking, report.leaks_by_mode
