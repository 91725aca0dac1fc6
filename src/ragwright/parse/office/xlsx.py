"""XLSX and CSV: every data row becomes a self-describing record under its real header.

Spreadsheets carry meaning in row/column relationships, so a bare row of numbers is useless to
retrieval. Each visible worksheet gives a level-1 ``HEADING`` (the sheet name), then, for each table
region on the sheet (blocks of cells separated by empty rows and columns, found by recursive XY-cuts,
so two tables side by side stay apart — but the column groups of one wide table that empty spacer
columns separate are joined back, see :func:`join_spacer_columns`; a region that is one merged cell is
a title ``PARAGRAPH``, said once):

* title rows above the table (a merged banner or a lone cell) are skipped — kept as a ``PARAGRAPH``
  when they say more than the sheet name;
* the header is the first remaining row whose cells are mostly non-empty strings; a grouped header
  (a merged cell spanning columns with sub-headers below) is read as ``"parent / child"``; a table
  without one is keyed by column letters;
* data rows become records ``Sheet: S; Header1: v1; Header2: v2`` (empty cells skipped), grouped into
  one ``PARAGRAPH`` per :data:`ROW_GROUP_ROWS` rows or :data:`ROW_GROUP_CHARS` characters, one record a
  line, with attributes ``sheet``, ``rows`` (``"3-22"``), ``header``, ``range`` and ``records`` (so a
  chunker splits a group between its lines, never inside a row) — every group
  carries its header, so no chunk loses it.

Values are the cached results of formulas (never the formulas), merged cells take their top-left
value, integers print without ``.0``, dates as ISO-8601, percentages as ``25%``. Chart sheets are
skipped; so is what a reader of the workbook never sees, counted in ``metadata["hidden_elements"]``:
hidden and very-hidden sheets, hidden rows and columns that hold values, and cells whose font is under
2 pt or coloured like the cell's fill (white on an unfilled cell, say; explicit RGB and the legacy
palette's black and white are resolved, theme colours are not and hide nothing).

Before openpyxl sees the package, the sheet count (``xl/workbook.xml``), the number of ``<row>``
elements and the area of merged ranges of every worksheet are counted from the raw XML:
``max_sheets``, ``max_rows`` (all worksheets together) and :data:`~ragwright.parse.office.ooxml.MAX_MERGED_CELLS` raise
:class:`LimitExceeded` without loading anything (openpyxl materialises every merged cell).
"""

from __future__ import annotations

import csv
import io
import math
import re
import warnings
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import PurePath
from typing import Any, Final

from ragwright._deps import require
from ragwright.errors import LimitExceeded, ParseError
from ragwright.model.document import Document, Element, ElementKind
from ragwright.parse.office.ooxml import check_workbook_limits, core_properties, library_errors, open_package
from ragwright.parse.office.xlsx_look import Unseen
from ragwright.parse.options import ParseOptions
from ragwright.parse.pictures import PictureReader

VERSION = "xlsx/5"
CSV_VERSION = "csv/2"
MIME: Final = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
ROW_GROUP_ROWS: Final = 20
ROW_GROUP_CHARS: Final = 1200
MAX_SPACER_COLUMNS: Final = 2
_DELIMITERS: Final = ",;\t|"
_NUMBER: Final = re.compile(r"[-+]?(\d{1,3}(,\d{3})+|\d+)?(\.\d+)?([eE][-+]?\d+)?%?")

Coord = tuple[int, int]
Hidden = tuple[Sequence[int], Sequence[int]]


@dataclass(frozen=True, slots=True)
class Cell:
    """One non-empty cell: display text, whether it is text (not a number/date), its merge origin."""

    text: str
    is_text: bool
    origin: Coord | None = None
    wide: bool = False  # part of a merge spanning several columns


def column_letter(col: int) -> str:
    """1 → A, 27 → AA."""
    out = ""
    while col > 0:
        col, rem = divmod(col - 1, 26)
        out = chr(65 + rem) + out
    return out


def format_value(value: Any, number_format: str = "General") -> tuple[str, bool]:
    """A cell value as display text, and whether it is text (see the module docstring)."""
    if value is None:
        return "", False
    if isinstance(value, bool):
        return ("TRUE" if value else "FALSE"), False
    if isinstance(value, datetime):
        if value.time() == time(0):
            return value.date().isoformat(), False
        return value.isoformat(), False
    if isinstance(value, date | time):
        return value.isoformat(), False
    if isinstance(value, timedelta):
        return str(value), False
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return str(value), False
        if "%" in (number_format or ""):
            return f"{value * 100:.10g}%", False
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
            return str(int(value)), False
        return (f"{value:.15g}" if isinstance(value, float) else str(value)), False
    text = " ".join(str(value).split())
    return text, not (_NUMBER.fullmatch(text.replace(" ", "")) and any(ch.isdigit() for ch in text))


def _runs(coords: list[Coord], axis: int, hidden: Sequence[int]) -> list[list[Coord]]:
    """Split *coords* where a whole row (axis 0) or column (axis 1) is empty (hidden lines do not count)."""
    values = sorted({c[axis] for c in coords})
    breaks: dict[int, int] = {}
    run = 0
    for i, v in enumerate(values):
        gap = v - values[i - 1] - 1 if i else 0
        if gap > 0 and gap > bisect_left(hidden, v) - bisect_right(hidden, values[i - 1]):
            run += 1
        breaks[v] = run
    if run == 0:
        return [coords]
    groups: list[list[Coord]] = [[] for _ in range(run + 1)]
    for c in coords:
        groups[breaks[c[axis]]].append(c)
    return groups


def regions(coords: Iterable[Coord], hidden: Hidden = ((), ())) -> list[list[Coord]]:
    """Table regions by recursive XY-cut over the non-empty cells, top-left first.

    *hidden* holds the sorted hidden rows and columns: a gap made only of hidden lines is no gap.
    """
    stack, out = [list(coords)], []
    while stack:
        cs = stack.pop()
        rows = _runs(cs, 0, hidden[0])
        if len(rows) > 1:
            stack.extend(rows)
            continue
        cols = _runs(cs, 1, hidden[1])
        if len(cols) > 1:
            stack.extend(cols)
            continue
        out.append(cs)
    return sorted((r for r in out if r), key=lambda cs: (min(cs), min(c for _, c in cs)))


def _is_data(cell: Cell) -> bool:
    return not cell.is_text


def join_spacer_columns(parts: list[list[Coord]], grid: dict[Coord, Cell]) -> list[list[Coord]]:
    """Join the column blocks of one wide table that empty spacer columns cut apart.

    Financial statements put an empty column between column groups ("January-June 2025 | | January-June
    2024 | | Change"): the XY-cut sees three tables, and every block but the first loses the row labels.
    A block is joined to the block on its left when it lies within that block's rows, at most
    :data:`MAX_SPACER_COLUMNS` columns away, its rows above its first row of values are header rows on
    the left too (no values there: a table of its own starting beside the left one's data is not
    joined), and its own rows of values hold (almost) no text — the labels are on the left.
    """
    out: list[list[Coord]] = []
    for part in parts:
        host = next((o for o in reversed(out) if _continues(o, part, grid)), None)
        if host is None:
            out.append(part)
        else:
            host.extend(part)
    return sorted(out, key=lambda cs: (min(cs), min(c for _, c in cs)))


def _continues(left: list[Coord], right: list[Coord], grid: dict[Coord, Cell]) -> bool:
    lc1, rc0 = max(c for _, c in left), min(c for _, c in right)
    if not 0 < rc0 - lc1 - 1 <= MAX_SPACER_COLUMNS:
        return False
    lrows, rrows = {r for r, _ in left}, sorted({r for r, _ in right})
    if rrows[0] < min(lrows) or rrows[-1] > max(lrows):
        return False
    valued = sorted({r for r, c in right if _is_data(grid[r, c])})
    if not valued or valued[0] == rrows[0]:
        return False  # no header of its own: nothing says it belongs to the left block's header
    if any(_is_data(grid[r, c]) for r, c in left if r < valued[0]):
        return False  # its header sits beside the left block's values: a table of its own
    below = [grid[r, c] for r, c in right if r >= valued[0]]
    if sum(1 for cell in below if cell.is_text) > 0.2 * len(below):
        return False
    return set(valued) <= lrows


class _Table:
    """One region: title rows, header rows and records."""

    def __init__(self, grid: dict[Coord, Cell], coords: list[Coord]) -> None:
        self.grid = grid
        self.rows = sorted({r for r, _ in coords})
        self.c0 = min(c for _, c in coords)
        self.c1 = max(c for _, c in coords)
        self.titles: list[str] = []
        self.header_rows: list[int] = []
        self._detect()

    def cells(self, row: int) -> list[tuple[int, Cell]]:
        return [(c, self.grid[row, c]) for c in range(self.c0, self.c1 + 1) if (row, c) in self.grid]

    def _detect(self) -> None:
        width, idx = self.c1 - self.c0 + 1, 0
        while width > 1 and idx < min(len(self.rows) - 1, 5):
            vals = self.cells(self.rows[idx])
            if len({cell.text for _, cell in vals}) != 1 or (len(vals) > 1 and vals[0][1].origin is None):
                break
            self.titles.append(vals[0][1].text)
            idx += 1
        if idx >= len(self.rows) - 1:
            return
        vals = self.cells(self.rows[idx])
        texts = sum(1 for _, cell in vals if cell.is_text)
        if len(vals) < math.ceil(width / 2) or texts * 2 < len(vals) or texts == 0:
            return
        self.header_rows.append(self.rows[idx])
        for row in self.rows[idx + 1 : idx + 4]:
            if row == self.rows[-1]:
                break
            vals = self.cells(row)
            if all(self._from_header(cell) for _, cell in vals):
                self.header_rows.append(row)  # the header's own vertical merges
            elif self._sub_header(vals):
                self.header_rows.append(row)
            else:
                break

    def _from_header(self, cell: Cell) -> bool:
        return cell.origin is not None and cell.origin[0] in self.header_rows

    def _sub_header(self, vals: list[tuple[int, Cell]]) -> bool:
        """A row of strings below a header cell merged across columns, naming its parts."""
        if not vals or not all(cell.is_text for _, cell in vals):
            return False
        spans: dict[Coord, set[int]] = {}
        for c, cell in self.cells(self.header_rows[-1]):
            if cell.wide and cell.origin is not None:
                spans.setdefault(cell.origin, set()).add(c)
        below = {c: cell.text for c, cell in vals if not self._from_header(cell)}
        return any(len({below[c] for c in cols if c in below}) >= 2 for cols in spans.values())

    def header(self) -> list[str]:
        names = []
        for c in range(self.c0, self.c1 + 1):
            parts: list[str] = []
            for r in self.header_rows:
                cell = self.grid.get((r, c))
                if cell is not None and cell.text and (not parts or parts[-1] != cell.text):
                    parts.append(cell.text)
            names.append(" / ".join(parts))
        return names

    def records(self, sheet: str | None) -> list[tuple[int, str]]:
        names = self.header()
        start = self.rows.index(self.header_rows[-1]) + 1 if self.header_rows else len(self.titles)
        out = []
        for row in self.rows[start:]:
            fields = [f"Sheet: {sheet}"] if sheet else []
            used = False
            for c, cell in self.cells(row):
                if self._from_header(cell):
                    continue  # a header cell merged down into the data adds nothing
                pair = f"{names[c - self.c0] or column_letter(c)}: {cell.text}"
                if not used or fields[-1] != pair:
                    fields.append(pair)
                    used = True
            if used:
                out.append((row, "; ".join(fields)))
        return out


def sheet_elements(
    sheet: str | None, grid: dict[Coord, Cell], *, heading: bool = True, hidden: Hidden = ((), ())
) -> list[Element]:
    """The elements of one sheet (or CSV file) from its grid of non-empty visible cells."""
    out: list[Element] = []
    base = {"sheet": sheet} if sheet else {}
    for coords in join_spacer_columns(regions(grid, hidden), grid):
        table = _Table(grid, coords)
        first = f"{column_letter(table.c0)}{table.rows[0]}:{column_letter(table.c1)}{table.rows[-1]}"
        if len(coords) == 1:
            out.append(Element(ElementKind.PARAGRAPH, grid[coords[0]].text, attributes={**base, "cell": first}))
            continue
        if grid[coords[0]].origin is not None and len({grid[c].origin for c in coords}) == 1:
            if grid[coords[0]].text != sheet:  # one merged cell standing alone: a title, said once
                attrs = {**base, "title": True, "range": first}
                out.append(Element(ElementKind.PARAGRAPH, grid[coords[0]].text, attributes=attrs))
            continue
        out.extend(
            Element(ElementKind.PARAGRAPH, t, attributes={**base, "title": True}) for t in table.titles if t != sheet
        )
        header = [h for h in table.header() if h]
        group: list[tuple[int, str]] = []
        for record in [*table.records(sheet), None]:
            size = sum(len(t) + 1 for _, t in group)
            if group and (record is None or len(group) >= ROW_GROUP_ROWS or size + len(record[1]) > ROW_GROUP_CHARS):
                attrs = {**base, "rows": f"{group[0][0]}-{group[-1][0]}", "header": header, "range": first}
                attrs["records"] = True  # one record a line: a chunker splits between lines
                out.append(Element(ElementKind.PARAGRAPH, "\n".join(t for _, t in group), attributes=attrs))
                group = []
            if record is not None:
                group.append(record)
    if out and heading and sheet:
        out.insert(0, Element(ElementKind.HEADING, sheet, level=1, attributes={"sheet": sheet}))
    return out


def _grid(ws: Any) -> tuple[dict[Coord, Cell], Hidden, int]:
    """Non-empty visible cells of a worksheet, merged ranges filled; the hidden rows and columns; and how
    many hidden things held values (rows, columns, unreadable cells)."""
    hidden_rows = {r for r, dim in ws.row_dimensions.items() if dim.hidden}
    hidden_cols: set[int] = set()
    for dim in ws.column_dimensions.values():
        if dim.hidden and dim.min and dim.max:
            hidden_cols.update(range(dim.min, dim.max + 1))
    grid: dict[Coord, Cell] = {}
    formats: dict[int, str] = {}
    unseen = Unseen(ws.parent)
    dropped_lines: set[tuple[str, int]] = set()
    unreadable = 0
    for (r, c), cell in ws._cells.items():  # only stored cells: no walk over empty gaps
        value = cell.value
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        if r in hidden_rows or c in hidden_cols:
            dropped_lines.add(("row", r) if r in hidden_rows else ("col", c))
            continue
        if unseen(cell._style):
            unreadable += 1
            continue
        fmt = "General"
        if isinstance(value, int | float) and not isinstance(value, bool):
            fmt_id = cell._style.numFmtId  # number_format is a slow lookup: once per format id
            fmt = formats[fmt_id] if fmt_id in formats else formats.setdefault(fmt_id, cell.number_format)
        text, is_text = format_value(value, fmt)
        if text:
            grid[r, c] = Cell(text, is_text)
    for rng in ws.merged_cells.ranges:
        origin = grid.get((rng.min_row, rng.min_col))
        if origin is None:
            continue
        wide = rng.max_col > rng.min_col
        for r in range(rng.min_row, rng.max_row + 1):
            for c in range(rng.min_col, rng.max_col + 1):
                if r not in hidden_rows and c not in hidden_cols:
                    grid[r, c] = Cell(origin.text, origin.is_text, (rng.min_row, rng.min_col), wide)
    return grid, (sorted(hidden_rows), sorted(hidden_cols)), len(dropped_lines) + unreadable


def parse_xlsx(document_id: str, data: bytes, *, source: str | None, options: ParseOptions) -> Document:
    """Parse XLSX bytes into a :class:`Document` (see the module docstring for the rules)."""
    archive = open_package(data, options, kind="XLSX", main_part="xl/workbook.xml", noun="workbook")
    openpyxl = require("openpyxl", "office", "XLSX parsing")
    elements: list[Element] = []
    skipped: list[str] = []
    hidden = 0
    dropped = 0  # hidden sheets, rows and columns with values, unreadable cells
    pictures = PictureReader(options)  # OCR of pictures placed on the sheets (parse.pictures)
    with library_errors("XLSX"):
        check_workbook_limits(archive, options)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            book = openpyxl.load_workbook(io.BytesIO(data), read_only=False, data_only=True)
        for ws in book.worksheets:  # chart sheets are not worksheets
            if ws.sheet_state != "visible":
                skipped.append(ws.title)
                dropped += 1
                continue
            grid, lines, unseen = _grid(ws)
            hidden += len(lines[0]) + len(lines[1])
            dropped += unseen
            elements.extend(sheet_elements(ws.title, grid, hidden=lines))
            elements.extend(_sheet_pictures(ws, pictures))
        sheets = [ws.title for ws in book.worksheets if ws.sheet_state == "visible"]
    meta = core_properties(archive)
    meta["sheets"] = sheets
    warns = [f"hidden sheet(s) skipped: {', '.join(skipped)}"] if skipped else []
    warns.extend(pictures.warnings)
    if pictures.read_count:
        meta["ocr_pictures"] = pictures.read_count
    if hidden:
        warns.append(f"{hidden} hidden row(s)/column(s) skipped")
    if dropped:
        meta["hidden_elements"] = dropped
    return Document(
        id=document_id,
        elements=tuple(elements),
        title=meta.get("title"),
        source=source,
        mime_type=MIME,
        metadata=meta,
        warnings=tuple(warns),
    )


def _sheet_pictures(ws: Any, pictures: PictureReader) -> list[Element]:
    """What OCR reads in the pictures placed on *ws* (openpyxl loads them with the sheet), top to bottom,
    after the sheet's rows: they sit under the sheet's heading. A picture openpyxl cannot hand over is
    skipped."""
    found: list[tuple[int, int, Element]] = []
    for n, image in enumerate(getattr(ws, "_images", ())):
        try:
            blob = image._data()
        except Exception:  # an image part openpyxl kept but cannot read back
            continue
        anchor = getattr(getattr(image, "anchor", None), "_from", None)
        row = int(getattr(anchor, "row", 0) or 0)
        name = f"{ws.title}!{getattr(image, 'path', None) or f'image{n + 1}'}"
        found.extend((row, n, e) for e in pictures.read(bytes(blob), name))
    return [e for _, _, e in sorted(found, key=lambda t: (t[0], t[1]))]


def _decode_csv(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    for encoding in ("utf-8-sig", "utf-8"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("cp1252", errors="replace")


def _consistency(lines: list[str], delimiter: str) -> int:
    """How many sample lines share the most common non-zero count of *delimiter*."""
    counts = Counter(line.count(delimiter) for line in lines)
    counts.pop(0, None)
    return max(counts.values(), default=0)


def _sniff(sample: str) -> Any:
    """csv.Sniffer's dialect, unless another delimiter splits the sample's lines more consistently."""
    lines = [line for line in sample.splitlines()[:50] if line.strip()]
    best = max(_DELIMITERS, key=lambda d: _consistency(lines, d))
    try:
        dialect: Any = csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
    except csv.Error:
        dialect = csv.excel
    if _consistency(lines, dialect.delimiter) < _consistency(lines, best):
        dialect = csv.excel_tab if best == "\t" else type("Sniffed", (csv.excel,), {"delimiter": best})
    return dialect


def parse_csv(document_id: str, data: bytes, *, source: str | None, options: ParseOptions) -> Document:
    """Parse CSV/TSV bytes: dialect sniffed, header detected, rows as records (``Sheet`` = file stem)."""
    if len(data) > options.max_file_bytes:
        raise LimitExceeded(f"the file has {len(data):,} bytes, over max_file_bytes ({options.max_file_bytes:,})")
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ParseError("corrupt: binary content is not CSV")
    text = _decode_csv(data)
    dialect = _sniff(text[:65536])
    grid: dict[Coord, Cell] = {}
    try:
        for r, row in enumerate(csv.reader(io.StringIO(text, newline=""), dialect), start=1):
            if r > options.max_rows:
                raise LimitExceeded(f"the CSV has more than {options.max_rows:,} rows (max_rows)")
            for c, raw in enumerate(row, start=1):
                value, is_text = format_value(raw)
                if value:
                    grid[r, c] = Cell(value, is_text)
    except csv.Error as exc:
        raise ParseError(f"corrupt: unreadable CSV ({exc})") from exc
    stem = PurePath(source).stem if source else None
    elements = sheet_elements(stem, grid, heading=False)
    return Document(
        id=document_id,
        elements=tuple(elements),
        title=stem,
        source=source,
        mime_type="text/csv",
        metadata={"delimiter": dialect.delimiter},
    )
