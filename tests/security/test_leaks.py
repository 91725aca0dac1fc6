"""Leak tests: no retrieval path ever returns a chunk outside the caller's visible set."""

import itertools
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragwright.model.identity import Identity
from ragwright.options import ParentOptions
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.stores.sqlite.chunks import SqliteChunks
from ragwright.stores.sqlite.rows import SqliteRows
from ragwright.stores.sqlite.schema import chunk_row
from ragwright.testing.doubles import HashingEmbedder

TENANTS = ("acme", "globex")
GROUPS = ("hr", "finance", "eng")
WORDS = ["merger", "salary", "roadmap", "budget", "launch", "audit", "policy", "secret", "plan", "report"]

MODES = {
    "dense": {"use_hybrid_search": False},
    "bm25": {"use_dense_search": False, "use_keyword_search": True},
    "hybrid": {"use_hybrid_search": True},
    "hybrid+neighbours": {"use_hybrid_search": True, "neighbour_window": 2},
    "hybrid+mmr+redundancy": {"use_hybrid_search": True, "use_mmr": True, "use_redundancy_filter": True},
    "dense, no parents": {"use_hybrid_search": False, "use_parent_document": False},
}


def build(store: object, seed: int = 0) -> tuple[Rag, dict[str, tuple[str, tuple[str, ...]]]]:
    rng = random.Random(seed)
    rag = Rag(store, HashingEmbedder(max_tokens=16), parents=ParentOptions(chunk_size=200, overlap=20))  # type: ignore[arg-type]
    access: dict[str, tuple[str, tuple[str, ...]]] = {}
    for i in range(40):
        tenant = rng.choice(TENANTS)
        acl = tuple(rng.sample(GROUPS, rng.randint(0, 2))) or (("*",) if rng.random() < 0.5 else ())
        body = "\n\n".join(" ".join(rng.choices(WORDS, k=10)) + "." for _ in range(4))
        rag.ingest(BytesSource({f"doc{i}.md": f"# Doc {i}\n\n{body}".encode()}), tenant=tenant, acl=list(acl) or [])
        access[f"doc{i}.md"] = (tenant, acl)
    return rag, access


def identities() -> list[Identity]:
    groups = [(), *[(g,) for g in GROUPS], ("hr", "finance")]
    return [Identity(t, g) for t, g in itertools.product(TENANTS, groups)]


def visible(identity: Identity, access: dict[str, tuple[str, tuple[str, ...]]]) -> set[str]:
    return {doc for doc, (tenant, acl) in access.items() if identity.can_see(tenant, acl)}


def probe(rag: Rag, access: dict[str, tuple[str, tuple[str, ...]]], rounds: int) -> tuple[int, int]:
    """Random queries as every identity through every mode and ``ask``: (results checked, leaks)."""
    probes = leaks = 0
    rng = random.Random(1)
    for identity in identities():
        allowed = visible(identity, access)
        for _ in range(rounds):
            query = " ".join(rng.sample(WORDS, 3))
            for overrides in MODES.values():
                for r in rag.search(query, top_k=8, identity=identity, **overrides):
                    probes += 1
                    leaks += r.document_id not in allowed or not identity.can_see(r.chunk.tenant, r.chunk.acl)
            answer = rag.ask(query, identity=identity)
            leaks += sum(s.document_id not in allowed for s in answer.sources)
    return probes, leaks


def assert_acl_changes_and_deletions_apply(rag: Rag, access: dict[str, tuple[str, tuple[str, ...]]]) -> None:
    """A public document made board-only vanishes for a reader in every mode; removed, for the board too."""
    target = next(doc for doc, (tenant, acl) in access.items() if tenant == "acme" and "*" in acl)
    reader = Identity("acme")
    query = rag.store.document_chunks(target)[0].text  # type: ignore[attr-defined]
    assert any(r.document_id == target for r in rag.search(query, top_k=40, identity=reader))
    rag.update_acl(target, groups=["board"])
    for overrides in MODES.values():
        assert all(r.document_id != target for r in rag.search(query, top_k=40, identity=reader, **overrides))
    rag.remove(target)
    board = Identity("acme", ("board",))
    for overrides in MODES.values():
        assert all(r.document_id != target for r in rag.search(query, top_k=40, identity=board, **overrides))


def assert_dead_letters_keep_their_access(rag: Rag) -> None:
    """A document that fails to parse keeps the tenant, ACL and metadata it was ingested with (issue 21 #1:
    it was recorded as default|["*"]): its owner lists it, nobody else does. A failed update by another
    tenant moves nothing: the record keeps the access of the chunks it still serves."""
    from ragwright.model.records import DocumentStatus

    def listed(identity: Identity) -> set[str]:
        return {r.document_id for r in rag.store.list_records() if identity.can_see(r.tenant, r.acl)}

    rag.ingest(BytesSource({"bad.pdf": b"%PDF-1.7 corrupt"}), tenant="beta", acl=["hr"], metadata={"team": "people"})
    rec = rag.store.get_record("bad.pdf")
    assert rec is not None and rec.status is DocumentStatus.FAILED
    assert (rec.tenant, rec.acl, rec.metadata.get("team")) == ("beta", ("hr",), "people")
    assert "bad.pdf" in listed(Identity("beta", ("hr",)))
    for outsider in (Identity(), Identity("beta"), Identity("acme", ("hr",))):
        assert "bad.pdf" not in listed(outsider)
    rag.ingest(BytesSource({"kept.md": b"the kept merger plan"}), tenant="acme", acl=["board"])
    rag.ingest(BytesSource({"kept.md": b"\x00\x01broken"}), tenant="globex")
    rec = rag.store.get_record("kept.md")
    assert rec is not None and rec.status is DocumentStatus.FAILED and rec.chunk_count >= 1
    assert (rec.tenant, rec.acl) == ("acme", ("board",))
    assert "kept.md" not in listed(Identity("globex"))
    for overrides in MODES.values():
        hits = rag.search("kept merger plan", identity=Identity("globex"), **overrides)
        assert all(r.document_id != "kept.md" for r in hits)


@pytest.mark.parametrize("make_store", [MemoryStore, "sqlite"], ids=["memory", "sqlite"])
def test_dead_letters_keep_their_tenant_and_acl(make_store: object, tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db") if make_store == "sqlite" else MemoryStore()
    with Rag(store, HashingEmbedder()) as rag:  # type: ignore[arg-type]
        assert_dead_letters_keep_their_access(rag)


@pytest.mark.parametrize("make_store", [MemoryStore, "sqlite"], ids=["memory", "sqlite"])
def test_leak_rate_is_zero_across_modes(make_store: object, tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db") if make_store == "sqlite" else MemoryStore()
    rag, access = build(store)
    probes, leaks = probe(rag, access, rounds=12)
    assert probes > 1000 and leaks == 0


def test_acl_changes_and_deletions_take_effect_everywhere(tmp_path: Path) -> None:
    rag, access = build(SqliteStore(tmp_path / "s.db"), seed=3)
    assert_acl_changes_and_deletions_apply(rag, access)


def test_removing_the_keyword_arm_filter_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Proof the leak test can fail: with the keyword arm's filter disabled, a leak appears."""
    store = SqliteStore(tmp_path / "s.db")
    rag, access = build(store, seed=5)
    # the SQLite store's parts: the eligible sets the keyword arm filters by, and the chunk table's lookup
    # (the rows it decodes: every document's, whoever asks)
    monkeypatch.setattr(SqliteRows, "allowed_ids", lambda self, identity, flt: None)
    monkeypatch.setattr(
        SqliteChunks,
        "chunk_rows",
        lambda self, ids, identity: [
            chunk_row(c, b"")[:14] for doc in access for c in self.document_chunks(doc) if c.id in set(ids)
        ],
    )
    leaked = 0
    for identity in identities():
        allowed = visible(identity, access)
        for word in WORDS:
            hits = rag.search(word, top_k=10, identity=identity, use_dense_search=False, use_keyword_search=True)
            leaked += sum(r.document_id not in allowed for r in hits)
    assert leaked > 0


acls = st.lists(st.sampled_from(["hr", "finance", "eng", "*"]), max_size=2, unique=True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    docs=st.lists(st.tuples(st.sampled_from(TENANTS), acls), min_size=1, max_size=8),
    who=st.tuples(st.sampled_from(TENANTS), st.lists(st.sampled_from(GROUPS), max_size=2)),
)
def test_property_no_result_outside_the_visible_set(
    docs: list[tuple[str, list[str]]], who: tuple[str, list[str]]
) -> None:
    rag = Rag(MemoryStore(), HashingEmbedder())
    access = {}
    for i, (tenant, acl) in enumerate(docs):
        rag.ingest(BytesSource({f"d{i}.md": b"shared words about the quarterly plan"}), tenant=tenant, acl=acl)
        access[f"d{i}.md"] = (tenant, tuple(sorted(acl)))
    identity = Identity(who[0], tuple(who[1]))
    allowed = visible(identity, access)
    for overrides in MODES.values():
        got = {r.document_id for r in rag.search("quarterly plan", top_k=10, identity=identity, **overrides)}
        assert got <= allowed
        if not overrides.get("use_redundancy_filter"):  # identical texts: the filter rightly keeps one
            assert got == allowed or len(got) == 10
