"""Conversation memory under the leak audit (SQLite and PostgreSQL): 0 leaks, and the audit catches memory
without its checks."""

from typing import Any

import pytest

from ragwright.memory import MemoryOptions, MemoryScope, PersistentMemoryOptions
from ragwright.model.identity import Identity
from ragwright.options import RagOptions
from ragwright.rag import Rag
from ragwright.rag_memory import RagMemory, enable_memory
from ragwright.testing.doubles import HashingEmbedder
from ragwright.testing.leaks import LeakAudit
from tests.graph.backends import open_at

IDENTITIES = [Identity("acme"), Identity("acme", ("hr",)), Identity("globex", ("finance", "legal"))]
MODES = {"memory-ask", "memory-recall"}


def memory_rag(location: str) -> Rag:
    rag = Rag(
        open_at(location),
        HashingEmbedder(max_tokens=48),
        rag_options=RagOptions(answerability="off", extractive_min_similarity=0.05),
    )
    enable_memory(rag, MemoryOptions(persistent=PersistentMemoryOptions(top_k=5)))
    return rag


def audit(location: str) -> Any:
    return LeakAudit(lambda: memory_rag(location), queries_per_identity=8, identities=IDENTITIES, ask_every=0).run()


def test_memory_paths_leak_nothing(location: str) -> None:
    report = audit(location)
    assert set(report.by_mode) >= MODES, report.by_mode
    assert report.by_mode["memory-recall"] > 0
    assert report.leaks == 0, report.examples


def test_the_audit_catches_memory_without_its_access_recheck(location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(RagMemory, "_visible", lambda self, ids, who: True)
    report = audit(location)
    assert report.leaks_by_mode["memory-recall"] + report.leaks_by_mode["memory-ask"] > 0, report.by_mode


def test_the_audit_catches_memory_shared_across_identities(location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both layers removed: one scope for everyone, and no re-check of a remembered answer's sources (the
    re-check alone already stops another identity's answers: tests/memory/test_persistent.py pins the scope)."""
    monkeypatch.setattr(MemoryScope, "of", classmethod(lambda cls, identity: cls("everyone", "")))
    monkeypatch.setattr(RagMemory, "_visible", lambda self, ids, who: True)
    report = audit(location)
    assert report.leaks_by_mode["memory-recall"] + report.leaks_by_mode["memory-ask"] > 0, report.by_mode
