"""Change detection and sync with child documents (issue 21 item 4)."""

import shutil
from pathlib import Path

from ragwright.model.records import DocumentStatus
from ragwright.rag import Rag
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder


def _mail_folder(tmp_path: Path, shared: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(shared / "docs-corpus" / "email" / "fake-email-attachment.eml", docs)
    return docs


def _live(rag: Rag) -> list[str]:
    return sorted(r.document_id for r in rag.store.list_records() if r.status is DocumentStatus.INDEXED)


def test_sync_keeps_the_attachments_of_unchanged_mail(tmp_path: Path, shared: Path, hashing: HashingEmbedder) -> None:
    docs = _mail_folder(tmp_path, shared)
    rag = Rag(SqliteStore(tmp_path / "s.db"), hashing)
    first = rag.ingest(docs, sync=True)
    assert (first.added, first.deleted) == (2, 0)  # the message and its attachment
    live = _live(rag)
    assert len(live) == 2
    second = rag.ingest(docs, sync=True)
    assert (second.unchanged, second.deleted) == (1, 0)
    assert _live(rag) == live


def test_a_lost_attachment_is_restored_by_the_next_ingest(
    tmp_path: Path, shared: Path, hashing: HashingEmbedder
) -> None:
    docs = _mail_folder(tmp_path, shared)
    rag = Rag(SqliteStore(tmp_path / "s.db"), hashing)
    rag.ingest(docs)
    live = _live(rag)
    (child,) = [r.document_id for r in rag.store.list_records() if r.parent]
    rag.store.remove_document(child)  # what the old sync did
    report = rag.ingest(docs)
    assert report.added == 1 and report.deleted == 0
    assert _live(rag) == live
    assert rag.store.document_chunks(child)


def test_sync_removes_the_attachments_with_their_message(
    tmp_path: Path, shared: Path, hashing: HashingEmbedder
) -> None:
    docs = _mail_folder(tmp_path, shared)
    (docs / "note.txt").write_text("a note that stays", encoding="utf-8")
    rag = Rag(SqliteStore(tmp_path / "s.db"), hashing)
    rag.ingest(docs)
    (docs / "fake-email-attachment.eml").unlink()
    report = rag.ingest(docs, sync=True)
    assert report.deleted == 2
    assert [Path(d).name for d in _live(rag)] == ["note.txt"]
