"""GraphRAG under the leak audit: local search, show and global search leak nothing, and the audit
fails when the graph's identity filter is removed (proof the gate can fail)."""

from pathlib import Path

import pytest

from ragwright.graph import GraphOptions
from ragwright.model.identity import Identity
from ragwright.rag import Rag
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder
from ragwright.testing.leaks import LeakAudit

IDENTITIES = [Identity("acme"), Identity("acme", ("hr",)), Identity("globex", ("finance", "legal"))]
GRAPH_MODES = {"graph-local", "graph-show", "graph-global"}


def graph_rag(path: Path) -> Rag:
    return Rag(SqliteStore(path), HashingEmbedder(max_tokens=48), graph=GraphOptions(merge_similarity=None))


def test_graph_paths_leak_nothing(tmp_path: Path) -> None:
    audit = LeakAudit(lambda: graph_rag(tmp_path / "s.db"), queries_per_identity=8, identities=IDENTITIES, ask_every=0)
    report = audit.run()
    assert set(report.by_mode) >= GRAPH_MODES, report.by_mode
    assert report.by_mode["graph-local"] > 100
    assert report.leaks == 0, report.examples


def remove_the_graph_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both layers of the graph's filter gone: the SQL predicate and the chunk re-check."""
    from ragwright.graph.visibility import Visibility

    def everyone(self: Visibility) -> tuple[str, list[object]]:
        return "1 = 1", []

    def all_chunks(self: Visibility, chunk_ids: object) -> dict[str, object]:
        ids = list(chunk_ids)  # type: ignore[call-overload]
        out: dict[str, object] = {}
        for tenant in ("acme", "globex", "initech"):
            for chunk in self.store.get_chunks(ids, Identity(tenant, ("hr", "finance", "eng", "legal"))):
                out[chunk.id] = chunk
        return out

    monkeypatch.setattr(Visibility, "sql", everyone)
    monkeypatch.setattr(Visibility, "chunks", all_chunks)


def test_the_audit_catches_a_graph_without_its_identity_filter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove the graph's filter (both layers) and the audit reports names of hidden documents on the
    graph paths."""
    remove_the_graph_filter(monkeypatch)
    audit = LeakAudit(lambda: graph_rag(tmp_path / "s.db"), queries_per_identity=4, identities=IDENTITIES, ask_every=0)
    report = audit.run()
    leaking = {mode for mode, n in report.leaks_by_mode.items() if n}
    assert {"graph-local", "graph-show"} <= leaking, report.leaks_by_mode
