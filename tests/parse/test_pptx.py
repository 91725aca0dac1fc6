"""PPTX parser: MANIFEST facts (titles, tables, speaker notes), structure, limits and hostile packages."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from ragwright.errors import LimitExceeded, ParseError
from ragwright.model.document import Document, ElementKind
from ragwright.options import ParseOptions

pptx = pytest.importorskip("pptx")

from ragwright.parse.office.pptx import VERSION, parse_pptx  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "docs-corpus"


def parse(name: str, **options: object) -> Document:
    data = (CORPUS / "pptx" / name).read_bytes()
    return parse_pptx("p", data, source=name, options=ParseOptions(**options))  # type: ignore[arg-type]


def slide_titles(doc: Document) -> list[str]:
    return [e.text for e in doc.elements if e.kind is ElementKind.HEADING]


def test_powerpoint_sample_titles_table_notes_pages() -> None:
    doc = parse("powerpoint_sample.pptx")
    assert VERSION == "pptx/4"
    assert slide_titles(doc) == ["Test Table Slide", "Second slide title", "Slide 3"]
    assert doc.title == "Test Table Slide"
    assert all(e.level == 1 for e in doc.elements if e.kind is ElementKind.HEADING)
    notes = [e for e in doc.elements if e.attributes.get("notes")]
    assert [(n.page, n.text) for n in notes] == [
        (2, "Notes: Some notes on the second slide."),
        (3, "Notes: Final notes on the third slide.\nSecond line of notes."),
    ]
    table = [e for e in doc.elements if e.kind is ElementKind.TABLE]
    assert len(table) == 1 and table[0].page == 1
    lines = table[0].text.splitlines()
    assert lines[0] == "|  | Class1 | Class1 | Class1 | Class2 | Class2 | Class2 |"  # merged header repeated
    assert lines[2] == "|  | A merged with B | A merged with B | C | A | B | C |"
    assert {e.page for e in doc.elements} == {1, 2, 3}
    assert doc.metadata["slides"] == 3 and doc.metadata["author"] == "Maxim Lysak"
    slide2 = [(e.kind, e.text) for e in doc.elements if e.page == 2]
    assert (ElementKind.PARAGRAPH, "Let’s introduce a list") in slide2
    assert (ElementKind.PARAGRAPH, "A rectangle shape with this text inside.") in slide2
    slide3 = [e for e in doc.elements if e.page == 3 and e.kind is ElementKind.LIST_ITEM]
    assert [e.text for e in slide3][:3] == ["List item4", "List item5", "List item6"]


def test_bullet_slide_levels() -> None:
    doc = parse("fake-power-point.pptx")
    assert slide_titles(doc) == ["Adding a Bullet Slide"]
    items = [(e.level, e.text) for e in doc.elements if e.kind is ElementKind.LIST_ITEM]
    assert items[0] == (1, "Find the bullet slide layout")
    assert [level for level, _ in items] == [1, 2, 3]
    assert "Here is some text in a text box!" in doc.text


def test_table_slide() -> None:
    doc = parse("fake-power-point-table.pptx")
    assert slide_titles(doc) == ["A Slide with a Table"]
    tables = [e.text for e in doc.elements if e.kind is ElementKind.TABLE]
    assert len(tables) == 1
    assert tables[0].splitlines()[:3] == [
        "| Column 1 | Column 2 | Column 3 |",
        "| --- | --- | --- |",
        "| Red | Green | Blue |",
    ]


def test_malformed_package_still_opens_and_drops_date_placeholder() -> None:
    doc = parse("fake-power-point-malformed.pptx")
    assert slide_titles(doc) == ["Test Slide"]
    assert "Problem Date Placeholder" not in doc.text


def build(slides: int = 3) -> bytes:
    prs = pptx.Presentation()
    for n in range(1, slides + 1):
        slide = prs.slides.add_slide(prs.slide_layouts[6 if n == 2 else 1])  # 6: blank, no title
        if n != 2:
            slide.shapes.title.text = f"Title {n}"
            body = slide.placeholders[1].text_frame
            body.text = "top bullet"
            sub = body.add_paragraph()
            sub.text = "sub bullet"
            sub.level = 1
        group = slide.shapes.add_group_shape()
        box = group.shapes.add_textbox(0, 0, 100, 100)
        box.text_frame.text = f"grouped text {n}"
    if slides >= 3:
        prs.slides[2]._element.set("show", "0")  # hide the third slide
    buf = io.BytesIO()
    prs.save(buf)
    return buf.getvalue()


def test_groups_untitled_and_hidden_slides() -> None:
    doc = parse_pptx("g", build(), source=None, options=ParseOptions())
    assert slide_titles(doc) == ["Title 1", "Slide 2"]  # slide 3 is hidden
    assert doc.warnings and "3" in doc.warnings[0]
    assert [(e.kind, e.level, e.text) for e in doc.elements if e.page == 1][1:] == [
        (ElementKind.LIST_ITEM, 1, "top bullet"),
        (ElementKind.LIST_ITEM, 2, "sub bullet"),
        (ElementKind.PARAGRAPH, None, "grouped text 1"),
    ]
    assert "grouped text 2" in doc.text and "grouped text 3" not in doc.text


def test_slide_limit() -> None:
    with pytest.raises(LimitExceeded, match="max_slides"):
        parse("powerpoint_sample.pptx", max_slides=2)


def test_not_a_pptx_and_unsafe_xml() -> None:
    with pytest.raises(ParseError, match=r"not a PPTX: the package has no ppt/presentation\.xml"):
        parse_pptx("x", (CORPUS / "docx" / "word_sample.docx").read_bytes(), source=None, options=ParseOptions())
    with pytest.raises(ParseError, match=r"^encrypted: the presentation"):
        parse_pptx("x", (CORPUS / "xlsx" / "pass_protected.xlsx").read_bytes(), source=None, options=ParseOptions())
    data = build(1)
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(buf, "w") as dst:
        for item in src.infolist():
            body = src.read(item)
            if item.filename == "ppt/slides/slide1.xml":
                body = body.replace(b"?>", b'?><!DOCTYPE p:sld [<!ENTITY x SYSTEM "file:///etc/passwd">]>', 1)
                assert b"<!DOCTYPE" in body
            dst.writestr(item.filename, body)
    with pytest.raises(ParseError, match="unsafe XML"):
        parse_pptx("x", buf.getvalue(), source=None, options=ParseOptions())
