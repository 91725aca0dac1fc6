"""Hierarchical paths under the leak audit (SQLite and PostgreSQL): 0 leaks, and the audit catches a
hierarchy without its filter."""

from typing import Any

import pytest

from ragwright.hierarchy import HierarchyOptions
from ragwright.hierarchy import search as hsearch
from ragwright.model.identity import Identity
from ragwright.rag import Rag
from ragwright.testing.doubles import HashingEmbedder
from ragwright.testing.leaks import LeakAudit
from tests.graph.backends import open_at

IDENTITIES = [Identity("acme"), Identity("acme", ("hr",)), Identity("globex", ("finance", "legal"))]
MODES = {"hierarchy-two_stage", "hierarchy-tree", "hierarchy-multi_vector"}


def hierarchy_rag(location: str) -> Rag:
    return Rag(open_at(location), HashingEmbedder(max_tokens=48), hierarchy=HierarchyOptions(branching=3))


def test_hierarchy_paths_leak_nothing(location: str) -> None:
    audit = LeakAudit(lambda: hierarchy_rag(location), queries_per_identity=8, identities=IDENTITIES, ask_every=0)
    report = audit.run()
    assert set(report.by_mode) >= MODES, report.by_mode
    assert report.leaks == 0, report.examples


def test_the_audit_catches_a_hierarchy_without_its_filter(location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both layers removed (the row mask; the store re-check done as a caller who sees everything)."""

    def everything(rows: Any, identity: Identity) -> Any:
        import numpy as np

        return np.ones(len(rows), dtype=bool)

    def all_chunks(self: hsearch.HierarchySearch, ids: Any, identity: Identity) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for tenant in ("acme", "globex", "initech"):
            for chunk in self.store.get_chunks(list(ids), Identity(tenant, ("hr", "finance", "eng", "legal"))):
                out[chunk.id] = chunk
        return out

    monkeypatch.setattr(hsearch, "allowed_rows", everything)
    monkeypatch.setattr(hsearch.HierarchySearch, "visible_chunks", all_chunks)
    audit = LeakAudit(lambda: hierarchy_rag(location), queries_per_identity=4, identities=IDENTITIES, ask_every=0)
    report = audit.run()
    leaking = {mode for mode, n in report.leaks_by_mode.items() if n}
    assert {"hierarchy-two_stage", "hierarchy-tree"} <= leaking, report.leaks_by_mode
