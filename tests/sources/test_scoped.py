"""Tenant-scoped sources: each tenant's copy of a shared source has its own document ids (issue 21 #2)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ragwright.model.identity import Identity
from ragwright.model.records import DocumentStatus
from ragwright.options import ChunkingOptions
from ragwright.rag import Rag
from ragwright.sources import FolderSource, JsonlSource, TenantScopedSource
from ragwright.sources.scoped import scope_document, split_tenant_document_id, tenant_document_id
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder


@given(st.text(min_size=1), st.text(), st.text(min_size=1), st.text())
def test_scoped_ids_are_injective_and_split_back(tenant_a: str, id_a: str, tenant_b: str, id_b: str) -> None:
    a, b = tenant_document_id(tenant_a, id_a), tenant_document_id(tenant_b, id_b)
    assert (a == b) == ((tenant_a, id_a) == (tenant_b, id_b))
    assert split_tenant_document_id(a) == (tenant_a, id_a)


def test_plain_ids_are_not_scoped() -> None:
    assert split_tenant_document_id("/srv/docs/a.md") is None
    assert split_tenant_document_id("corpus.jsonl:3") is None
    assert tenant_document_id("acme", "/srv/docs/a.md") == "@acme:/srv/docs/a.md"
    assert tenant_document_id("a:b", "c") == "@a%3Ab:c"


def test_a_folder_shared_by_two_tenants_and_synced_by_one(tmp_path: Path) -> None:
    docs = tmp_path / "handbook"
    docs.mkdir()
    (docs / "leave.md").write_text("# Leave\n\nEmployees get 25 days of paid leave per year.\n")
    (docs / "travel.md").write_text("# Travel\n\nBook trains for trips under four hours.\n")
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    for tenant in ("acme", "globex"):
        source = TenantScopedSource(FolderSource(docs), tenant)
        assert source.root == f"@{tenant}:{docs.resolve().as_posix()}" and len(source) == 2
        assert rag.ingest(source, tenant=tenant).added == 2
    (docs / "travel.md").unlink()
    assert rag.ingest(TenantScopedSource(FolderSource(docs), "globex"), tenant="globex", sync=True).deleted == 1
    live = {r.document_id: r.tenant for r in rag.store.list_records() if r.status is DocumentStatus.INDEXED}
    travel = (docs / "travel.md").resolve().as_posix()
    assert live[tenant_document_id("acme", travel)] == "acme"  # acme's copy survives globex's sync
    assert tenant_document_id("globex", travel) not in live
    for tenant in ("acme", "globex"):
        hits = rag.search("paid leave per year", identity=Identity(tenant))
        assert hits and all(split_tenant_document_id(h.document_id)[0] == tenant for h in hits)  # type: ignore[index]
        assert all(h.chunk.tenant == tenant for h in hits)


def test_corpus_records_and_attachments_are_renamed(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"_id": "d1", "title": "Leave", "text": "Employees get 25 days of leave."}) + "\n")
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    for tenant in ("acme", "globex"):
        assert rag.ingest(TenantScopedSource(JsonlSource(corpus), tenant), tenant=tenant).added == 1
    for tenant in ("acme", "globex"):
        (chunk,) = rag.store.document_chunks(tenant_document_id(tenant, "d1"))  # type: ignore[attr-defined]
        assert chunk.tenant == tenant
    report = rag.reindex(chunking=ChunkingOptions(max_tokens=100))  # rebuilt from the records, not re-read
    assert report.switched and report.build.failed == [], report.build.failed
    assert {r.document_id for r in rag.store.list_records()} == {"@acme:d1", "@globex:d1"}


def test_scope_document_renames_children_under_the_new_parent() -> None:
    from ragwright.model.document import Document, Element, ElementKind

    child = Document(id="mail/a.txt", elements=(Element(ElementKind.PARAGRAPH, "x"),))
    other = Document(id="elsewhere", elements=(Element(ElementKind.PARAGRAPH, "y"),))
    mail = Document(id="mail", elements=(Element(ElementKind.PARAGRAPH, "z"),), children=(child, other))
    scoped = scope_document(mail, "acme")
    assert scoped.id == "@acme:mail"
    assert [c.id for c in scoped.children] == ["@acme:mail/a.txt", "@acme:elsewhere"]
