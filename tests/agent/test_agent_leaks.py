"""The agent's tools under the leak audit: 0 leaks, and the audit counts leaks once the identity binding
is removed (proof the gate can fail)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ragwright.agent import AgentTools
from ragwright.graph import GraphOptions
from ragwright.model.identity import Identity
from ragwright.rag import Rag
from ragwright.rag_agent import enable_agent
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder
from ragwright.testing.leaks import LeakAudit

IDENTITIES = [Identity("acme"), Identity("acme", ("hr",)), Identity("globex", ("finance", "legal"))]


def agent_rag(path: Path, *, graph: bool = False) -> Rag:
    rag = Rag(
        SqliteStore(path),
        HashingEmbedder(max_tokens=48),
        graph=GraphOptions(merge_similarity=None) if graph else None,
    )
    enable_agent(rag)  # the tools only: the audit drives them as a hostile model would
    return rag


def test_agent_tools_leak_nothing(tmp_path: Path) -> None:
    audit = LeakAudit(
        lambda: agent_rag(tmp_path / "s.db", graph=True), queries_per_identity=8, identities=IDENTITIES, ask_every=0
    )
    report = audit.run()
    assert report.by_mode["agent-tools"] > 100, report.by_mode
    assert report.leaks == 0, report.examples


def test_the_audit_catches_tools_that_take_the_identity_from_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unbind the identity (the tools obey the tenant and groups the model writes) and the audit counts
    leaks on the agent's tools."""

    def from_the_model(self: AgentTools, arguments: Mapping[str, Any]) -> Identity:
        return Identity(arguments.get("tenant") or self.identity.tenant, tuple(arguments.get("groups") or ()))

    monkeypatch.setattr(AgentTools, "caller", from_the_model)
    audit = LeakAudit(lambda: agent_rag(tmp_path / "s.db"), queries_per_identity=4, identities=IDENTITIES, ask_every=0)
    report = audit.run()
    assert report.leaks_by_mode["agent-tools"] > 0, report.leaks_by_mode
    assert set(report.leaks_by_mode) == {"agent-tools"}, report.leaks_by_mode  # the other paths stay clean
