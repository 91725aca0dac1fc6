"""Leak test through federation: every source filters inside its own search, as the caller.

Two sources (two physical collections of one SQLite store) hold independent multi-tenant corpora whose
document ids collide (``doc0.md`` … in both, with different tenants and ACLs). Every identity probes
them through every retrieval mode and ``ask``; a result leaks when its document is not visible to the
identity *in the source it came from* (or its chunk's tenant/ACL fails the check). The last test proves
the probe can fail: with the per-source filter removed, leaks appear.
"""

import random
from pathlib import Path
from typing import Any

import pytest

from ragwright.federation import FederatedResults
from ragwright.model.identity import Identity
from ragwright.rag import Rag
from ragwright.rag_federation import FederatedRag, federate
from ragwright.stores.sqlite import SqliteStore
from tests.security.test_leaks import GROUPS, MODES, TENANTS, WORDS, build, identities, visible

Access = dict[str, tuple[str, tuple[str, ...]]]


@pytest.fixture
def federation(tmp_path: Path) -> Any:
    store = SqliteStore(tmp_path / "s.db")
    live, access_live = build(store, seed=11)
    name = store.create_collection("second")
    second, access_second = build(store.open_collection(name), seed=12)
    fed = federate({"live": live, name: second}, weights={name: 0.7})
    yield fed, {"live": access_live, name: access_second}
    for rag in (live, second):
        rag.close()


def probe(fed: FederatedRag, access: dict[str, Access], rounds: int) -> tuple[int, int, list[str]]:
    checked = leaks = 0
    examples: list[str] = []
    rng = random.Random(3)
    main: Rag = fed.main

    def check(identity: Identity, results: Any, mode: str) -> None:
        nonlocal checked, leaks
        for r in results:
            checked += 1
            allowed = visible(identity, access[r.source])
            if r.document_id not in allowed or not identity.can_see(r.chunk.tenant, r.chunk.acl):
                leaks += 1
                examples.append(f"{mode}: {identity} got {r.source}/{r.document_id}")

    for identity in identities():
        for _ in range(rounds):
            query = " ".join(rng.sample(WORDS, 3))
            for mode, overrides in MODES.items():
                options = main.retrieval_options.merged(**overrides)
                found = fed.search(query, options, identity=identity, top_k=8)
                assert isinstance(found, FederatedResults) and not found.failures
                check(identity, found, mode)
            check(identity, fed.ask(query, identity=identity).sources, "ask")
    return checked, leaks, examples


def test_no_source_leaks_through_the_federation(federation: Any) -> None:
    fed, access = federation
    checked, leaks, examples = probe(fed, access, rounds=3)
    assert checked > 1000 and leaks == 0, examples[:5]


def test_a_document_hidden_in_one_source_never_appears_from_it(federation: Any) -> None:
    """``docN.md`` exists in both sources; where an identity may see only one copy, only that one appears."""
    fed, access = federation
    (live_name, other_name) = fed.options.names
    seen_split = 0
    for identity in identities():
        for doc in access[live_name]:
            in_live = doc in visible(identity, access[live_name])
            in_other = doc in visible(identity, access[other_name])
            if in_live == in_other:
                continue
            seen_split += 1
            text = fed.sources[live_name if in_live else other_name].store.document_chunks(doc)[0].text
            found = fed.search(text, identity=identity, top_k=20)
            hidden_source = other_name if in_live else live_name
            assert all(not (r.source == hidden_source and r.document_id == doc) for r in found)
    assert seen_split > 10


def test_removing_the_per_source_filter_is_caught(federation: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Proof the probe can fail: a federation that searched each source without the caller's identity
    (as every tenant with every group, i.e. no security filter) leaks."""
    from ragwright.rag_federation import _Bound

    everyone = [Identity(t, GROUPS) for t in TENANTS]

    async def unfiltered(self: _Bound, query: str, *, identity: Identity, top_k: int) -> list[Any]:
        out: list[Any] = []
        for who in everyone:
            out += await self.rag.asearch(query, self.options, identity=who, top_k=top_k)
        return out

    monkeypatch.setattr(_Bound, "search", unfiltered)
    fed, access = federation
    _, leaks, _ = probe(fed, access, rounds=1)
    assert leaks > 0
