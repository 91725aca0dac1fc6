"""Cheap documents are parsed first, so the embedder starts at once; the order changes nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragwright.ingest import schedule
from ragwright.ingest.schedule import cheap_first, parse_cost
from ragwright.rag import Rag
from ragwright.sources.base import SourceItem
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder


def item(name: str, scheme: str = "file://") -> SourceItem:
    return SourceItem(document_id=name, uri=f"{scheme}/docs/{name}", load=lambda: b"", name_hint=name)


def test_text_then_office_then_pdf_then_images_in_listing_order_within_a_kind() -> None:
    names = ["scan.png", "a.pdf", "b.docx", "notes.md", "c.pdf", "mail.eml", "code.py", "readme.txt", "x.bin"]
    ordered = [i.name_hint for i in cheap_first(item(n) for n in names)]
    assert ordered == ["notes.md", "code.py", "readme.txt", "b.docx", "mail.eml", "x.bin", "a.pdf", "c.pdf", "scan.png"]
    assert [parse_cost(n) for n in ("A.MD", "page.HTML", "Report.PDF", "photo.JPEG")] == [0, 1, 2, 3]


def test_windows_bound_the_reordering_and_remote_items_keep_their_order() -> None:
    names = ["a.pdf", "b.md", "c.pdf", "d.md"]
    assert [i.name_hint for i in cheap_first((item(n) for n in names), window=2)] == ["b.md", "a.pdf", "d.md", "c.pdf"]
    remote = [item(n, "https://example.org") for n in names]
    assert list(cheap_first(remote)) == remote
    assert [i.name_hint for i in cheap_first((item(n) for n in names), window=0)] == names


def test_an_ingestion_indexes_the_same_whatever_the_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.html").write_text("<html><body><h1>Valves</h1><p>The valve 4471 was replaced.</p></body></html>")
    (root / "b.md").write_text("# Pumps\n\nPump 88 runs at night.\n")
    (root / "c.txt").write_text("Invoice INV-2024-0042 is paid.\n")
    (root / "broken.pdf").write_bytes(b"%PDF-1.7\n not a pdf")
    reordered = Rag(SqliteStore(tmp_path / "a.db"), HashingEmbedder())
    first = reordered.ingest(root)
    monkeypatch.setattr("ragwright.ingest.pipeline.cheap_first", lambda items: schedule.cheap_first(items, window=0))
    listed = Rag(SqliteStore(tmp_path / "b.db"), HashingEmbedder())  # the source's own order
    second = listed.ingest(root)
    assert first.added == second.added == 3
    assert [(f.document, f.stage) for f in first.failed] == [(f.document, f.stage) for f in second.failed]

    def chunks(rag: Rag) -> dict[str, list[str]]:
        return {
            r.document_id: [c.text for c in rag.store.document_chunks(r.document_id)] for r in rag.store.list_records()
        }

    assert chunks(reordered) == chunks(listed)
    assert "Pump 88 runs at night." in " ".join(" ".join(texts) for texts in chunks(reordered).values())
