"""Size limits are checked before reading (issue 21 item 8)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragwright.errors import LimitExceeded, ParseError
from ragwright.rag import Rag
from ragwright.sources import FolderSource
from ragwright.sources.base import SourceItem, load_within
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder


def _never() -> bytes:
    raise AssertionError("an item over the limit was read")


def test_a_known_size_over_the_limit_is_refused_unread() -> None:
    item = SourceItem("big.pdf", "memory:big.pdf", _never, size=2 << 30)
    with pytest.raises(LimitExceeded, match="2,147,483,648 bytes, over the limit of 100"):
        load_within(item, 100)
    unknown = SourceItem("x", "memory:x", lambda: b"x" * 101)  # no size: checked once loaded
    with pytest.raises(LimitExceeded, match="101 bytes"):
        load_within(unknown, 100)
    assert load_within(SourceItem("y", "memory:y", lambda: b"ok", size=2), 100) == b"ok"


def test_files_carry_their_size_and_a_file_that_grows_is_not_read_whole(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    path = docs / "a.txt"
    path.write_bytes(b"12345")
    (item,) = FolderSource(docs).items()
    assert item.size == 5
    path.write_bytes(b"1234567890")  # grew after the listing
    with pytest.raises(ParseError, match="grew while it was being read"):
        item.load()


_CHILD = """
import json, resource, sys
from ragwright.options import IngestOptions, ParseOptions
from ragwright.rag import Rag
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder
rag = Rag(SqliteStore(sys.argv[1]), HashingEmbedder())
report = rag.ingest(sys.argv[2])
try:  # this process's own peak (ru_maxrss would include the parent's size at fork)
    peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
except (OSError, StopIteration):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"report": report.to_dict(), "max_rss_kb": peak}))
"""


def test_a_2_gib_pdf_is_refused_without_being_read(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    with (docs / "huge.pdf").open("wb") as fh:  # sparse: 2 GiB that take no disk
        fh.write(b"%PDF-1.7\n")
        fh.truncate(2 << 30)
    (docs / "small.md").write_text("a small note", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path / "s.db"), str(docs)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    (failure,) = result["report"]["failed"]
    assert failure["stage"] == "read" and "over the limit" in failure["reason"]
    assert result["report"]["added"] == 1
    assert result["max_rss_kb"] < 600 * 1024  # the file was never read (2,072 MB before the fix)


def test_the_cli_parse_command_refuses_an_oversized_file_unread(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ragwright.cli import main

    big = tmp_path / "huge.pdf"
    with big.open("wb") as fh:
        fh.truncate(200 << 20)
    result = CliRunner().invoke(main, ["parse", str(big)])
    assert result.exit_code == 2 and "over the limit" in result.stderr


def test_rag_ingest_reports_it(tmp_path: Path) -> None:
    from ragwright.options import IngestOptions, ParseOptions

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "big.txt").write_bytes(b"x" * 2000)
    options = IngestOptions(parse=ParseOptions(max_file_bytes=1000))
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder(), ingest_options=options)
    (failure,) = rag.ingest(docs).failed
    assert "2,000 bytes, over the limit of 1,000" in failure.reason
