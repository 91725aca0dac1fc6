"""Failed uploads are kept within a quota and an age; leftovers go (issue 21 item 10)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient

from ragwright.model.records import DocumentStatus
from ragwright.server.uploads import sweep_uploads
from ragwright.stores.memory import MemoryStore
from tests.server.conftest import KEY_A, KEY_B, REFUNDS, auth, keyed_config, make_rag, upload

BROKEN = b"%PDF-1.7 this is not really a pdf " * 2  # 68 bytes


def _files(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "staging").rglob("*") if p.is_file())


def test_failed_uploads_are_kept_up_to_the_quota_newest_first(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    c = make_client(keyed_config(tmp_path, failed_upload_quota_bytes=150))
    upload(c, KEY_A, "refunds.md", REFUNDS)
    for n in range(4):
        report = upload(c, KEY_A, f"broken{n}.pdf", BROKEN)
        assert len(report["failed"]) == 1  # the caller still learns why it failed
    assert _files(tmp_path) == ["broken2.pdf", "broken3.pdf", "refunds.md"]  # 2 × 68 bytes fit in 150
    docs = {
        Path(d["document_id"]).name: d["status"] for d in c.get("/documents", headers=auth(KEY_A)).json()["documents"]
    }
    assert docs == {
        "refunds.md": "indexed",
        "broken0.pdf": "deleted",
        "broken1.pdf": "deleted",
        "broken2.pdf": "failed",
        "broken3.pdf": "failed",
    }
    assert c.get("/status", headers=auth(KEY_A)).json()["ledger"]["failed_uploads_removed"] == 2
    upload(c, KEY_B, "broken.pdf", BROKEN)  # the quota is per tenant
    assert "broken.pdf" in _files(tmp_path)


def test_old_failed_uploads_and_leftovers_go_at_start_up(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    rag = make_rag()
    c = make_client(keyed_config(tmp_path, failed_upload_ttl_s=3600), rag=rag)
    upload(c, KEY_A, "broken.pdf", BROKEN)
    upload(c, KEY_A, "refunds.md", REFUNDS)
    (folder,) = (tmp_path / "staging").iterdir()
    week_ago = time.time() - 7 * 86400
    os.utime(folder / "broken.pdf", (week_ago, week_ago))
    (folder / ".partial.md.abc.part").write_bytes(b"half an upload")
    (folder / "never-ingested.md").write_bytes(b"a crash came between the copy and the ingest")
    (folder / ".fresh.md.y.part").write_bytes(b"an upload streaming in right now")
    for name in (".partial.md.abc.part", "never-ingested.md"):
        os.utime(folder / name, (week_ago, week_ago))
    make_client(keyed_config(tmp_path, failed_upload_ttl_s=3600), rag=rag)  # a restart sweeps every tenant
    assert sorted(p.name for p in folder.iterdir()) == [".fresh.md.y.part", "refunds.md"]
    record = rag.store.get_record((folder / "broken.pdf").resolve().as_posix())
    assert record is not None and record.status is DocumentStatus.DELETED


def test_the_sweep_never_touches_indexed_uploads(tmp_path: Path) -> None:
    from ragwright.rag import Rag
    from ragwright.testing.doubles import HashingEmbedder

    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "ok.md").write_bytes(REFUNDS)
    rag = Rag(MemoryStore(), HashingEmbedder())
    rag.ingest(folder / "ok.md")
    old = time.time() - 30 * 86400
    os.utime(folder / "ok.md", (old, old))
    result = sweep_uploads(rag.store, folder, quota_bytes=0, ttl_s=0)
    assert result.failed_removed == () and result.leftovers_removed == 0 and (folder / "ok.md").exists()
