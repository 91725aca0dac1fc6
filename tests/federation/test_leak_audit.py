"""The shipped leak audit (``ragwright.testing.leaks.LeakAudit``) through a federation of two stores.

The audit's corpus is spread over two sources (a SQLite store's two physical collections) by document;
every probe — each retrieval mode, ``ask``, after ACL updates and deletions — runs as a federated search
as the probing identity. The leak rate must be 0.
"""

import zlib
from pathlib import Path
from typing import Any

import pytest

from ragwright.model.identity import Identity
from ragwright.options import ParentOptions
from ragwright.rag import Rag
from ragwright.rag_federation import federate
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder
from ragwright.testing.leaks import GROUPS, TENANTS, LeakAudit

IDENTITIES = [Identity("acme"), Identity("acme", ("hr",)), Identity("globex", ("finance", "legal")), Identity("x")]


class _Records:
    def __init__(self, rags: list[Rag]) -> None:
        self.rags = rags

    def list_records(self, status: Any = None) -> list[Any]:
        return [r for rag in self.rags for r in rag.store.list_records(status)]


class FederatedAuditRag:
    """What the audit drives, over a federation: each document ingested into one of two sources (by a hash
    of its id), ACL changes and removals sent to the source holding it, every search and ask federated."""

    graph = None

    def __init__(self, path: Path) -> None:
        store = SqliteStore(path)
        embedder = HashingEmbedder(max_tokens=24)
        parents = ParentOptions(chunk_size=120, overlap=10)
        self.a = Rag(store, embedder, parents=parents)
        self.b = Rag(store.open_collection(store.create_collection("b")), embedder, parents=parents)
        self.fed = federate({"a": self.a, "b": self.b})
        self.store = _Records([self.a, self.b])
        self.where: dict[str, Rag] = {}

    def ingest(self, source: Any, **kwargs: Any) -> Any:
        doc = next(iter(source.items())).document_id
        target = self.where.setdefault(doc, self.a if zlib.crc32(doc.encode()) % 2 else self.b)
        return target.ingest(source, **kwargs)

    def search(self, query: str, *, identity: Identity, top_k: int, **overrides: Any) -> Any:
        options = self.a.retrieval_options.merged(**overrides)
        return self.fed.search(query, options, identity=identity, top_k=top_k)

    def ask(self, question: str, *, identity: Identity) -> Any:
        return self.fed.ask(question, identity=identity)

    def update_acl(self, doc: str, **kwargs: Any) -> Any:
        return self.where[doc].update_acl(doc, **kwargs)

    def remove(self, doc: str) -> Any:
        return self.where[doc].remove(doc)

    def close(self) -> None:
        self.a.close(), self.b.close()


def test_leak_audit_through_a_federation(tmp_path: Path) -> None:
    holder: list[FederatedAuditRag] = []

    def factory() -> Any:
        holder.append(FederatedAuditRag(tmp_path / "s.db"))
        return holder[-1]

    report = LeakAudit(factory, queries_per_identity=8, identities=IDENTITIES).run()
    fed = holder[0]
    assert {id(r) for r in fed.where.values()} == {id(fed.a), id(fed.b)}  # both sources hold documents
    assert report.results_checked > 500 and {"dense", "bm25", "hybrid", "ask"} <= set(report.by_mode)
    assert report.leaks == 0, report.examples


def test_the_audit_catches_a_federation_without_the_callers_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Proof the gate can fail here: sources searched as every tenant (no security filter) leak."""
    from ragwright.rag_federation import _Bound

    async def unfiltered(self: _Bound, query: str, *, identity: Identity, top_k: int) -> list[Any]:
        out: list[Any] = []
        for tenant in TENANTS:
            out += await self.rag.asearch(query, self.options, identity=Identity(tenant, GROUPS), top_k=top_k)
        return out

    monkeypatch.setattr(_Bound, "search", unfiltered)
    report = LeakAudit(
        lambda: FederatedAuditRag(tmp_path / "s.db"), queries_per_identity=4, identities=IDENTITIES
    ).run()
    assert report.leaks > 0
