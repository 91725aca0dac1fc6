"""The store conformance suites, one per capability; every store passes :class:`StoreConformance` (all of them).

Use them by subclassing in a test module and providing a ``store`` fixture::

    class TestMyStore(StoreConformance):
        @pytest.fixture
        def store(self, tmp_path):
            s = MyStore(...)
            yield s
            s.close()

A backend that offers only part of a store subclasses the suites of what it offers — e.g. a vector
database behind :class:`~ragwright.stores.base.VectorSearch`: :class:`VectorSearchConformance` and
:class:`FilterTranslationConformance` (overriding :meth:`put` with its own write path), beside
:class:`~ragwright.testing.lookup.ChunkLookupConformance`. The suites check the semantics of
:class:`~ragwright.stores.memory.MemoryStore` (the reference):

* :class:`VectorSearchConformance` — cosine ordering, the ``min_score`` floor, typed metadata filters
  applied *before* top-k, tenant and ACL isolation inside the search;
* :class:`FilterTranslationConformance` — random filters over random metadata give exactly what the
  reference matcher gives, in the dense arm and (for a keyword store) the keyword arm;
* :class:`DocumentStoreConformance` — atomic replacement of a document's chunks, removal, lookups by id
  under the caller's identity, access updates;
* :class:`RegistryConformance`, :class:`EmbeddingBindingConformance`, :class:`StagingConformance`;
* :class:`KeywordConformance` — the BM25 arm (not part of :class:`StoreConformance`).
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import numpy as np
import pytest

from ragwright.errors import StoreError
from ragwright.model.chunk import Chunk
from ragwright.model.filters import And, Compare, Eq, Exists, Filter, In, Not, Or, matches
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.testing.filters import filters, metadatas

DIM = 4


def unit(*values: float) -> np.ndarray[Any, np.dtype[np.float32]]:
    v = np.array(values + (0.0,) * (DIM - len(values)), dtype=np.float32)
    return v / np.linalg.norm(v)


def record(doc_id: str, n: int = 1, **kw: Any) -> DocumentRecord:
    return DocumentRecord(doc_id, f"memory:{doc_id}", f"hash-{doc_id}", DocumentStatus.INDEXED, chunk_count=n, **kw)


def chunks_for(doc_id: str, texts: list[str], **kw: Any) -> list[Chunk]:
    return [Chunk.create(doc_id, t, i, **kw) for i, t in enumerate(texts)]


class _Suite:
    """A ``store`` fixture (from the subclass), bound to an embedder of dimension ``DIM``, and a write path."""

    @pytest.fixture
    def bound(self, store: Any) -> Any:
        bind = getattr(store, "bind_embedder", None)  # a vector-only backend may have no binding
        if callable(bind):
            bind("test-model", DIM)
        return store

    def put(self, store: Any, doc_id: str, chunks: list[Chunk], vectors: list[Any]) -> None:
        """Write *chunks* of *doc_id* with their *vectors*: ``replace_document`` with an indexed record.
        A backend with another write path overrides this."""
        store.replace_document(record(doc_id, len(chunks)), chunks, np.stack(vectors))

    def _put(self, store: Any, doc_id: str, vectors: list[Any], **chunk_kw: Any) -> list[Chunk]:
        chunks = chunks_for(doc_id, [f"{doc_id} chunk {i}" for i in range(len(vectors))], **chunk_kw)
        self.put(store, doc_id, chunks, vectors)
        return chunks


class VectorSearchConformance(_Suite):
    """Dense search: cosine order, top-k and the floor, typed and compound filters before top-k, identity."""

    def test_search_orders_by_cosine(self, bound: Any) -> None:
        self._put(bound, "a", [unit(1, 0), unit(0, 1), unit(1, 1)])
        hits = bound.search_dense(unit(1, 0.1), 3, identity=Identity())
        assert [h.chunk.text for h in hits] == ["a chunk 0", "a chunk 2", "a chunk 1"]
        assert hits[0].score == pytest.approx(float(unit(1, 0) @ unit(1, 0.1)), abs=1e-5)
        assert all(hits[i].score >= hits[i + 1].score for i in range(len(hits) - 1))

    def test_top_k_and_min_score(self, bound: Any) -> None:
        self._put(bound, "a", [unit(1, 0), unit(0, 1), unit(1, 1)])
        assert len(bound.search_dense(unit(1, 0), 2, identity=Identity())) == 2
        hits = bound.search_dense(unit(1, 0), 10, identity=Identity(), min_score=0.5)
        assert {h.chunk.text for h in hits} == {"a chunk 0", "a chunk 2"}

    def test_metadata_filter_is_typed(self, bound: Any) -> None:
        num = chunks_for("n", ["number three"], metadata={"page": 3})
        txt = chunks_for("s", ["string three"], metadata={"page": "3"})
        flag = chunks_for("b", ["boolean"], metadata={"page": True})
        self.put(bound, "n", num, [unit(1)])
        self.put(bound, "s", txt, [unit(1)])
        self.put(bound, "b", flag, [unit(1)])
        ident = Identity()
        assert [
            h.chunk.text for h in bound.search_dense(unit(1), 5, identity=ident, metadata_filter=Eq("page", 3))
        ] == ["number three"]
        assert [
            h.chunk.text for h in bound.search_dense(unit(1), 5, identity=ident, metadata_filter=Eq("page", "3"))
        ] == ["string three"]
        assert [
            h.chunk.text for h in bound.search_dense(unit(1), 5, identity=ident, metadata_filter=Eq("page", 3.0))
        ] == ["number three"]
        assert [
            h.chunk.text for h in bound.search_dense(unit(1), 5, identity=ident, metadata_filter=Eq("page", 1))
        ] == []
        assert [
            h.chunk.text for h in bound.search_dense(unit(1), 5, identity=ident, metadata_filter=Eq("page", True))
        ] == ["boolean"]

    def test_filter_applies_before_top_k(self, bound: Any) -> None:
        vectors = [unit(1, 0.01 * i) for i in range(10)]
        chunks = [Chunk.create("d", f"c{i}", i, metadata={"keep": i >= 7}) for i in range(10)]
        self.put(bound, "d", chunks, vectors)
        hits = bound.search_dense(unit(1), 3, identity=Identity(), metadata_filter=Eq("keep", True))
        assert sorted(h.chunk.text for h in hits) == ["c7", "c8", "c9"]

    def test_compound_filters(self, bound: Any) -> None:
        meta = [
            {"dept": "finance", "year": 2024, "tags": ["q4", "plan"]},
            {"dept": "legal", "year": 2023},
            {"dept": "finance", "year": 2022},
            {"other": "x"},
        ]
        chunks = [Chunk.create("d", f"c{i}", i, metadata=m) for i, m in enumerate(meta)]
        self.put(bound, "d", chunks, [unit(1)] * 4)

        def texts(flt: Any) -> set[str]:
            return {h.chunk.text for h in bound.search_dense(unit(1), 10, identity=Identity(), metadata_filter=flt)}

        assert texts(And((Eq("dept", "finance"), Compare("year", "gte", 2023)))) == {"c0"}
        assert texts(Or((Eq("dept", "legal"), Eq("year", 2022)))) == {"c1", "c2"}
        assert texts(Not(Eq("dept", "finance"))) == {"c1", "c3"}
        assert texts(In("dept", ("legal", "hr"))) == {"c1"}
        assert texts(Eq("tags", "plan")) == {"c0"}
        assert texts(Exists("other")) == {"c3"}
        assert texts(Compare("dept", "gt", "g")) == {"c1"}

    def test_tenant_isolation_in_search(self, bound: Any) -> None:
        self._put(bound, "a", [unit(1)], tenant="acme")
        self._put(bound, "b", [unit(1)], tenant="globex")
        assert [h.chunk.document_id for h in bound.search_dense(unit(1), 10, identity=Identity("acme"))] == ["a"]
        assert [h.chunk.document_id for h in bound.search_dense(unit(1), 10, identity=Identity("globex"))] == ["b"]

    def test_acl_groups_and_missing_acl_denies(self, bound: Any) -> None:
        self._put(bound, "hr", [unit(1)], acl=("hr",))
        self._put(bound, "pub", [unit(1)], acl=("*",))
        self._put(bound, "nobody", [unit(1)], acl=())
        seen = {h.chunk.document_id for h in bound.search_dense(unit(1), 10, identity=Identity(groups=("eng",)))}
        assert seen == {"pub"}
        seen = {h.chunk.document_id for h in bound.search_dense(unit(1), 10, identity=Identity(groups=("hr",)))}
        assert seen == {"pub", "hr"}

    def test_empty_store_search(self, bound: Any) -> None:
        assert bound.search_dense(unit(1), 5, identity=Identity()) == []


class FilterTranslationConformance(_Suite):
    """Random filters over random metadata (:mod:`ragwright.testing.filters`) select exactly what the
    reference matcher selects, in the dense arm and, for a store with one, the keyword arm. Each example
    writes under a tenant of its own, so one store serves them all."""

    #: Examples per run (each writes one small document).
    examples = 100

    def test_filters_agree_with_the_reference_matcher(self, bound: Any) -> None:
        from hypothesis import HealthCheck, given, settings

        tenants = (f"t{i}" for i in itertools.count())
        keyword = callable(getattr(bound, "search_keyword", None))

        @settings(
            max_examples=self.examples, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
        )
        @given(flt=filters, metas=metadatas)
        def check(flt: Filter, metas: list[dict[str, Any]]) -> None:
            tenant = next(tenants)
            chunks = [Chunk.create(tenant, f"common c{i}", i, metadata=m, tenant=tenant) for i, m in enumerate(metas)]
            self.put(bound, tenant, chunks, [unit(1)] * len(chunks))
            who = Identity(tenant)
            expected = {c.text for c in chunks if matches(flt, c.metadata)}
            assert {
                h.chunk.text for h in bound.search_dense(unit(1), 100, identity=who, metadata_filter=flt)
            } == expected
            if keyword:
                found = bound.search_keyword("common", 100, identity=who, metadata_filter=flt)
                assert {h.chunk.text for h in found} == expected

        check()


class DocumentStoreConformance(_Suite):
    """Writes and lookups: atomic replacement, idempotence, removal, chunk fields, access updates."""

    def test_tenant_isolation_in_lookup(self, bound: Any) -> None:
        a = self._put(bound, "a", [unit(1)], tenant="acme")
        b = self._put(bound, "b", [unit(1)], tenant="globex")
        assert bound.get_chunks([a[0].id, b[0].id], Identity("acme")) == [a[0]]
        assert bound.get_chunks([a[0].id, b[0].id], Identity("globex")) == [b[0]]

    def test_replace_writes_new_then_removes_superseded(self, bound: Any) -> None:
        old = self._put(bound, "d", [unit(1), unit(0, 1)])
        new = chunks_for("d", ["rewritten"])
        bound.replace_document(record("d"), new, np.stack([unit(1)]))
        assert [c.text for c in bound.document_chunks("d")] == ["rewritten"]
        assert bound.get_chunks([c.id for c in old], Identity()) == []
        assert bound.count_chunks() == 1

    def test_same_input_twice_is_idempotent(self, bound: Any) -> None:
        self._put(bound, "d", [unit(1), unit(0, 1)])
        self._put(bound, "d", [unit(1), unit(0, 1)])
        assert bound.count_chunks() == 2

    def test_remove_document(self, bound: Any) -> None:
        self._put(bound, "a", [unit(1), unit(0, 1)])
        self._put(bound, "b", [unit(1)])
        assert bound.remove_document("a") == 2
        assert {h.chunk.document_id for h in bound.search_dense(unit(1), 10, identity=Identity())} == {"b"}
        rec = bound.get_record("a")
        assert rec is not None and rec.status is DocumentStatus.DELETED
        assert bound.remove_document("missing") == 0

    def test_chunk_fields_roundtrip(self, bound: Any) -> None:
        c = Chunk.create(
            "d",
            "body",
            0,
            section_path=("A", "B"),
            page=2,
            page_end=3,
            parent_id="p",
            prev_id=None,
            next_id="n",
            metadata={"k": [1, 2], "s": "v", "f": 1.5},
            tenant="t",
            acl=("g", "h"),
            embed_text="A > B\n\nbody",
        )
        bound.replace_document(record("d"), [c], np.stack([unit(1)]))
        assert bound.get_chunks([c.id], Identity("t", groups=("g",))) == [c]

    def test_vectors_are_validated(self, bound: Any) -> None:
        chunks = chunks_for("d", ["x", "y"])
        with pytest.raises(StoreError):
            bound.replace_document(record("d"), chunks, np.stack([unit(1)]))
        with pytest.raises(StoreError):
            bound.replace_document(record("d"), chunks[:1], np.ones((1, DIM + 1), dtype=np.float32))
        assert bound.count_chunks() == 0

    def test_update_access_changes_visibility_only(self, bound: Any) -> None:
        self._put(bound, "d", [unit(1), unit(0, 1)], tenant="acme", acl=("*",))
        assert len(bound.search_dense(unit(1), 5, identity=Identity("acme"))) == 2
        assert bound.update_access("d", "acme", ("board",)) == 2
        assert bound.search_dense(unit(1), 5, identity=Identity("acme")) == []
        assert len(bound.search_dense(unit(1), 5, identity=Identity("acme", groups=("board",)))) == 2
        rec = bound.get_record("d")
        assert rec is not None and rec.acl == ("board",)
        assert bound.check_integrity() == []


class RegistryConformance(_Suite):
    """The document registry: records round-trip, listing by status, the integrity check."""

    def test_registry_roundtrip(self, bound: Any) -> None:
        rec = dataclasses.replace(
            record("d"), parser_version="p/1", chunker_version="c/1", embedding_model="m", tenant="t", acl=("g",)
        )
        bound.record(rec)
        assert bound.get_record("d") == rec
        failed = dataclasses.replace(record("f"), status=DocumentStatus.FAILED, stage="parse", reason="bad")
        bound.record(failed)
        assert [r.document_id for r in bound.list_records(DocumentStatus.FAILED)] == ["f"]
        assert [r.document_id for r in bound.list_records()] == ["d", "f"]

    def test_integrity_check_finds_inconsistencies(self, bound: Any) -> None:
        self._put(bound, "d", [unit(1), unit(0, 1)])
        assert bound.check_integrity() == []
        bound.record(dataclasses.replace(record("d", 2), chunk_count=5))
        assert any("indexed with 5 chunks" in p for p in bound.check_integrity())
        bound.record(dataclasses.replace(record("d", 2), status=DocumentStatus.DELETED))
        assert any("orphan chunks" in p for p in bound.check_integrity())


class EmbeddingBindingConformance(_Suite):
    """The store remembers the embedder that built it and refuses another."""

    def test_other_embedder_is_refused(self, bound: Any) -> None:
        bound.bind_embedder("test-model", DIM)  # same model: fine
        with pytest.raises(StoreError, match="test-model"):
            bound.bind_embedder("another-model", DIM)

    def test_the_binding_records_the_embedder_spec(self, store: Any) -> None:
        assert store.embedding_model is None and store.embedder_spec is None
        store.bind_embedder("test-model", DIM)  # a spec is optional
        assert store.embedding_model == ("test-model", DIM) and store.embedder_spec is None
        store.bind_embedder("test-model", DIM, spec="/models/test-model")
        assert store.embedder_spec == "/models/test-model"
        with pytest.raises(StoreError, match="test-model"):
            store.bind_embedder("another-model", DIM, spec="another")
        assert store.embedder_spec == "/models/test-model"  # a refused binding records nothing


class StagingConformance(_Suite):
    """Staged source bytes and parsed documents: kept while a run leases them or a record refers to them."""

    def test_staging_is_pruned_only_when_unreferenced_and_unleased(self, bound: Any) -> None:
        from ragwright.model.document import Document, Element, ElementKind

        doc = Document("x", (Element(ElementKind.PARAGRAPH, "text"),))
        self._put(bound, "d", [unit(1)])  # its record refers to hash-d
        for run, content_hash in (("run-a", "hash-d"), ("run-a", "in-flight"), ("run-b", "other")):
            bound.lease_staging(run, content_hash)
            bound.stage(content_hash, content_hash.encode())
            bound.cache_parsed(content_hash, "p/1", doc)
        bound.stage("orphan", b"nobody refers to me")
        assert bound.prune_staging(release="run-b") == 3  # run-b's two rows and the orphan; run-a in flight
        assert bound.staged("in-flight") == b"in-flight" and bound.cached_parsed("in-flight", "p/1") == doc
        assert bound.staged("other") is None and bound.staged("orphan") is None
        assert bound.prune_staging(release="run-a") == 2  # run-a ended without recording "in-flight"
        assert bound.staged("in-flight") is None and bound.staged("hash-d") == b"hash-d"


class StoreConformance(
    VectorSearchConformance,
    FilterTranslationConformance,
    DocumentStoreConformance,
    RegistryConformance,
    EmbeddingBindingConformance,
    StagingConformance,
):
    """Everything a full store (SQLite, PostgreSQL, memory) offers: every suite above but the keyword arm's."""


class KeywordConformance(_Suite):
    """Keyword-arm semantics every store must share: BM25 ranking with filters inside the arm."""

    def _put_texts(self, store: Any, doc_id: str, texts: list[str], **kw: Any) -> list[Chunk]:
        chunks = chunks_for(doc_id, texts, **kw)
        self.put(store, doc_id, chunks, [unit(1)] * len(chunks))
        return chunks

    def test_keyword_ranking(self, bound: Any) -> None:
        self._put_texts(bound, "d", ["the quick brown fox", "lazy dogs sleep", "fox fox fox hunting"])
        hits = bound.search_keyword("fox", 10, identity=Identity())
        assert [h.chunk.text for h in hits] == ["fox fox fox hunting", "the quick brown fox"]
        assert hits[0].score > hits[1].score > 0
        assert bound.search_keyword("zebra", 10, identity=Identity()) == []

    def test_keyword_filters_apply_before_top_k(self, bound: Any) -> None:
        texts = [f"alpha {'alpha ' * i}" for i in range(8)]
        chunks = [Chunk.create("d", t, i, metadata={"keep": i < 2}) for i, t in enumerate(texts)]
        self.put(bound, "d", chunks, [unit(1)] * 8)
        hits = bound.search_keyword("alpha", 2, identity=Identity(), metadata_filter=Eq("keep", True))
        assert sorted(h.chunk.position for h in hits) == [0, 1]

    def test_keyword_security(self, bound: Any) -> None:
        self._put_texts(bound, "a", ["secret merger plan"], tenant="acme", acl=("board",))
        self._put_texts(bound, "b", ["public merger news"], tenant="acme")
        self._put_texts(bound, "c", ["other merger"], tenant="globex")
        seen = {h.chunk.document_id for h in bound.search_keyword("merger", 10, identity=Identity("acme"))}
        assert seen == {"b"}
        board = Identity("acme", groups=("board",))
        assert {h.chunk.document_id for h in bound.search_keyword("merger", 10, identity=board)} == {"a", "b"}

    def test_keyword_follows_updates_and_removal(self, bound: Any) -> None:
        self._put_texts(bound, "d", ["original wording"])
        assert bound.search_keyword("original", 5, identity=Identity())
        self._put_texts(bound, "d", ["rewritten text"])
        assert bound.search_keyword("original", 5, identity=Identity()) == []
        assert [h.chunk.text for h in bound.search_keyword("rewritten", 5, identity=Identity())] == ["rewritten text"]
        bound.remove_document("d")
        assert bound.search_keyword("rewritten", 5, identity=Identity()) == []
