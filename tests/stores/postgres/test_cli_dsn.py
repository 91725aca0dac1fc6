"""The main ``ragwright`` command works against PostgreSQL when --store is a postgresql:// URI."""

import json
from pathlib import Path

from click.testing import CliRunner

from ragwright.cli import main


def run_json(*args: str) -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(main, ["--json", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output + result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_ingest_search_and_ask_with_a_dsn(pg_dsn: str, tmp_path: Path) -> None:
    (tmp_path / "refunds.md").write_text("# Refunds\n\nCustomers may request a refund within thirty days.\n")
    (tmp_path / "secret.md").write_text("# Board\n\nThe refund reserve is confidential to the board.\n")
    flags = ("--store", pg_dsn, "--embedder", "wordllama")
    assert run_json(*flags, "ingest", str(tmp_path / "refunds.md"))["added"] == 1
    assert run_json(*flags, "ingest", str(tmp_path / "secret.md"), "--groups", "board")["added"] == 1
    public = run_json(*flags, "search", "refund")["results"]
    assert [r["document_id"].rsplit("/", 1)[-1] for r in public] == ["refunds.md"]
    board = run_json(*flags, "search", "refund", "--groups", "board")["results"]
    assert {r["document_id"].rsplit("/", 1)[-1] for r in board} == {"refunds.md", "secret.md"}
    answer = run_json(*flags, "ask", "How long do customers have to request a refund?")
    assert not answer["declined"] and answer["citations"]
    assert run_json(*flags, "status")["documents"] == 2
