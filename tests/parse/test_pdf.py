"""PDF parsing against the facts of the shared corpus (docs-corpus/MANIFEST.md, section pdf/)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pypdfium2")

from ragwright.errors import LimitExceeded, MissingDependencyError, ParseError
from ragwright.model.document import Document, ElementKind
from ragwright.options import ParseOptions
from ragwright.parse.pdf import VERSION, parse_pdf
from ragwright.parse.pdf import parser as pdf_module
from ragwright.parse.pdf.layout import Line
from ragwright.parse.pdf.meta import pdf_date
from ragwright.parse.pdf.order import join_lines

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
PDFS = SHARED / "docs-corpus" / "pdf"
ARABIC_HABIBI = "\u062d\u064e\u0628\u064a\u0628\u064a"


def parse(name: str, **options: object) -> Document:
    opts = {"ocr": False, **options}
    return parse_pdf(name, (PDFS / name).read_bytes(), source=name, options=ParseOptions(**opts))  # type: ignore[arg-type]


def page_text(doc: Document, page: int) -> str:
    return "\n\n".join(e.text for e in doc.elements if e.page == page)


def table_rows(markdown: str) -> list[list[str]]:
    rows = [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in markdown.splitlines()]
    return [r for r in rows if r != ["---"] * len(r)]


def test_version_and_every_element_has_a_page() -> None:
    assert VERSION == "pdf/7"
    doc = parse("pdflatex-4-pages.pdf")
    assert all(e.page is not None and 1 <= e.page <= 4 for e in doc.elements)
    assert doc.mime_type == "application/pdf"


def test_minimal_document() -> None:
    doc = parse("minimal-document.pdf")
    assert doc.elements[0].text.startswith("Lorem ipsum dolor sit amet, consetetur sadipscing elitr")
    assert "no sea takimata sanctus" in doc.text  # "taki-" + "mata" de-hyphenated


def test_pdflatex_4_pages_page_attribution() -> None:
    doc = parse("pdflatex-4-pages.pdf")
    assert doc.metadata["page_count"] == 4
    assert page_text(doc, 1).startswith("Hello, here is some text without a meaning.")
    assert page_text(doc, 3).startswith("you information about the selected font, how the letters are written")


def test_libreoffice_password() -> None:
    with pytest.raises(ParseError, match=r"^encrypted: .*pdf_password"):
        parse("libreoffice-writer-password.pdf")
    with pytest.raises(ParseError, match=r"^encrypted: the password .* is wrong"):
        parse("libreoffice-writer-password.pdf", pdf_password="permission?")
    doc = parse("libreoffice-writer-password.pdf", pdf_password="openpassword")
    assert doc.text.startswith("Lorem ipsum dolor sit amet")


def test_password_example() -> None:
    with pytest.raises(ParseError, match=r"^encrypted"):
        parse("password-example.pdf")
    doc = parse("password-example.pdf", pdf_password="test")
    assert doc.metadata["page_count"] == 4
    assert page_text(doc, 1).startswith("Backup4all –backup solution for network environments")


def test_copy_protected_opens_with_the_empty_password() -> None:
    doc = parse("copy-protected.pdf")
    assert doc.metadata["page_count"] == 2
    title = "LayoutParser: A Unified Toolkit for Deep Learning Based Document Image Analysis"
    assert doc.elements[0].kind is ElementKind.TITLE and doc.elements[0].text == title
    assert doc.title == title


def test_multicolumn_reading_order_and_table() -> None:
    doc = parse("multicolumn.pdf")
    texts = [e.text for e in doc.elements]
    assert doc.elements[0].kind is ElementKind.TITLE and texts[0] == "Two-Column Document with Lorem Ipsum"
    assert "This is a sample document with two columns filled with Lorem Ipsum text." in texts
    assert not any("Lorem Ipsum text" in t and "Phasellus" in t for t in texts)  # columns not interleaved
    full = doc.text
    assert full.index("Vivamus viverra fermentum felis. Donec nonummy") < full.index("pellentesque ante. Phasellus")
    assert "consectetuer adipiscing elit. Ut purus elit" in full  # "adip-" + "iscing"
    tables = [e for e in doc.elements if e.kind is ElementKind.TABLE]
    assert len(tables) == 1 and tables[0].page == 3
    rows = table_rows(tables[0].text)
    assert rows[0][0] == "Country" and len(rows[0]) == 5
    assert ["Austria", "8.9", "83,879", "Vienna", "German"] in rows
    assert tables[0].attributes["caption"] == "Table 1: EU Countries Information"
    assert "Austria 8.9" not in page_text(doc, 3).replace(tables[0].text, "")  # not repeated as text


def test_habibi_rtl_in_logical_order() -> None:
    doc = parse("habibi.pdf")
    assert "habibi" in doc.text
    assert ARABIC_HABIBI in doc.text
    assert ARABIC_HABIBI[::-1] not in doc.text


def test_image_only_pages_without_ocr() -> None:
    for name in ("imagemagick-CCITTFaxDecode.pdf", "loremipsum-flat.pdf"):
        with pytest.raises(ParseError, match=r"^no text: probably scanned .*page 1 has no text layer"):
            parse(name)


def test_forms_text_and_fields() -> None:
    doc = parse("pdflatex-forms.pdf")
    assert [e.text for e in doc.elements[:3]] == ["Name", "Check", "Submit"]
    fields = {f["name"]: f for f in doc.metadata["form_fields"]}
    assert fields["Name"]["type"] == "text" and fields["Name"]["value"] == ""
    assert fields["Check"]["type"] == "checkbox"
    assert fields["Submit"]["type"] == "button"


def test_attachment_listed_in_metadata() -> None:
    doc = parse("with-attachment.pdf")
    assert doc.metadata["attachments"] == [{"name": "image.png", "size": 6669}]
    assert doc.text.startswith("Lorem ipsum")


def test_a_pdf_pdfium_refuses_is_recovered_through_pypdf() -> None:
    """Issue 26 item 5: unreadablemetadata.pdf's page tree points to a missing object; pdfium says "data
    format error". Its three surviving page objects are rebuilt by pypdf and read by the normal path."""
    doc = parse("unreadablemetadata.pdf")
    assert doc.metadata["repaired_by"] == "pypdf" and doc.metadata["pages_recovered"] == 3
    assert doc.metadata["page_count"] == 3 and "producer" not in doc.metadata  # not the rebuilt copy's
    text = page_text(doc, 1)
    assert "Rotary Potentiometer" in text and "Dust-proof construction" in text  # the linearized first page
    assert any(e.kind is ElementKind.LIST_ITEM and e.text == "5 watt power rating" for e in doc.elements)
    assert any("recovered through pypdf" in w and "data format error" in w for w in doc.warnings)


def test_recovery_needs_pypdf_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pypdf", None)  # import pypdf -> ImportError
    with pytest.raises(ParseError, match=r"^corrupt PDF: .*data format error.*pip install 'ragwright\[pdf\]'"):
        parse("unreadablemetadata.pdf")


def test_corrupt_and_empty_files() -> None:
    with pytest.raises(ParseError, match=r"^corrupt PDF: .*pypdf found no readable page either"):
        parse_pdf("x", b"%PDF-1.4\n1 0 obj <</Type/Catalog/Pages 9 0 R>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF")
    with pytest.raises(ParseError, match=r"^empty file"):
        parse("empty.pdf")
    with pytest.raises(ParseError, match=r"^corrupt PDF"):
        parse_pdf("x", b"%PDF-1.7\n this is not really a pdf", source=None, options=ParseOptions())


def test_geotopo_book_title_speed_and_limits() -> None:
    data = (PDFS / "GeoTopo-komprimiert.pdf").read_bytes()
    doc = parse_pdf("geotopo", data, source=None, options=ParseOptions(ocr=False))
    assert doc.metadata["page_count"] == 117  # speed is measured in benchmarks/parse_speed.py
    first = doc.elements[0]
    assert first.kind is ElementKind.TITLE and first.page == 1
    assert first.text == "Einführung in die Geometrie und Topologie"
    assert doc.metadata["author"] == "Martin Thoma"
    assert {e.page for e in doc.elements} >= set(range(2, 118)) - {1}
    headings = [e for e in doc.elements if e.kind is ElementKind.HEADING]
    assert any(e.text == "1 Topologische Grundbegriffe" and e.page == 6 for e in headings)
    assert any(e.text == "1.1 Topologische Räume" for e in headings)
    with pytest.raises(LimitExceeded, match="max_pages=50"):
        parse_pdf("geotopo", data, source=None, options=ParseOptions(max_pages=50))
    with pytest.raises(LimitExceeded, match="max_file_bytes=1000000"):
        parse_pdf("geotopo", data, source=None, options=ParseOptions(max_file_bytes=1_000_000))


def test_nics_ruled_table() -> None:
    doc = parse("nics-background-checks-2015-11.pdf")
    assert "NICS Firearm Background Checks" in doc.text and "November - 2015" in doc.text
    tables = [e for e in doc.elements if e.kind is ElementKind.TABLE]
    assert len(tables) == 1
    rows = table_rows(tables[0].text)
    by_state = {r[0]: r for r in rows}
    assert by_state["Alabama"][-1] == "71,137" and by_state["Alabama"][1] == "18,870"
    states = [r[0] for r in rows if r[0] not in ("", "State / Territory", "Totals")]
    assert states[0] == "Alabama" and states[-1] == "Wyoming"
    assert by_state["Wyoming"][-1] == "5,017"
    assert len(states) >= 50
    assert "Alaska 209" not in doc.text  # the rows live in the table only


def test_scotus_transcript_without_margin_line_numbers() -> None:
    doc = parse("scotus-transcript-p1.pdf")
    for phrase in ("IN THE SUPREME COURT OF THE UNITED STATES", "No. 07-1315", "Tuesday, January 13, 2009"):
        assert phrase in doc.text
    assert not any(e.text.strip().isdigit() for e in doc.elements)


def test_malformed_932_opens() -> None:
    doc = parse("malformed-from-issue-932.pdf")
    assert page_text(doc, 1) == "2021 3 31"
    assert any("scanned" in w for w in doc.warnings)


def test_multi_column_2p_title_and_hyphens() -> None:
    doc = parse("multi-column-2p.pdf")
    assert doc.elements[0].kind is ElementKind.TITLE
    assert doc.elements[0].text == "Dense Passage Retrieval for Open-Domain Question Answering"
    text = doc.text
    assert "Lucene-BM25" in text  # hyphen kept before an uppercase continuation
    assert "efficient passage retrieval" in text  # "ef-" + "ficient" joined
    assert text.index("Abstract") < text.index("1 Introduction") < text.index("2 Background")
    headings = {e.text: e.level for e in doc.elements if e.kind is ElementKind.HEADING}
    assert headings.get("3.1 Overview") == 2 and headings.get("1 Introduction") == 1


def test_layout_parser_table_caption() -> None:
    doc = parse("layout-parser-paper-with-table.pdf")
    caption = "Table 1: Current layout detection models in the LayoutParser model zoo"
    assert caption in doc.text
    tables = [e for e in doc.elements if e.kind is ElementKind.TABLE]
    assert len(tables) == 1 and tables[0].attributes["caption"] == caption
    rows = table_rows(tables[0].text)
    assert rows[0] == ["Dataset", "Base Model1", "Large Model", "Notes"]
    assert ["PubLayNet [38]", "F / M", "M", "Layouts of modern scientific documents"] in rows


def test_invalid_pdf_structure_reads_both_pages() -> None:
    doc = parse("invalid-pdf-structure-pdfminer-one-page.pdf")
    assert doc.metadata["page_count"] == 2
    # pypdf's content order starts with this heading; in visual order the GAO masthead comes first
    first = [e.text for e in doc.elements if e.page == 1][:5]
    assert "Threats Highlight the Importance of Establishing Leadership in Cybersecurity" in first
    assert any(e.page == 2 for e in doc.elements)


def test_garbage_ocr_layer_is_flagged_without_ocr() -> None:
    doc = parse("pdf-with-ocr-text.pdf")
    assert doc.text.startswith("«POAH «3E*»CM tanntxim.")
    assert any(w.startswith("page 1 has a poor OCR text layer") for w in doc.warnings)
    assert all(e.attributes["text_layer_quality"] < 0.8 for e in doc.elements)


def test_redp5110_title_page() -> None:
    doc = parse("redp5110_sampled.pdf")
    assert doc.metadata["page_count"] == 18
    page1 = [e for e in doc.elements if e.page == 1]
    assert any(
        e.text == "Row and Column Access Control Support in IBM DB2 for i"
        and e.kind in (ElementKind.TITLE, ElementKind.HEADING)
        for e in page1
    )


def test_amt_handbook_start() -> None:
    doc = parse("amt_handbook_sample.pdf")
    assert doc.elements[0].text.startswith("pulleys, provided the inner race of the bearing is clamped")
    assert doc.metadata["title"] == "AMT General Handbook"


def test_complex_header_table_row() -> None:
    doc = parse("2305.03393v1-pg9.pdf")
    tables = [e for e in doc.elements if e.kind is ElementKind.TABLE]
    assert len(tables) == 1
    rows = table_rows(tables[0].text)
    assert ["6", "6", "OTSL", "0.965", "0.934", "0.955", "0.88", "2.73"] in rows
    assert any(r[2:] == ["HTML", "0.969", "0.927", "0.955", "0.857", "5.39"] for r in rows)
    assert "5.1 Hyper Parameter Optimization" in [e.text for e in doc.elements if e.kind is ElementKind.HEADING]


def test_metadata_dates_are_iso() -> None:
    doc = parse("minimal-document.pdf")
    assert doc.metadata["created_at"] == "2022-04-03T18:05:42+02:00"
    assert pdf_date("D:20240103093826+01'00'") == "2024-01-03T09:38:26+01:00"
    assert pdf_date("D:2015121218") == "2015-12-12T18:00:00"
    assert pdf_date("D:20151212185957Z") == "2015-12-12T18:59:57+00:00"
    assert pdf_date("garbage") is None
    assert pdf_date("D:20151332") is None  # month 13


def test_dehyphenation_rules() -> None:
    def lines(*parts: tuple[str, bool]) -> list[Line]:
        return [Line(text, 0, 0, 100, 10, 10, hyphen=h) for text, h in parts]

    assert join_lines(lines(("infor", True), ("mation flows", False))) == "information flows"
    assert join_lines(lines(("Lucene", True), ("BM25 system", False))) == "Lucene-BM25 system"
    assert join_lines(lines(("pages 10-", False), ("20 and", False))) == "pages 10- 20 and"
    assert join_lines(lines(("well-", False), ("known", False))) == "wellknown"
    assert join_lines(lines(("Covid-", False), ("19 cases", False))) == "Covid-19 cases"
    assert join_lines(lines(("漢字", False), ("かな", False))) == "漢字かな"


def test_missing_dependency_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(module: str, extra: str, purpose: str = "") -> object:
        raise MissingDependencyError(module, extra, purpose)

    monkeypatch.setattr(pdf_module, "require", fail)
    with pytest.raises(MissingDependencyError, match=r"ragwright\[pdf\]"):
        parse("minimal-document.pdf")
