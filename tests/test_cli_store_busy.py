"""Issue 21 item 7 through the CLI: while another process holds the store's write lock, `status`,
`search` and `status --documents` answer from the last committed state, `ingest` says the store is
busy (retry; exit 75) without calling it unreadable, and a damaged file is still called unreadable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragwright.cli import main
from ragwright.cli.common import EXIT_BUSY
from tests.stores.test_sqlite_locking import write_lock_held


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--embedder", "wordllama", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.slow
def test_commands_answer_while_another_process_writes_and_ingest_says_busy(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tides.md").write_text("# Tides\n\nThe moon pulls the oceans and makes the tides.\n", encoding="utf-8")
    store = str(tmp_path / "store.db")
    code, _, err = run("--store", store, "ingest", str(docs))
    assert code == 0, err
    (docs / "later.md").write_text("# Later\n\nWritten while the store is busy.\n", encoding="utf-8")

    with write_lock_held(Path(store)):
        code, out, err = run("--store", store, "--json", "status")
        assert code == 0, err
        assert json.loads(out)["indexed"] == 1
        code, out, err = run("--store", store, "--json", "search", "what makes the tides")
        assert code == 0, err
        assert json.loads(out)["results"][0]["document_id"].endswith("tides.md")
        code, out, err = run("--store", store, "status", "--documents", "indexed")
        assert code == 0, err
        assert "tides.md" in out

        code, out, err = run("--store", store, "ingest", str(docs))
        assert code == EXIT_BUSY == 75
        assert "busy" in err and "retry" in err
        assert "move it aside" not in err and "not readable" not in err

    code, _, err = run("--store", store, "ingest", str(docs))  # retried once the other process is done
    assert code == 0, err
    code, out, _ = run("--store", store, "--json", "status")
    assert json.loads(out)["indexed"] == 2
    code, out, _ = run("--store", store, "--json", "status", "--documents", "failed")
    assert "later.md" not in out  # the busy run dead-lettered nothing


def test_a_damaged_store_file_is_still_called_unreadable(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    store.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    code, _, err = run("--store", str(store), "status")
    assert code == 2
    assert "not a readable ragwright store" in err and "move it aside" in err
