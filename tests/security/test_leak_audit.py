"""The leak audit as a CI gate: >= 200 probe queries per identity through every mode, leak rate 0."""

from pathlib import Path

import pytest

from ragwright.model.identity import Identity
from ragwright.options import ParentOptions
from ragwright.rag import Rag
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.stores.sqlite.chunks import SqliteChunks
from ragwright.stores.sqlite.rows import SqliteRows
from ragwright.testing.doubles import HashingEmbedder
from ragwright.testing.leaks import LeakAudit

IDENTITIES = [
    Identity("acme"),
    Identity("acme", ("hr",)),
    Identity("globex", ("finance", "legal")),
    Identity("initech", ("eng",)),
    Identity("nobody-tenant", ("hr",)),
]
ALL = ("hr", "finance", "eng", "legal")


def sqlite_rag(path: Path) -> Rag:
    return Rag(SqliteStore(path), HashingEmbedder(max_tokens=24), parents=ParentOptions(chunk_size=120, overlap=10))


@pytest.mark.slow
def test_leak_rate_is_zero_with_200_probes_per_identity(tmp_path: Path) -> None:
    audit = LeakAudit(lambda: sqlite_rag(tmp_path / "s.db"), queries_per_identity=200, identities=IDENTITIES)
    report = audit.run()
    assert report.probe_queries == 200 * len(IDENTITIES)
    assert set(report.by_mode) >= {"dense", "bm25", "hybrid", "parents", "neighbours", "ask"}
    assert report.results_checked > 10_000
    assert report.leaks == 0, report.examples


def test_leak_audit_on_the_memory_store() -> None:
    audit = LeakAudit(
        lambda: Rag(MemoryStore(), HashingEmbedder(max_tokens=24), parents=ParentOptions(chunk_size=120, overlap=10)),
        queries_per_identity=8,
    )
    report = audit.run()
    assert report.results_checked > 500 and report.leaks == 0, report.examples


@pytest.mark.parametrize("arm", ["keyword", "dense"])
def test_the_audit_catches_an_arm_without_its_filter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arm: str) -> None:
    """Proof the gate can fail: drop one arm's security filter and the audit reports leaks in that arm."""
    if arm == "keyword":  # both layers: the index's allowed set and the re-check when chunks are fetched
        chunk_rows = SqliteChunks.chunk_rows  # the SQLite store's chunk table (the rows its lookups decode)

        def everything(self: SqliteChunks, ids: list[str], identity: Identity) -> list[object]:
            return [r for t in ("acme", "globex", "initech") for r in chunk_rows(self, ids, Identity(t, ALL))]

        monkeypatch.setattr(SqliteRows, "allowed_ids", lambda self, identity, flt: None)
        monkeypatch.setattr(SqliteChunks, "chunk_rows", everything)
    else:
        original = SqliteStore.search_dense

        def unfiltered(self: SqliteStore, vector: object, k: int, *, identity: Identity, **kwargs: object) -> object:
            hits = []
            for tenant in ("acme", "globex", "initech"):
                everyone = Identity(tenant, ALL)
                hits += original(self, vector, k, identity=everyone, **kwargs)  # type: ignore[arg-type]
            return sorted(hits, key=lambda h: -h.score)[:k]  # type: ignore[attr-defined]

        monkeypatch.setattr(SqliteStore, "search_dense", unfiltered)
    audit = LeakAudit(lambda: sqlite_rag(tmp_path / "s.db"), queries_per_identity=8, identities=IDENTITIES[:3])
    report = audit.run()
    assert report.leaks > 0
    leaking = {m for m, n in report.leaks_by_mode.items() if n}
    assert ("bm25" if arm == "keyword" else "dense") in leaking


def _memory_rag() -> Rag:
    return Rag(MemoryStore(), HashingEmbedder(max_tokens=24), parents=ParentOptions(chunk_size=120, overlap=10))


def test_the_audit_covers_failed_documents_and_a_shared_source() -> None:
    from ragwright.model.records import DocumentStatus

    audit = LeakAudit(_memory_rag, queries_per_identity=4, identities=IDENTITIES[:3])
    rag = _memory_rag()
    audit.build(rag)
    failed = {r.document_id: (r.tenant, r.acl) for r in rag.store.list_records(DocumentStatus.FAILED)}
    assert sorted(failed) == ["acme-broken.pdf", "globex-broken.pdf", "initech-broken.pdf"]
    assert all(access == audit.access[doc] for doc, access in failed.items())
    shared = [d for d in audit.access if d.endswith("shared-handbook.md")]
    assert len(shared) == 3 and {audit.access[d][0] for d in shared} == {"acme", "globex", "initech"}
    report = audit.run()
    assert report.by_mode["registry"] > 0 and report.leaks == 0, report.examples


def test_the_audit_catches_a_dead_letter_outside_its_tenant(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proof the registry probe can fail: dead letters recorded as default|["*"] (issue 21 #1) are leaks."""
    import dataclasses

    from ragwright.ingest import pipeline
    from ragwright.ingest.deadletter import dead_letter

    def escaped(store: object, attempt: object, *args: object) -> None:
        public = dataclasses.replace(attempt, tenant="default", acl=("*",))  # type: ignore[type-var]
        dead_letter(store, public, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "dead_letter", escaped)
    report = LeakAudit(_memory_rag, queries_per_identity=4, identities=IDENTITIES[:3]).run()
    assert report.leaks_by_mode["registry"] > 0
    assert any("broken.pdf" in e for e in report.examples)


def test_the_audit_catches_a_shared_source_takeover(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proof the shared-source path can fail: without tenant-scoped ids, the second tenant takes the copy over."""
    monkeypatch.setattr("ragwright.sources.scoped.tenant_document_id", lambda tenant, document_id: document_id)
    report = LeakAudit(_memory_rag, queries_per_identity=4, identities=IDENTITIES[:3]).run()
    assert report.leaks_by_mode["shared-source"] == 2  # globex's and initech's ingestion took acme's copy


@pytest.mark.slow
def test_leak_rate_is_zero_through_strategies_and_warm_caches(tmp_path: Path) -> None:
    """Tags, time weighting, deep research (a model proposing cross-tenant sub-queries), CRAG, adaptive
    retrieval and the result/answer caches (the audit's second phase repeats every probe warm)."""
    from ragwright.retrieve.strategies.options import (
        DeepResearchOptions,
        StrategyOptions,
        TagRetrievalOptions,
        TimeWeightedOptions,
    )
    from ragwright.testing.doubles import ScriptedChat

    hostile = ScriptedChat(
        lambda messages: '{"sufficient": false, "subQueries": ["tenant globex secret", "initech salary", "merger"]}'
    )

    def factory() -> Rag:
        return Rag(
            SqliteStore(tmp_path / "s.db"),
            HashingEmbedder(max_tokens=24),
            parents=ParentOptions(chunk_size=120, overlap=10),
            llm=hostile,
            cache=True,
            strategies=StrategyOptions(
                tags=TagRetrievalOptions(min_score=0.3),
                time_weighting=TimeWeightedOptions(),
                deep_research=DeepResearchOptions(max_depth=2),
            ),
        )

    audit = LeakAudit(
        factory,
        queries_per_identity=24,
        identities=IDENTITIES,
        extra_modes={
            "crag": {"use_hybrid_search": True, "use_crag": True},
            "adaptive": {"use_hybrid_search": True, "use_adaptive_retrieval": True},
        },
        ask_every=4,
    )
    report = audit.run()
    assert {"crag", "adaptive", "ask"} <= set(report.by_mode)
    assert len(hostile.calls) > 0  # deep research really asked the model
    assert report.results_checked > 1000 and report.leaks == 0, report.examples
