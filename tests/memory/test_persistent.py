"""Persistent memory: recall by similarity with a minimum score (skipped on an opaque scale, rank order
taken), strictly per identity scope (tenant + user), forgetting, and the isolation check's own power."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragwright.memory import (
    InProcessMemory,
    MemoryBackend,
    MemoryHit,
    MemoryItem,
    MemoryScope,
    PersistentMemoryOptions,
    SessionState,
    SqliteMemory,
    open_memory,
    recall,
)
from ragwright.memory.recall import select
from ragwright.model.identity import Identity
from ragwright.models.llms.base import Message
from ragwright.rag import Rag
from ragwright.rag_memory import enable_memory
from ragwright.stores.base import ScoreScale
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder

ANN = Identity("acme", ("hr",), user="ann")
BOB = Identity("acme", ("hr",), user="bob")  # same tenant and groups, another person
ANN_ELSEWHERE = Identity("globex", ("hr",), user="ann")  # same name, another tenant
SCOPES = {"ann": MemoryScope.of(ANN), "bob": MemoryScope.of(BOB), "globex-ann": MemoryScope.of(ANN_ELSEWHERE)}
FACTS = {
    "ann": "Ann's cat is called Marmalade and she prefers window seats",
    "bob": "Bob's cat is called Pepper and he prefers aisle seats",
    "globex-ann": "Globex Ann's cat is called Shadow and she prefers exit rows",
}


@pytest.fixture(params=["in_process", "sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryBackend]:
    if request.param == "postgres":
        from ragwright.stores.postgres import PostgresStore

        store = PostgresStore(request.getfixturevalue("pg_dsn"))
        yield open_memory(store)
        store.close()
        return
    made: MemoryBackend = InProcessMemory() if request.param == "in_process" else SqliteMemory.open(tmp_path / "m.db")
    yield made
    made.close()


def fill(backend: MemoryBackend, embedder: HashingEmbedder) -> None:
    for who, text in FACTS.items():
        backend.add(MemoryItem(text, SCOPES[who]), embedder.embed_documents([text])[0], embedder.name)


def leaks(backend: MemoryBackend, embedder: HashingEmbedder) -> list[str]:
    """Every item one scope can reach (search, listing) that another scope stored: must be empty."""
    found = []
    probe = embedder.embed_query("whose cat is called what, and which seats")
    for who, scope in SCOPES.items():
        reached = [h.item for h in backend.search(scope, probe, 10, embedder.name)] + backend.items(scope)
        found += [f"{who} reached {it.text!r}" for it in reached if it.text != FACTS[who]]
    return found


def test_each_scope_recalls_only_its_own_items(backend: MemoryBackend, hashing: HashingEmbedder) -> None:
    fill(backend, hashing)
    assert leaks(backend, hashing) == []
    for who, scope in SCOPES.items():
        assert [i.text for i in backend.items(scope)] == [FACTS[who]]
    assert backend.items(MemoryScope("acme", "carol")) == []


def test_the_isolation_check_fails_when_the_scope_filter_is_removed(
    backend: MemoryBackend, hashing: HashingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above has power: with each backend's one scope filter disabled it finds the leaks."""
    fill(backend, hashing)
    if isinstance(backend, SqliteMemory):
        monkeypatch.setattr(SqliteMemory, "_scope_sql", staticmethod(lambda scope: ("1 = 1", ())))
    else:
        monkeypatch.setattr(InProcessMemory, "_in_scope", staticmethod(lambda owner, scope: True))
    assert len(leaks(backend, hashing)) == 12  # each scope reaches the two others' items, by search and listing


def test_sessions_are_per_scope_and_forgetting_removes_them(backend: MemoryBackend, hashing: HashingEmbedder) -> None:
    ann, bob = SCOPES["ann"], SCOPES["bob"]
    backend.save_session(ann, "trip", SessionState((Message("user", "Book Lisbon"),), "summary A"))
    backend.save_session(bob, "trip", SessionState((Message("user", "Book Oslo"),)))
    assert backend.load_session(ann, "trip").turns[0].content == "Book Lisbon"
    assert backend.load_session(ann, "trip").summary == "summary A"
    assert backend.load_session(bob, "trip").turns[0].content == "Book Oslo"
    assert backend.load_session(SCOPES["globex-ann"], "trip") == SessionState()
    assert backend.sessions(ann) == ["trip"] and backend.sessions(SCOPES["globex-ann"]) == []
    fill(backend, hashing)
    item = MemoryItem("Ann booked Lisbon", ann, "turn", "trip")
    backend.add(item, hashing.embed_documents([item.text])[0], hashing.name)
    assert backend.forget(ann, session="trip") == 2  # the session's turn and the item it stored
    assert backend.load_session(ann, "trip") == SessionState() and backend.sessions(ann) == []
    assert [i.text for i in backend.items(ann)] == [FACTS["ann"]]  # the fact outside the session stays
    assert backend.load_session(bob, "trip").turns  # bob's session of the same name is untouched
    assert backend.forget(ann) == 1 and backend.items(ann) == []
    assert [i.text for i in backend.items(bob)] == [FACTS["bob"]]


def test_forgetting_by_id_and_the_item_cap(backend: MemoryBackend, hashing: HashingEmbedder) -> None:
    ann = SCOPES["ann"]
    items = [MemoryItem(f"fact number {i}", ann, created_at=float(i)) for i in range(5)]
    for it in items:
        backend.add(it, hashing.embed_documents([it.text])[0], hashing.name, max_items=3)
    assert [i.text for i in backend.items(ann)] == ["fact number 2", "fact number 3", "fact number 4"]
    assert backend.forget(ann, item_ids=[items[3].id]) == 1
    assert backend.forget(SCOPES["bob"], item_ids=[items[4].id]) == 0  # another scope cannot forget it
    assert [i.text for i in backend.items(ann)] == ["fact number 2", "fact number 4"]


def hit(text: str, score: float) -> MemoryHit:
    return MemoryHit(MemoryItem(text, SCOPES["ann"]), score)


def test_min_score_filters_similarity_scores() -> None:
    hits = [hit("a", 0.9), hit("b", 0.5), hit("c", 0.2)]
    assert [h.item.text for h in select(hits, PersistentMemoryOptions(min_score=0.4), ScoreScale.SIMILARITY)] == [
        "a",
        "b",
    ]
    assert len(select(hits, PersistentMemoryOptions(), ScoreScale.SIMILARITY)) == 3  # 0.0: all up to top_k
    assert len(select(hits, PersistentMemoryOptions(top_k=1), ScoreScale.SIMILARITY)) == 1


def test_an_opaque_scale_skips_the_threshold_and_takes_rank_order() -> None:
    rrf = [hit("first", 0.033), hit("second", 0.032), hit("third", 0.016), hit("fourth", 0.015)]
    chosen = select(rrf, PersistentMemoryOptions(min_score=0.6, top_k=3), ScoreScale.OPAQUE_RANKING)
    assert [h.item.text for h in chosen] == ["first", "second", "third"]
    assert select(rrf, PersistentMemoryOptions(min_score=0.6), ScoreScale.SIMILARITY) == []


def test_recalled_items_are_cut_whole_to_their_token_share() -> None:
    hits = [hit("word " * 10, 0.9), hit("word " * 10, 0.8)]
    assert len(select(hits, PersistentMemoryOptions(max_recall_tokens=16), ScoreScale.SIMILARITY)) == 1


class OpaqueMemory(InProcessMemory):
    """A backend ranking on an opaque scale (scores are tiny RRF-like values)."""

    score_scale = ScoreScale.OPAQUE_RANKING

    def search(self, scope: MemoryScope, vector: Any, k: int, model: str) -> list[MemoryHit]:
        return [MemoryHit(h.item, 1.0 / (60 + rank)) for rank, h in enumerate(super().search(scope, vector, k, model))]


def test_recall_through_an_opaque_backend_ignores_min_score(hashing: HashingEmbedder) -> None:
    backend = OpaqueMemory()
    fill(backend, hashing)
    options = PersistentMemoryOptions(min_score=0.5, top_k=2)
    found = recall(backend, hashing, "Marmalade window seats", SCOPES["ann"], options)
    assert [h.item.text for h in found] == [FACTS["ann"]]  # rank order, threshold skipped, own scope only
    similar = InProcessMemory()
    fill(similar, hashing)
    assert recall(similar, hashing, "zebra", SCOPES["ann"], options) == []  # a real cosine floor applies


def test_the_rag_remembers_recalls_and_forgets_per_identity(location: str, hashing: HashingEmbedder) -> None:
    from ragwright.memory import MemoryOptions
    from tests.graph.backends import open_at

    for store in (MemoryStore(), open_at(location)):
        rag = Rag(store, hashing)
        memory = enable_memory(rag, MemoryOptions(persistent=PersistentMemoryOptions(min_score=0.2)))
        memory.remember("Ann's preferred airport is Lisbon Humberto Delgado", identity=ANN)
        memory.remember("Bob's preferred airport is Oslo Gardermoen", identity=BOB)
        assert [h.item.text for h in memory.recall("preferred airport", identity=ANN)] == [
            "Ann's preferred airport is Lisbon Humberto Delgado"
        ]
        assert [h.item.text for h in memory.recall("preferred airport", identity=BOB)] == [
            "Bob's preferred airport is Oslo Gardermoen"
        ]
        assert memory.recall("preferred airport", identity=ANN_ELSEWHERE) == []
        assert memory.recall("preferred airport", identity=Identity("acme", ("hr",))) == []  # no user
        assert memory.forget(identity=ANN) == 1 and memory.recall("preferred airport", identity=ANN) == []
        assert memory.recall("preferred airport", identity=BOB)
        rag.close()


def test_persistent_memory_lives_in_the_store_file_created_lazily(tmp_path: Path, hashing: HashingEmbedder) -> None:
    import sqlite3

    from ragwright.memory import MemoryOptions

    path = tmp_path / "s.db"
    rag = Rag(SqliteStore(path), hashing)
    memory = enable_memory(rag, MemoryOptions(persistent=PersistentMemoryOptions()))
    assert memory.recall("anything", identity=ANN) == []  # reading creates nothing

    def tables() -> set[str]:
        conn = sqlite3.connect(path)
        try:
            return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            conn.close()

    assert "memory_items" not in tables()
    memory.remember("Ann likes green tea", identity=ANN)
    assert {"memory_items", "memory_turns", "memory_sessions"} <= tables()
    rag.close()
    again = Rag(SqliteStore(path), hashing)
    reopened = enable_memory(again, MemoryOptions(persistent=PersistentMemoryOptions()))
    assert [h.item.text for h in reopened.recall("green tea", identity=ANN)] == ["Ann likes green tea"]
    assert reopened.recall("green tea", identity=BOB) == []
    again.close()


def test_remembering_needs_persistent_memory_switched_on(hashing: HashingEmbedder) -> None:
    from ragwright.errors import ConfigError

    rag = Rag(MemoryStore(), hashing)
    with pytest.raises(ConfigError, match=r"PersistentMemoryOptions\(\)"):
        enable_memory(rag).remember("x", identity=ANN)


def test_identities_without_a_user_share_memory_only_with_the_same_groups() -> None:
    hr, finance = Identity("acme", ("hr",)), Identity("acme", ("finance",))
    assert MemoryScope.of(hr) != MemoryScope.of(finance)
    assert MemoryScope.of(hr) == MemoryScope.of(Identity("acme", ("hr",)))
    assert MemoryScope.of(ANN) == MemoryScope("acme", "ann")


def test_a_remembered_answer_is_not_recalled_once_its_source_is_hidden(tmp_path: Path) -> None:
    from ragwright.memory import MemoryOptions
    from ragwright.options import RagOptions
    from ragwright.sources import BytesSource

    rag = Rag(
        SqliteStore(tmp_path / "s.db"),
        HashingEmbedder(max_tokens=64),
        rag_options=RagOptions(answerability="off", extractive_min_similarity=0.1),
    )
    salary = b"# Salaries\n\nThe salary review for the platform team is due in March."
    rag.ingest(BytesSource({"salary.md": salary}), tenant="acme", acl=["hr"])
    memory = enable_memory(rag, MemoryOptions(persistent=PersistentMemoryOptions()))
    answered = rag.conversation(identity=ANN).ask("When is the salary review due?")
    assert not answered.declined
    assert memory.items(identity=ANN)[0].sources  # the chunk ids the answer was drawn from
    memory.remember("Ann prefers short answers", identity=ANN)
    assert len(memory.recall("salary review, short answers", identity=ANN)) == 2
    rag.update_acl("salary.md", groups=["board"])  # ann loses access to the source
    assert [h.item.text for h in memory.recall("salary review, short answers", identity=ANN)] == [
        "Ann prefers short answers"
    ]
    rag.close()
