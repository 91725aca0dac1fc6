"""What ingestion keeps about a document for itself is in typed record fields, and ``record.metadata`` is
the caller's metadata only (issue 23, "registry fields as typed columns"): attachments, metadata keys,
name hints and source metadata, dead letters; a caller's own ``_`` keys are plain metadata; a store
written when the fields were ``_`` keys in the metadata still works after its upgrade."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.rag import Rag
from ragwright.stores.sql_registry import REGISTRY_FIELDS
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder


def _mail(tmp_path: Path, shared: Path) -> tuple[Path, str]:
    docs = tmp_path / "docs"
    docs.mkdir()
    mail = docs / "fake-email-attachment.eml"
    shutil.copy(shared / "docs-corpus" / "email" / mail.name, mail)
    return docs, mail.resolve().as_posix()


def _records(rag: Rag) -> dict[str, DocumentRecord]:
    return {r.document_id: r for r in rag.store.list_records(DocumentStatus.INDEXED)}


def test_a_message_and_its_attachment_carry_the_fields_and_only_the_callers_metadata(
    tmp_path: Path, shared: Path, hashing: HashingEmbedder
) -> None:
    docs, mail_id = _mail(tmp_path, shared)
    with Rag(SqliteStore(tmp_path / "s.db"), hashing) as rag:
        rag.ingest(docs, metadata={"team": "ops"})
        records = _records(rag)
        mail = records.pop(mail_id)
        ((child_id, child),) = records.items()
        assert (mail.children, mail.parent, child.parent, child.children) == ((child_id,), None, mail_id, ())
        assert mail.metadata == child.metadata == {"team": "ops"}
        assert mail.name_hint == child.name_hint == "fake-email-attachment.eml"  # the child parses with its parent
        assert mail.source_meta["file_name"] == "fake-email-attachment.eml" and child.source_meta == mail.source_meta
        assert mail.metadata_keys is not None and "team" in mail.metadata_keys
        assert child.metadata_keys is not None and "team" in child.metadata_keys
        assert list(mail.metadata_keys) == sorted(mail.metadata_keys)
        assert set(rag.metadata_keys()) == set(mail.metadata_keys) | set(child.metadata_keys)
        assert (mail.error_type, mail.attempts) == (None, 0)
        assert rag.remove(mail_id) > 0 and _records(rag) == {}  # the attachment went with its parent


def test_a_callers_underscore_keys_are_plain_metadata(tmp_path: Path, hashing: HashingEmbedder) -> None:
    """Before, ``_`` keys were ragwright's: a caller's ``_team`` made every ingest re-index the document
    and was dropped by a reindex or a retry; ``_name`` was overwritten by the name hint."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("alpha words here", encoding="utf-8")
    (docs / "bad.pdf").write_bytes(b"%PDF-1.7 not a pdf")
    mine = {"_team": "ops", "_name": "mine"}
    with Rag(SqliteStore(tmp_path / "s.db"), hashing) as rag:
        rag.ingest(docs, metadata=mine)
        again = rag.ingest(docs, metadata=mine)
        assert (again.unchanged, again.added, again.updated) == (1, 0, 0)
        good = rag.store.get_record((docs / "a.md").resolve().as_posix())
        assert good is not None and (good.metadata, good.name_hint) == (mine, "a.md")
        bad = rag.store.get_record((docs / "bad.pdf").resolve().as_posix())
        assert bad is not None and bad.metadata == mine and bad.attempts == 2
        (docs / "bad.pdf").write_text("the repaired plan", encoding="utf-8")
        assert rag.retry_failed().added == 1
        fixed = rag.store.get_record((docs / "bad.pdf").resolve().as_posix())
        assert fixed is not None and fixed.metadata == mine and fixed.status is DocumentStatus.INDEXED
        assert rag.reindex(embedder=HashingEmbedder(dimension=96, name="test/hashing-u")).switched
        rebuilt = _records(rag)
        assert [r.metadata for r in rebuilt.values()] == [mine, mine]
        assert all(c.metadata["_team"] == "ops" for r in rebuilt for c in rag.store.document_chunks(r))


def test_a_dead_letter_has_its_error_type_and_attempts_and_status_shows_them(
    tmp_path: Path, hashing: HashingEmbedder
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bad.pdf").write_bytes(b"%PDF-1.7 not a pdf")
    with Rag(SqliteStore(tmp_path / "s.db"), hashing) as rag:
        for attempts in (1, 2, 3):
            rag.ingest(docs, metadata={"team": "ops"})
            (failed,) = rag.documents(status="failed")
            assert (failed.attempts, failed.metadata) == (attempts, {"team": "ops"})
            assert failed.error_type is not None and failed.error_type.endswith("Error")
        (shown,) = rag.status()["failed_documents"]
        assert (shown["error_type"], shown["attempts"]) == (failed.error_type, 3)
        assert set(failed.to_dict()) == {  # the registry's JSON (documents --json, /documents) as before
            "document_id", "source", "content_hash", "status", "parser_version", "chunker_version",
            "embedding_model", "chunk_count", "stage", "reason", "tenant", "acl", "title", "created_at",
            "updated_at",
        }  # fmt: skip


def test_a_store_written_with_underscore_keys_works_after_its_upgrade(
    tmp_path: Path, shared: Path, hashing: HashingEmbedder
) -> None:
    """A version-2 SQLite file (the fields as ``_`` keys in the metadata, as ragwright wrote them then) is
    upgraded on open: attachments are still found, nothing is re-indexed, a removal takes the attachment."""
    docs, mail_id = _mail(tmp_path, shared)
    path = tmp_path / "s.db"
    with Rag(SqliteStore(path), hashing) as rag:
        rag.ingest(docs, metadata={"team": "ops"})
        before = _records(rag)
    conn = sqlite3.connect(path)
    for rec in before.values():  # write each record the old way
        old = {**rec.metadata, "_keys": list(rec.metadata_keys or ()), "_children": list(rec.children)}
        old |= {"_warnings": list(rec.warnings), "_name": rec.name_hint, "_source_meta": dict(rec.source_meta)}
        old |= {"_parent": rec.parent} if rec.parent else {}
        conn.execute("UPDATE documents SET metadata = ? WHERE document_id = ?", (json.dumps(old), rec.document_id))
    for field in REGISTRY_FIELDS:
        conn.execute(f"ALTER TABLE documents DROP COLUMN {field.column}")
    conn.execute("UPDATE rag_metadata SET value = '2' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with Rag(SqliteStore(path), hashing) as rag:
        assert _records(rag) == before
        report = rag.ingest(docs, metadata={"team": "ops"}, sync=True)
        assert (report.unchanged, report.added, report.updated, report.deleted) == (1, 0, 0, 0)
        assert rag.remove(mail_id) > 0 and _records(rag) == {}
