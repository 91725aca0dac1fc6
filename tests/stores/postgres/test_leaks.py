"""The leak tests of tests/security on PostgreSQL: no retrieval path returns a chunk outside the visible set."""

import random

import pytest

from ragwright.model.identity import Identity
from ragwright.stores.postgres import PostgresOptions, PostgresStore
from tests.security.test_leaks import MODES, WORDS, build, identities, visible


@pytest.mark.slow
@pytest.mark.parametrize("exact_threshold", [2000, 0], ids=["exact", "hnsw"])
def test_leak_rate_is_zero_across_modes(pg_dsn: str, exact_threshold: int) -> None:
    store = PostgresStore(pg_dsn, options=PostgresOptions(exact_threshold=exact_threshold, ef_search=10))
    rag, access = build(store)
    probes = leaks = 0
    rng = random.Random(1)
    try:
        for identity in identities():
            allowed = visible(identity, access)
            for _ in range(6):
                query = " ".join(rng.sample(WORDS, 3))
                for overrides in MODES.values():
                    for r in rag.search(query, top_k=8, identity=identity, **overrides):
                        probes += 1
                        leaks += r.document_id not in allowed or not identity.can_see(r.chunk.tenant, r.chunk.acl)
                answer = rag.ask(query, identity=identity)
                leaks += sum(s.document_id not in allowed for s in answer.sources)
    finally:
        rag.close()
    assert probes > 500 and leaks == 0


def test_acl_changes_and_deletions_take_effect_everywhere(pg_dsn: str) -> None:
    rag, access = build(PostgresStore(pg_dsn), seed=3)
    try:
        target = next(doc for doc, (tenant, acl) in access.items() if tenant == "acme" and "*" in acl)
        reader = Identity("acme")
        query = rag.store.document_chunks(target)[0].text
        assert any(r.document_id == target for r in rag.search(query, top_k=40, identity=reader))
        rag.update_acl(target, groups=["board"])
        for overrides in MODES.values():
            assert all(r.document_id != target for r in rag.search(query, top_k=40, identity=reader, **overrides))
        rag.remove(target)
        board = Identity("acme", ("board",))
        for overrides in MODES.values():
            assert all(r.document_id != target for r in rag.search(query, top_k=40, identity=board, **overrides))
    finally:
        rag.close()


def test_removing_the_keyword_arm_filter_is_caught(pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Proof the leak test can fail here too: with the keyword arm's filter disabled, a leak appears."""
    store = PostgresStore(pg_dsn)
    rag, access = build(store, seed=5)
    monkeypatch.setattr(PostgresStore, "_allowed_ids", lambda self, conn, identity, flt, version: None)
    monkeypatch.setattr(
        PostgresStore,
        "get_chunks",
        lambda self, ids, identity: [
            c for doc in access for c in PostgresStore.document_chunks(self, doc) if c.id in set(ids)
        ],
    )
    leaked = 0
    try:
        for identity in identities():
            allowed = visible(identity, access)
            for word in WORDS:
                hits = rag.search(word, top_k=10, identity=identity, use_dense_search=False, use_keyword_search=True)
                leaked += sum(r.document_id not in allowed for r in hits)
    finally:
        rag.close()
    assert leaked > 0
