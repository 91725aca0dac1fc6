from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragwright.model.identity import Identity
from ragwright.options import RetrievalOptions, TagRetrievalOptions
from ragwright.rag import Rag
from ragwright.retrieve.strategies.compose import build_retriever, tag_indexer
from ragwright.retrieve.strategies.tags import TagRetriever
from ragwright.sources import BytesSource
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder

LOOSE = TagRetrievalOptions(min_score=0.5)


def ingest(rag: Rag, doc: str, text: str, metadata: dict[str, Any], **kw: Any) -> None:
    rag.ingest(BytesSource({doc: text.encode()}), metadata=metadata, **kw)


def setup(rag: Rag) -> Rag:
    rag.ingestion.hooks.append(tag_indexer(rag.store, rag.embedder))
    ingest(rag, "fin1.txt", "Budget targets for the next quarter were raised.", {"department": "finance"})
    ingest(rag, "fin2.txt", "The budget review found the targets realistic.", {"department": "finance"})
    ingest(rag, "ops.txt", "Budget targets for the warehouse fleet.", {"department": "operations", "region": "north"})
    return rag


def search(retriever: Any, query: str, identity: Identity | None = None, **options: Any) -> Any:
    return asyncio.run(retriever.retrieve(query, RetrievalOptions(**options), identity or Identity()))


def test_each_tag_is_embedded_once(make_rag: Callable[[], Rag]) -> None:
    rag = setup(make_rag())
    table = rag.store.tag_table()  # type: ignore[attr-defined]
    pairs = table.embedded(rag.embedder.name)
    assert pairs == {("department", '"finance"'), ("department", '"operations"'), ("region", '"north"')}
    calls = rag.embedder.calls  # type: ignore[attr-defined]
    ingest(rag, "fin3.txt", "Another finance memo about budget.", {"department": "finance"})
    # one embedding call for the document's chunks, none for the already-known tag
    assert rag.embedder.calls == calls + 1  # type: ignore[attr-defined]


def test_query_discovers_the_tag_and_narrows_the_search(make_rag: Callable[[], Rag]) -> None:
    rag = setup(make_rag())
    tags = build_retriever(rag.retriever, tags=LOOSE)
    plain = search(rag.retriever, "finance budget targets", top_k=5)
    assert "ops.txt" in {r.document_id for r in plain}
    found = search(tags, "finance budget targets", top_k=5)
    assert {r.document_id for r in found} == {"fin1.txt", "fin2.txt"}
    assert found.extensions["tag_filter"] == {"department": "finance"}


def test_min_score_top_k_and_best_value_per_key(make_rag: Callable[[], Rag]) -> None:
    rag = setup(make_rag())
    strict = TagRetriever(rag.retriever, rag.store.tag_table(), rag.embedder, TagRetrievalOptions(min_score=0.99))  # type: ignore[attr-defined]
    assert strict.match("finance budget targets", Identity()) == {}
    one = TagRetriever(rag.retriever, rag.store.tag_table(), rag.embedder, LOOSE)  # type: ignore[attr-defined]
    assert one.match("north operations", Identity()) in ({"department": "operations"}, {"region": "north"})
    assert len(one.match("north operations", Identity())) == 1
    two = TagRetriever(rag.retriever, rag.store.tag_table(), rag.embedder, TagRetrievalOptions(top_k=2, min_score=0.5))  # type: ignore[attr-defined]
    assert two.match("north operations", Identity()) == {"department": "operations", "region": "north"}
    # two values of one key: the better one wins
    assert one.match("finance", Identity()) == {"department": "finance"}


def test_callers_filter_is_never_overridden(make_rag: Callable[[], Rag]) -> None:
    rag = setup(make_rag())
    tags = build_retriever(rag.retriever, tags=LOOSE)
    found = search(tags, "finance budget targets", metadata_filter={"department": "operations"})
    assert {r.document_id for r in found} == {"ops.txt"}
    assert found.extensions["tag_filter"] == {}


def test_tags_of_documents_the_caller_cannot_see_are_never_used(make_rag: Callable[[], Rag]) -> None:
    rag = make_rag()
    rag.ingestion.hooks.append(tag_indexer(rag.store, rag.embedder))
    ingest(rag, "secret.txt", "Budget of the merger project.", {"project": "merger"}, acl=["board"])
    ingest(rag, "other.txt", "Budget of the merger project.", {"project": "merger"}, tenant="acme")
    ingest(rag, "public.txt", "Budget of the canteen.", {"project": "canteen"})
    retriever = TagRetriever(rag.retriever, rag.store.tag_table(), rag.embedder, LOOSE)  # type: ignore[attr-defined]
    assert retriever.match("merger project", Identity()) == {}
    assert retriever.match("merger project", Identity(groups=("board",))) == {"project": "merger"}
    assert retriever.match("merger project", Identity(tenant="acme")) == {"project": "merger"}
    rag.remove("secret.txt")
    assert retriever.match("merger project", Identity(groups=("board",))) == {}


def test_empty_narrowed_search_is_relaxed(make_rag: Callable[[], Rag]) -> None:
    rag = setup(make_rag())
    tags = build_retriever(rag.retriever, tags=LOOSE)
    found = search(tags, "finance budget", metadata_filter={"region": "north"})
    assert [r.document_id for r in found] == ["ops.txt"]
    assert found.extensions["tag_filter_relaxed"] is True
    strict = build_retriever(rag.retriever, tags=TagRetrievalOptions(min_score=0.5, relax_on_empty=False))
    assert search(strict, "finance budget", metadata_filter={"region": "north"}) == []


def test_per_call_switch_and_failure_degrade(make_rag: Callable[[], Rag], monkeypatch: pytest.MonkeyPatch) -> None:
    rag = setup(make_rag())
    tags = build_retriever(rag.retriever, tags=LOOSE)
    off = search(tags, "finance budget targets", use_tag_retrieval=False)
    assert "ops.txt" in {r.document_id for r in off}

    def broken(*_: Any) -> Any:
        raise RuntimeError("tag table unreadable")

    monkeypatch.setattr(tags.table, "visible", broken)  # type: ignore[attr-defined]
    degraded = search(tags, "finance budget targets")
    assert "ops.txt" in {r.document_id for r in degraded}
    assert degraded.extensions["degraded"] == ["tags"]


def test_sqlite_tag_vectors_persist(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    rag = setup(Rag(SqliteStore(tmp_path / "s.db"), embedder))
    rag.close()
    again = SqliteStore(tmp_path / "s.db")
    assert ("department", '"finance"') in again.tag_table().embedded(embedder.name)
    kinds = {v for k, v, _ in again.tag_table().visible(embedder.name, Identity()) if k == "department"}
    assert kinds == {'"finance"', '"operations"'}
    again.close()
