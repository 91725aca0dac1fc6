"""Dates time decay can use (issue 22 item 5): from the caller, front matter, document properties,
the e-mail Date, the file's modification time and HTTP Last-Modified — each with its origin."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ragwright.errors import ConfigError
from ragwright.ingest.dates import parse_date, resolve_dates
from ragwright.options import RetrievalOptions
from ragwright.rag import Rag
from ragwright.sources import BytesSource, FileListSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder


def _meta(rag: Rag, document_id: str) -> dict:  # type: ignore[type-arg]
    (chunk, *_) = rag.store.document_chunks(document_id)
    return dict(chunk.metadata)


@pytest.fixture
def rag() -> Rag:
    return Rag(MemoryStore(), HashingEmbedder())


def test_the_callers_dates_are_kept_and_checked(rag: Rag) -> None:
    """Issue 22: `ingest(metadata={"created_at": …})` was dropped as a reserved key."""
    source = BytesSource({"a.md": b"# A\n\nalpha"})
    rag.ingest(source, metadata={"created_at": "2024-05-01", "updated_at": 1717200000, "team": "x"})
    meta = _meta(rag, "a.md")
    assert (meta["created_at"], meta["created_at_source"]) == ("2024-05-01T00:00:00+00:00", "metadata")
    assert (meta["updated_at"], meta["updated_at_source"]) == ("2024-06-01T00:00:00+00:00", "metadata")
    with pytest.raises(ConfigError, match=r"metadata\['created_at'\]='last spring' is invalid"):
        rag.ingest(source, metadata={"created_at": "last spring"})
    # a caller may not forge an origin
    rag.ingest(BytesSource({"b.md": b"beta"}), metadata={"created_at_source": "metadata"})
    assert "created_at_source" not in _meta(rag, "b.md")


def test_front_matter_dates_quoted_or_not(rag: Rag) -> None:
    text = b"---\ntitle: Release\ndate: 2023-03-04\nlastmod: '2024-01-02T10:00:00Z'\n---\n# Release\n\nnotes\n"
    rag.ingest(BytesSource({"r.md": text}))
    meta = _meta(rag, "r.md")
    assert (meta["created_at"], meta["created_at_source"]) == ("2023-03-04T00:00:00+00:00", "front_matter")
    assert (meta["updated_at"], meta["updated_at_source"]) == ("2024-01-02T10:00:00+00:00", "front_matter")


def test_document_properties_and_the_email_date(rag: Rag, shared: Path) -> None:
    docx = shared / "docs-corpus" / "docx" / "word_sample.docx"
    eml = next((shared / "docs-corpus" / "email").glob("*.eml"))
    rag.ingest(FileListSource([docx, eml]))
    meta = _meta(rag, docx.resolve().as_posix())
    assert meta["created_at_source"] == "document_properties" and parse_date(meta["created_at"]) is not None
    mail = _meta(rag, eml.resolve().as_posix())
    assert mail["created_at_source"] == "email_date" and parse_date(mail["created_at"]) is not None


def test_file_modification_time_when_nothing_better(rag: Rag, tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text("a plain note with no dates", encoding="utf-8")
    os.utime(note, (1_600_000_000, 1_600_000_000))
    rag.ingest(FileListSource([note]))
    meta = _meta(rag, note.resolve().as_posix())
    assert (meta["updated_at"], meta["updated_at_source"]) == ("2020-09-13T12:26:40+00:00", "file_mtime")
    assert "created_at" not in meta  # a modification time is no creation date: never fabricated


def test_origins_in_order_and_nothing_made_up() -> None:
    item = {"last_modified": "Wed, 21 Oct 2015 07:28:00 GMT", "file_mtime": "2020-01-01T00:00:00+00:00"}
    dates = resolve_dates({}, {}, "text/html", item)
    assert dates == {"updated_at": "2015-10-21T07:28:00+00:00", "updated_at_source": "http_last_modified"}
    dates = resolve_dates({}, {"updated_at": "2019-05-05"}, "text/html", item)
    assert dates["updated_at_source"] == "html_meta"
    dates = resolve_dates({"updated_at": "2021-01-01T00:00:00+00:00"}, {"updated_at": "2019-05-05"}, "text/html", item)
    assert dates["updated_at_source"] == "metadata"
    assert resolve_dates({}, {"created_at": "not a date"}, "application/pdf", {}) == {}
    assert parse_date("2024-05-01").tzinfo is not None  # type: ignore[union-attr]


def test_time_decay_ranks_the_newer_document_first() -> None:
    """End to end: the same text dated by front matter; time weighting prefers the recent one."""
    from ragwright.retrieve.strategies.options import StrategyOptions, TimeWeightedOptions

    rag = Rag(MemoryStore(), HashingEmbedder(), strategies=StrategyOptions(time_weighting=TimeWeightedOptions()))
    now = datetime.now(UTC).date().isoformat()
    old = b"---\ndate: 2001-01-01\n---\nthe quarterly budget report for the team\n"
    new = f"---\ndate: {now}\n---\nthe quarterly budget report for the team\n".encode()
    rag.ingest(BytesSource({"a.md": new, "b.md": old}))
    options = RetrievalOptions(use_time_weighting=True, top_k=2)
    assert [r.document_id for r in rag.search("quarterly budget report", options)] == ["a.md", "b.md"]
    undated = Rag(MemoryStore(), HashingEmbedder(), strategies=StrategyOptions(time_weighting=TimeWeightedOptions()))
    undated.ingest(BytesSource({"a.md": new.split(b"---\n")[-1], "b.md": old.split(b"---\n")[-1]}))
    # without the dates the tie goes the other way: the order above is the dates' doing
    assert [r.document_id for r in undated.search("quarterly budget report", options)] == ["b.md", "a.md"]
