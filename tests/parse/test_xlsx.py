"""XLSX and CSV parsers: MANIFEST facts, records under real headers, limits and hostile workbooks."""

from __future__ import annotations

import io
import zipfile
from datetime import date, datetime
from pathlib import Path

import pytest

from ragwright.errors import LimitExceeded, ParseError
from ragwright.model.document import Document, Element, ElementKind
from ragwright.options import ParseOptions

openpyxl = pytest.importorskip("openpyxl")
pytest.importorskip("olefile")

from ragwright.parse.office.ooxml import MAX_MERGED_CELLS  # noqa: E402
from ragwright.parse.office.xlsx import (  # noqa: E402
    ROW_GROUP_ROWS,
    VERSION,
    format_value,
    parse_csv,
    parse_xlsx,
)

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "docs-corpus"


def parse(name: str, **options: object) -> Document:
    data = (CORPUS / "xlsx" / name).read_bytes()
    return parse_xlsx("x", data, source=name, options=ParseOptions(**options))  # type: ignore[arg-type]


def records(doc: Document, sheet: str | None = None) -> list[str]:
    return [
        line
        for e in doc.elements
        if e.kind is ElementKind.PARAGRAPH
        and "rows" in e.attributes
        and (sheet is None or e.attributes["sheet"] == sheet)
        for line in e.text.splitlines()
    ]


def headings(doc: Document) -> list[str]:
    return [e.text for e in doc.elements if e.kind is ElementKind.HEADING]


def groups(doc: Document) -> list[Element]:
    return [e for e in doc.elements if "rows" in e.attributes]


# --- the corpus (MANIFEST "check" column) --------------------------------------------------------


def test_any_sheets_only_visible_worksheets() -> None:
    doc = parse("any_sheets.xlsx")
    assert VERSION == "xlsx/5"
    assert headings(doc) == ["Visible"]  # not Hidden, VeryHidden, nor the chart sheet
    assert doc.metadata["sheets"] == ["Visible"]
    assert records(doc) == ["Sheet: Visible; A: 1; B: 2", "Sheet: Visible; A: 3; B: 4", "Sheet: Visible; A: 5; B: 6"]
    assert any("Hidden" in w and "VeryHidden" in w for w in doc.warnings)
    note = [e for e in doc.elements if e.attributes.get("cell")]
    assert note and note[0].text.startswith("This workbook contains 4 sheets")


def test_stanley_cups_header_below_merged_title() -> None:
    doc = parse("stanley-cups.xlsx")
    assert headings(doc) == ["Stanley Cups", "Stanley Cups Since 67"]
    rows = records(doc, "Stanley Cups")
    assert "Sheet: Stanley Cups; Team: Maple Leafs; Location: TOR; Stanley Cups: 13" in rows
    assert len(rows) == 3  # the banner and the header are not records
    assert groups(doc)[0].attributes["header"] == ["Team", "Location", "Stanley Cups"]
    assert groups(doc)[0].attributes["rows"] == "3-5"
    assert "Sheet: Stanley Cups Since 67; Team: Maple Leafs; Location: TOR; Stanley Cups: 0" in records(doc)


def test_shared_formula_cached_values() -> None:
    rows = records(parse("shared_formula_simple.xlsx"))
    assert [r.rsplit("B: ", 1)[1] for r in rows] == ["2", "4", "6"]
    assert not any("=" in r for r in rows)


def test_merged_ranges_take_the_top_left_value() -> None:
    doc = parse("merged_range.xlsx")
    sheet1 = records(doc, "Sheet1")
    # C3:D3 is merged: D3 takes C3's value under D's header (C1, merged C1:D2), once per record
    assert sheet1[0] == "Sheet: Sheet1; A1: A3; B1: B3; C1: C3; E1: E3; F1: F3; G1: G3; H1: H3"
    sheet2 = records(doc, "Sheet2")
    assert sheet2[1] == "Sheet: Sheet2; B1: B4; C1: C3; E1: E4"  # C4 lies in C3:D4
    header = next(e for e in groups(doc) if e.attributes["sheet"] == "Sheet2").attributes["header"]
    assert header == ["A1", "B1", "C1", "C1", "E1", "F1", "F1", "F1"]  # F1:H4 fills the header row


@pytest.mark.parametrize("name", ["pass_protected.xlsx", "password_protected.xlsx"])
def test_encrypted_workbooks(name: str) -> None:
    with pytest.raises(ParseError, match=r"^encrypted: the workbook is password-protected"):
        parse(name)


def test_test01_tables_per_region_and_grouped_headers() -> None:
    doc = parse("test-01.xlsx")
    assert headings(doc) == ["Sheet1", "Sheet2", "Sheet3"]
    tables = [(e.attributes["sheet"], e.attributes["range"], e.attributes["header"]) for e in groups(doc)]
    assert tables == [
        ("Sheet1", "A1:C7", ["first", "second", "third"]),
        ("Sheet2", "A1:D9", ["col-1", "col-2", "col-3", "col-4"]),
        ("Sheet2", "G5:I9", ["col-1", "col-2", "col-3"]),
        ("Sheet2", "C14:E18", ["col-1", "col-2", "col-3"]),
        ("Sheet3", "A1:C7", ["first", "header / second", "header / third"]),
        ("Sheet3", "E7:G13", ["first (f)", "header (f) / second", "header (f) / third"]),
    ]
    sheet3 = records(doc, "Sheet3")
    assert sheet3[4] == "Sheet: Sheet3; first: 10; header / second: 9; header / third: 9"  # B6:C7 merged
    assert records(doc, "Sheet2")[0] == "Sheet: Sheet2; col-1: 1; col-2: 2; col-3: 3; col-4: 4"


# --- synthetic workbooks -------------------------------------------------------------------------


def workbook_bytes(build: object) -> bytes:
    book = openpyxl.Workbook()
    build(book)  # type: ignore[operator]
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def test_values_hidden_rows_columns_and_row_groups() -> None:
    def build(book: object) -> None:
        ws = book.active  # type: ignore[attr-defined]
        ws.title = "Prices"
        ws.append(["Product", "Price", "Share", "Since", "Secret"])
        for n in range(1, 46):
            ws.append([f"P{n}", n * 1.5 if n % 2 else float(n), 0.25, date(2024, 1, n % 28 + 1), "x"])
        ws["C2"].number_format = "0%"
        ws.column_dimensions["E"].hidden = True
        ws.row_dimensions[3].hidden = True
        book.create_sheet("Internal").sheet_state = "hidden"  # type: ignore[attr-defined]

    doc = parse_xlsx("w", workbook_bytes(build), source=None, options=ParseOptions())
    rows = records(doc)
    assert rows[0] == "Sheet: Prices; Product: P1; Price: 1.5; Share: 25%; Since: 2024-01-02"
    assert not any("P2;" in r for r in rows)  # hidden row 3
    assert not any("Secret" in r for r in rows)  # hidden column E
    assert "Price: 4;" in rows[2]  # a whole float prints as an integer
    found = groups(doc)
    assert len(found) >= 3 and all(len(g.text.splitlines()) <= ROW_GROUP_ROWS for g in found)
    assert all(g.attributes["header"] == ["Product", "Price", "Share", "Since"] for g in found)
    assert found[0].attributes["rows"].startswith("2-")
    assert headings(doc) == ["Prices"]


def _half_year_segments(book: object) -> None:
    """The shape of Nestlé's half-year segment sheet: a merged title, an empty row, a three-row merged
    header (period / measure / unit) over column groups that empty spacer columns (F, K) separate."""
    ws = book.active  # type: ignore[attr-defined]
    ws.title = "Segments"
    ws["A1"] = "Half-Yearly Report January-June 2025: operating segments"
    ws.merge_cells("A1:M1")
    ws["A3"] = "In millions of CHF"
    ws.merge_cells("A3:A5")
    for first, period in ((2, "January-June 2025"), (7, "January-June 2024")):
        ws.cell(3, first, period)
        ws.merge_cells(start_row=3, start_column=first, end_row=3, end_column=first + 3)
        ws.cell(4, first, "Sales")
        ws.merge_cells(start_row=4, start_column=first, end_row=4, end_column=first + 1)
        ws.cell(4, first + 2, "Trading operating profit")
        ws.merge_cells(start_row=4, start_column=first + 2, end_row=4, end_column=first + 3)
        for i, unit in enumerate(("Total", "Organic growth", "CHF", "Margin")):
            ws.cell(5, first + i, unit)
    ws["L3"] = "Change"
    ws.merge_cells("L3:M3")
    ws["L4"], ws["M4"], ws["L5"], ws["M5"] = "Sales", "Profit", "%", "%"
    rows = [
        ("Zone North America", 11830, 0.02, 2450, 0.207, 12101, 0.011, 2563, 0.212, -0.022, -0.044),
        ("Zone Europe", 9611, 0.031, 1602, 0.167, 9540, 0.025, 1558, 0.163, 0.007, 0.028),
        ("Zone Latin America", 6120, 0.054, 1210, 0.198, 6640, 0.089, 1317, 0.198, -0.078, -0.081),
    ]
    for r, (label, *values) in enumerate(rows, start=6):
        ws.cell(r, 1, label)
        for c, v in zip((2, 3, 4, 5, 7, 8, 9, 10, 12, 13), values, strict=True):
            ws.cell(r, c, v).number_format = "0.0%" if isinstance(v, float) else "General"


def test_a_wide_sheet_keeps_each_row_whole_under_its_combined_header() -> None:
    """Issue 26 item 5: the spacer columns used to cut each row into three records (the second and third
    without the row's label) and the merged title came out as a record repeating it under A, B ... M."""
    doc = parse_xlsx("x", workbook_bytes(_half_year_segments), source="h1.xlsx", options=ParseOptions())
    rows = records(doc)
    assert len(rows) == 3
    assert rows[1] == (
        "Sheet: Segments; In millions of CHF: Zone Europe; January-June 2025 / Sales / Total: 9611; "
        "January-June 2025 / Sales / Organic growth: 3.1%; January-June 2025 / Trading operating profit / CHF: 1602; "
        "January-June 2025 / Trading operating profit / Margin: 16.7%; January-June 2024 / Sales / Total: 9540; "
        "January-June 2024 / Sales / Organic growth: 2.5%; January-June 2024 / Trading operating profit / CHF: 1558; "
        "January-June 2024 / Trading operating profit / Margin: 16.3%; Change / Sales / %: 0.7%; "
        "Change / Profit / %: 2.8%"
    )
    assert {e.attributes["range"] for e in groups(doc)} == {"A3:M8"}
    titles = [e for e in doc.elements if e.attributes.get("title")]
    assert [e.text for e in titles] == ["Half-Yearly Report January-June 2025: operating segments"]
    assert doc.text.count("operating segments") == 1


def test_format_value() -> None:
    assert format_value("%") == ("%", True)  # a unit, not a number
    assert format_value("12%") == ("12%", False)
    assert format_value(13.0) == ("13", False)
    assert format_value(0.1 + 0.2) == ("0.3", False)
    assert format_value(datetime(2024, 5, 1, 0, 0)) == ("2024-05-01", False)
    assert format_value(datetime(2024, 5, 1, 9, 30)) == ("2024-05-01T09:30:00", False)
    assert format_value(True) == ("TRUE", False)
    assert format_value("  two\nlines ") == ("two lines", True)
    assert format_value("1,234.5") == ("1,234.5", False)


def test_sheet_and_row_limits() -> None:
    def build(book: object) -> None:
        for n in range(3):
            ws = book.create_sheet(f"S{n}")  # type: ignore[attr-defined]
            for r in range(10):
                ws.append(["k", r])

    data = workbook_bytes(build)
    with pytest.raises(LimitExceeded, match="max_sheets"):
        parse_xlsx("w", data, source=None, options=ParseOptions(max_sheets=2))
    with pytest.raises(LimitExceeded, match="max_rows"):
        parse_xlsx("w", data, source=None, options=ParseOptions(max_rows=25))
    assert parse_xlsx("w", data, source=None, options=ParseOptions(max_rows=30)).elements


def rewrite(data: bytes, changes: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            dst.writestr(item.filename, changes.pop(item.filename, src.read(item)))
        for name, body in changes.items():  # new members
            dst.writestr(name, body)
    return buf.getvalue()


@pytest.mark.parametrize("member", ["xl/worksheets/sheet1.xml", "xl/sharedStrings.xml"])
def test_xml_bomb_refused(member: str) -> None:
    data = workbook_bytes(lambda book: book.active.append(["hello", "world"]))
    lol = "".join(f'<!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">' for n in range(1, 10))
    bomb = (
        f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY lol0 "lol">{lol}]>'
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        '<row r="1"><c r="A1" t="inlineStr"><is><t>&lol9;</t></is></c></row></sheetData></worksheet>'
    ).encode()
    with pytest.raises(ParseError, match="unsafe XML"):
        parse_xlsx("bomb", rewrite(data, {member: bomb}), source=None, options=ParseOptions())


def test_merge_bomb_refused_before_openpyxl_materialises_it() -> None:
    data = workbook_bytes(lambda book: book.active.append(["a"]))
    sheet = zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml")
    bombed = sheet.replace(
        b"</sheetData>", b'</sheetData><mergeCells count="1"><mergeCell ref="A1:XFD1048576"/></mergeCells>'
    )
    assert bombed != sheet
    with pytest.raises(LimitExceeded, match=f"over the limit of {MAX_MERGED_CELLS:,}"):
        parse_xlsx("m", rewrite(data, {"xl/worksheets/sheet1.xml": bombed}), source=None, options=ParseOptions())


def test_not_a_workbook() -> None:
    with pytest.raises(ParseError, match=r"not an XLSX: the package has no xl/workbook\.xml"):
        parse_xlsx("x", (CORPUS / "docx" / "word_sample.docx").read_bytes(), source=None, options=ParseOptions())
    legacy = (CORPUS / "hostile" / "OOM_alloc.xls").read_bytes()  # BIFF in an OLE container
    with pytest.raises(ParseError, match="not an XLSX: a legacy binary Office"):
        parse_xlsx("x", legacy, source=None, options=ParseOptions())


def test_zip_bomb_archive_from_corpus() -> None:
    data = (CORPUS / "hostile" / "zipbomb_1G.zip").read_bytes()
    with pytest.raises(LimitExceeded, match="zip bomb"):
        parse_xlsx("z", data, source=None, options=ParseOptions())


# --- CSV ------------------------------------------------------------------------------------------


def test_csv_dialect_encoding_header_and_records() -> None:
    data = "Report 2024\nName;Price;Since\nJosé;1,5;2024-01-01\nÅsa;2;2024-02-01\n".encode("cp1252")
    doc = parse_csv("c", data, source="/data/prices.csv", options=ParseOptions())
    assert doc.metadata["delimiter"] == ";"
    assert doc.title == "prices"
    assert [e.text for e in doc.elements if e.attributes.get("title")] == ["Report 2024"]
    assert records(doc) == [
        "Sheet: prices; Name: José; Price: 1,5; Since: 2024-01-01",
        "Sheet: prices; Name: Åsa; Price: 2; Since: 2024-02-01",
    ]


def test_csv_without_source_omits_sheet_and_keys_numeric_tables_by_letter() -> None:
    data = "\ufeff1\t2\n3\t4\n".encode()
    doc = parse_csv("c", data, source=None, options=ParseOptions())
    assert records(doc) == ["A: 1; B: 2", "A: 3; B: 4"]


def test_csv_row_limit() -> None:
    data = ("h1,h2\n" + "a,b\n" * 50).encode()
    with pytest.raises(LimitExceeded, match="max_rows"):
        parse_csv("c", data, source=None, options=ParseOptions(max_rows=10))
