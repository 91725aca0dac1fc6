"""The docs-corpus files peers parsed better (issue 26 item 5), end to end: ingested from
../shared/docs-corpus into a store, their facts are found by search — the page tree pdfium refuses
(`unreadablemetadata.pdf`, recovered through pypdf) and the stamped scan whose typed date only the text
layer holds (`malformed-from-issue-932.pdf`: OCR reads the rest of the page, the date stays)."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragwright.cli import main

HAS_RAPIDOCR = importlib.util.find_spec("rapidocr") is not None


def search(flags: list[str], query: str) -> list[dict[str, object]]:
    out = CliRunner().invoke(main, [*flags, "search", query, "--mode", "bm25", "--top-k", "3"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    results: list[dict[str, object]] = json.loads(out.stdout)["results"]
    return results


@pytest.mark.slow
@pytest.mark.skipif(not HAS_RAPIDOCR, reason="rapidocr is not installed (pip install 'ragwright[ocr]')")
def test_the_recovered_pdf_and_the_date_under_the_stamp_are_found_after_ingestion(shared: Path, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("unreadablemetadata.pdf", "malformed-from-issue-932.pdf"):
        shutil.copyfile(shared / "docs-corpus" / "pdf" / name, folder / name)
    flags = ["--json", "--store", str(tmp_path / "s.db"), "--embedder", "wordllama"]
    result = CliRunner().invoke(main, [*flags, "ingest", str(folder)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["added"] == 2 and report["failed"] == [] and report["ocr_pages"] >= 1

    (hit, *_) = search(flags, "Rotary Potentiometer")
    assert Path(str(hit["document_id"])).name == "unreadablemetadata.pdf"
    (hit, *_) = search(flags, "5 watt power rating")
    assert Path(str(hit["document_id"])).name == "unreadablemetadata.pdf" and "5 watt power rating" in str(hit["text"])
    assert hit["scanned"] is False  # read from the recovered text layer, not by OCR

    (hit, *_) = search(flags, "2021 3 31")
    assert Path(str(hit["document_id"])).name == "malformed-from-issue-932.pdf"
    assert "2021 3 31" in str(hit["text"])  # the typed date, kept beside what OCR read
    assert "有限公司" in str(hit["text"]) and hit["scanned"] is True  # the page's OCR text, flagged as such
