"""The leak tests of tests/security on PostgreSQL: no retrieval path returns a chunk outside the visible set."""

import pytest

from ragwright.rag import Rag
from ragwright.stores.postgres import PostgresOptions, PostgresStore
from ragwright.stores.postgres.chunks import PostgresChunks
from ragwright.stores.postgres.search import PostgresSearch
from ragwright.testing.doubles import HashingEmbedder
from tests.security.test_leaks import (
    WORDS,
    assert_acl_changes_and_deletions_apply,
    assert_dead_letters_keep_their_access,
    build,
    identities,
    probe,
    visible,
)


@pytest.mark.slow
@pytest.mark.parametrize("exact_threshold", [2000, 0], ids=["exact", "hnsw"])
def test_leak_rate_is_zero_across_modes(pg_dsn: str, exact_threshold: int) -> None:
    store = PostgresStore(pg_dsn, options=PostgresOptions(exact_threshold=exact_threshold, ef_search=10))
    rag, access = build(store)
    try:
        probes, leaks = probe(rag, access, rounds=6)
    finally:
        rag.close()
    assert probes > 500 and leaks == 0


def test_acl_changes_and_deletions_take_effect_everywhere(pg_dsn: str) -> None:
    rag, access = build(PostgresStore(pg_dsn), seed=3)
    try:
        assert_acl_changes_and_deletions_apply(rag, access)
    finally:
        rag.close()


def test_dead_letters_keep_their_tenant_and_acl(pg_dsn: str) -> None:
    with Rag(PostgresStore(pg_dsn), HashingEmbedder()) as rag:
        assert_dead_letters_keep_their_access(rag)


def test_removing_the_keyword_arm_filter_is_caught(pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Proof the leak test can fail here too: with the keyword arm's filter disabled, a leak appears."""
    store = PostgresStore(pg_dsn)
    rag, access = build(store, seed=5)
    # The keyword arm's SQL filter (search.py) and the re-check of its hits (the chunk table's get_chunks).
    monkeypatch.setattr(PostgresSearch, "_allowed_ids", lambda self, conn, identity, flt, version: None)
    monkeypatch.setattr(
        PostgresChunks,
        "get_chunks",
        lambda self, ids, identity: [
            c for doc in access for c in PostgresChunks.document_chunks(self, doc) if c.id in set(ids)
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
