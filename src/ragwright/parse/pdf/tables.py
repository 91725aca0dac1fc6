"""Ruled tables: find them from the page's ruling lines, read their cells from pdfium word boxes.

A table region is a cluster of horizontal rules (thin path objects, or the edges of small rectangles
such as row shading) that overlap horizontally and lie close together: this covers full grids and
booktabs-style tables with only three rules. Inside a region, rows are the visual text lines and
column boundaries are the x ranges that no row covers with a word (vertical rules mark boundaries
too). A row of prose that runs across the boundaries (a title inside the grid, a note below it) is
kept whole: leading ones become the caption, trailing ones the notes.

Measured on the corpus this finds the booktabs tables pdfplumber's line finder misses
(``multicolumn.pdf`` p3, ``2305.03393v1-pg9.pdf``), splits the NICS grid into its 50+ state rows, and
costs a few milliseconds per table page instead of pdfplumber's 50-400 ms.
"""

from __future__ import annotations

import bisect
import ctypes
import functools
import itertools
import re
from collections.abc import Callable
from typing import Any, Protocol

from ragwright.parse.pdf.layout import Line, char_words
from ragwright.parse.pdf.order import group_rows

__all__ = [
    "Graphics",
    "PythonLines",
    "Table",
    "TableLines",
    "assemble",
    "find_tables",
    "graphics_from_core",
    "has_regions",
    "read_tables",
    "region_rows",
    "scan_graphics",
]

_PATH, _IMAGE, _FORM = 2, 3, 5
_PRIVATE = re.compile(r"[\x00-\x1f\x7f\ue000-\uf8ff]")  # controls and private-use glyphs (symbol-font bullets)
_Word = tuple[str, float, float, float, float]  # text, x0, x1, y0, y1
_MAX_OBJECTS = 20_000


class Graphics:
    """What a page draws besides text: horizontal and vertical rules, and how much images cover."""

    __slots__ = ("hrules", "image_cover", "image_px", "regions", "vrules")

    def __init__(self) -> None:
        self.hrules: list[tuple[float, float, float]] = []  # (x0, x1, y)
        self.vrules: list[tuple[float, float, float]] = []  # (x, y0, y1)
        self.image_cover = 0.0  # fraction of the page area covered by images or forms (capped at 1)
        self.image_px = 0.0  # pixels per point of the largest image (its native resolution)
        self.regions: list[tuple[float, float, float, float]] | None = None  # table candidates, once computed


class Table:
    """A detected table: rows of cell strings, an optional caption and notes, and its box."""

    __slots__ = ("caption", "notes", "rows", "x0", "x1", "y0", "y1")

    def __init__(self, rows: list[list[str]], box: tuple[float, float, float, float]) -> None:
        self.rows = rows
        self.x0, self.y0, self.x1, self.y1 = box
        self.caption: str | None = None
        self.notes: list[str] = []

    def markdown(self) -> str:
        """The table as GitHub Markdown: header row, ``| --- |`` separator, body rows."""
        width = max(len(r) for r in self.rows)

        def fmt(row: list[str]) -> str:
            cells = [" ".join(_PRIVATE.sub("", c).split()).replace("|", "\\|") for c in row]
            cells += [""] * (width - len(cells))
            return "| " + " | ".join(cells) + " |"

        out = [fmt(self.rows[0]), "| " + " | ".join(["---"] * width) + " |"]
        out.extend(fmt(r) for r in self.rows[1:])
        return "\n".join(out)


def scan_graphics(raw: Any, page: Any, width: float, height: float) -> Graphics:
    """Rules and image coverage from the page's top-level objects (one pass, no rendering)."""
    g = Graphics()
    count = min(int(raw.FPDFPage_CountObjects(page)), _MAX_OBJECTS)
    left, bottom, right, top = ctypes.c_float(), ctypes.c_float(), ctypes.c_float(), ctypes.c_float()
    refs = (ctypes.byref(left), ctypes.byref(bottom), ctypes.byref(right), ctypes.byref(top))
    get_obj, get_type, get_bounds = raw.FPDFPage_GetObject, raw.FPDFPageObj_GetType, raw.FPDFPageObj_GetBounds
    area = max(width * height, 1.0)
    covered = 0.0
    for i in range(count):
        obj = get_obj(page, i)
        kind = get_type(obj)
        if kind == 1:  # text: by far the most common object
            continue
        if (kind != _PATH and kind != _IMAGE and kind != _FORM) or not get_bounds(obj, *refs):
            continue
        x0, y0, x1, y1 = left.value, bottom.value, right.value, top.value
        w, h = x1 - x0, y1 - y0
        if kind == _PATH:
            if h <= 2.5:
                if w >= 10:
                    g.hrules.append((x0, x1, (y0 + y1) / 2))
            elif w <= 2.5:
                if h >= 6:
                    g.vrules.append(((x0 + x1) / 2, y0, y1))
            elif w >= 10 and h <= 60 and int(raw.FPDFPath_CountSegments(obj)) <= 6:
                g.hrules.append((x0, x1, y0))
                g.hrules.append((x0, x1, y1))
                g.vrules.append((x0, y0, y1))
                g.vrules.append((x1, y0, y1))
            continue
        cw = max(0.0, min(x1, width) - max(x0, 0.0))
        ch = max(0.0, min(y1, height) - max(y0, 0.0))
        covered += cw * ch  # images, and form XObjects (scanners often wrap the page image in one)
        if kind == _IMAGE and cw * ch > 0.25 * area:
            px_w, px_h = ctypes.c_uint(), ctypes.c_uint()
            if raw.FPDFImageObj_GetImagePixelSize(obj, ctypes.byref(px_w), ctypes.byref(px_h)) and w > 0:
                g.image_px = max(g.image_px, px_w.value / w)
    g.image_cover = min(covered / area, 1.0)
    return g


def graphics_from_core(found: tuple[list[Any], list[Any], float, float, list[Any]]) -> Graphics:
    """:class:`Graphics` from the C engine's ``graphics()`` (same scan and regions as the Python code)."""
    g = Graphics()
    g.hrules, g.vrules, g.image_cover, g.image_px, g.regions = found
    return g


def has_regions(graphics: Graphics) -> bool:
    """Whether the page's rules form any table candidate (:func:`find_tables` needs the lines only then)."""
    if graphics.regions is None:
        graphics.regions = _regions(graphics.hrules)
    return bool(graphics.regions)


def _regions(hrules: list[tuple[float, float, float]]) -> list[tuple[float, float, float, float]]:
    """Clusters of horizontal rules of about the same extent lying close together: candidate tables.

    Table rules share their extent (booktabs top/mid/bottom rules, grid lines, row shading); fraction
    bars and underlines do not, and rules shorter than 40 pt are ignored.
    """
    clusters: list[list[float]] = []  # [x0, y0, x1, y1, distinct rule count]
    for x0, x1, y in sorted(hrules, key=lambda r: -r[2]):
        if x1 - x0 < 40:
            continue
        for c in clusters:
            overlap = min(x1, c[2]) - max(x0, c[0])
            if overlap >= 0.8 * max(x1 - x0, c[2] - c[0]) and c[1] - y <= 90:
                if c[1] - y > 2.0:
                    c[4] += 1
                c[0], c[1], c[2] = min(c[0], x0), min(c[1], y), max(c[2], x1)
                break
        else:
            clusters.append([x0, y, x1, y, 1])
    return [(c[0], c[1], c[2], c[3]) for c in clusters if c[4] >= 2 and c[3] - c[1] >= 8]


_Rows = tuple[list[list[_Word]], list[bool], list[float], tuple[float, float, float, float]]


class TableLines(Protocol):
    """Where :func:`read_tables` gets a region's rows of words and removes the lines of a found table."""

    def rows(self, region: tuple[float, float, float, float]) -> _Rows | None: ...

    def remove(self, table: Table) -> None: ...


class PythonLines:
    """:class:`TableLines` over Python ``Line`` objects (the lines list is changed in place)."""

    def __init__(
        self, lines: list[Line], words: Callable[[Line], list[_Word]], vrules: list[tuple[float, float, float]]
    ) -> None:
        self.lines = lines
        self.words = words
        self.vrules = vrules

    def rows(self, region: tuple[float, float, float, float]) -> _Rows | None:
        return region_rows(self.words, self.lines, region, self.vrules)

    def remove(self, table: Table) -> None:
        self.lines[:] = [ln for ln in self.lines if not _inside(ln, table)]


def find_tables(raw: Any, textpage: Any, text: str, lines: list[Line], graphics: Graphics) -> list[Table]:
    """Tables on one page; the lines they cover are removed from ``lines`` (in place)."""
    regions = graphics.regions if graphics.regions is not None else _regions(graphics.hrules)
    words = functools.partial(char_words, raw, textpage, text)
    return read_tables(PythonLines(lines, words, graphics.vrules), regions)


def read_tables(source: TableLines, regions: list[tuple[float, float, float, float]]) -> list[Table]:
    """Tables in the regions, in order; each found table's lines are removed from *source* at once."""
    tables: list[Table] = []
    for region in regions:
        rows = source.rows(region)
        table = assemble(rows, region) if rows is not None else None
        if table is None:
            continue
        tables.append(table)
        source.remove(table)
    return tables


def _inside(ln: Line, t: Table) -> bool:
    mid = (ln.y0 + ln.y1) / 2
    return t.y0 - 1 <= mid <= t.y1 + 1 and ln.x0 >= t.x0 - 2 * ln.size and ln.x1 <= t.x1 + 2 * ln.size


def region_rows(
    line_words: Callable[[Line], list[_Word]],
    lines: list[Line],
    region: tuple[float, float, float, float],
    vrules: list[tuple[float, float, float]],
) -> _Rows | None:
    """The rows of words of a region, their prose flags, the column boundaries and the box of its lines.

    None when the region cannot hold a table: fewer than two lines inside, fewer than two rows of
    aligned (not prose) words, or no column boundary. The C engine computes the same (``region_rows``).
    """
    rx0, ry0, rx1, ry1 = region
    lo, hi = ry0 - 1, ry1 + 1  # _inside(ln, region), inlined: this runs for every line of every region
    inside = [
        ln
        for ln in lines
        if not ln.vertical
        and ln.start >= 0
        and lo <= (ln.y0 + ln.y1) / 2 <= hi
        and ln.x0 >= rx0 - 2 * ln.size
        and ln.x1 <= rx1 + 2 * ln.size
    ]
    if len(inside) < 2:
        return None
    words_per_row: list[list[_Word]] = []
    for row in group_rows(inside, max_size_ratio=1.25):
        words = [w for ln in row for w in line_words(ln)]
        words_per_row.extend(_split_by_height(words))
    sizes = sorted(ln.size for ln in inside)
    size = sizes[len(sizes) // 2]
    min_gap = 0.55 * size
    prose = [_max_gap(ws) < 0.55 * max(w[4] - w[3] for w in ws) for ws in words_per_row]
    body = [ws for ws, p in zip(words_per_row, prose, strict=True) if not p and ws]
    if len(body) < 2:
        return None
    bounds = _boundaries(body, min_gap, [v for v in vrules if ry0 - 2 <= (v[1] + v[2]) / 2 <= ry1 + 2])
    if not bounds:
        return None
    box = (
        min(ln.x0 for ln in inside),
        min(ln.y0 for ln in inside),
        max(ln.x1 for ln in inside),
        max(ln.y1 for ln in inside),
    )
    return words_per_row, prose, bounds, box


def assemble(rows: _Rows, region: tuple[float, float, float, float]) -> Table | None:
    """Cells from the rows of words: caption and notes split off, checks that it is really a table."""
    words_per_row, prose, bounds, inside = rows
    rx0, ry0, rx1, ry1 = region
    cells: list[list[str]] = []
    whole: list[bool] = []
    straddles: list[bool] = []
    spans: list[tuple[float, float]] = []  # (top, bottom) of each row
    for ws, is_prose in zip(words_per_row, prose, strict=True):
        if not ws:
            continue
        text_row = " ".join(w[0] for w in ws)
        straddling = sum(1 for w in ws for x in bounds if w[1] < x < w[2]) >= 2
        if is_prose and _crosses(ws, bounds):
            straddles.append(straddling)
            cells.append([text_row])
            whole.append(True)
            spans.append((max(w[4] for w in ws), min(w[3] for w in ws)))
            continue
        out = [""] * (len(bounds) + 1)
        for w, a, b, _, _ in ws:
            col = bisect.bisect(bounds, (a + b) / 2)
            out[col] = f"{out[col]} {w}" if out[col] else w
        if cells and not whole[-1] and _continues(out, cells[-1], ws, spans[-1]):
            cells[-1] = [f"{a} {b}" if a and b else a or b for a, b in zip(cells[-1], out, strict=True)]
            spans[-1] = (spans[-1][0], min(w[3] for w in ws))
            continue
        cells.append(out)
        whole.append(False)
        straddles.append(straddling)
        spans.append((max(w[4] for w in ws), min(w[3] for w in ws)))
    caption: list[str] = []
    while cells and whole[0]:
        caption.append(cells.pop(0)[0])
        whole.pop(0)
        straddles.pop(0)
    notes: list[str] = []
    while cells and (whole[-1] or straddles[-1] or not any(cells[-1][1:])):
        notes.insert(0, " ".join(c for c in cells.pop() if c))
        whole.pop()
        straddles.pop()
    width = len(bounds) + 1
    cells = [r if len(r) == width else r + [""] * (width - len(r)) for r in cells]
    keep = [j for j in range(width) if any(r[j] for r in cells)]
    cells = [[r[j] for j in keep] for r in cells]
    multi = sum(1 for r in cells if sum(1 for c in r if c) >= 2)
    if len(keep) < 2 or multi < 2 or multi < 0.4 * len(cells):
        return None
    if len(keep) == 2 and all(r[0] == str(i + 1) for i, r in enumerate(cells)):
        return None  # a numbered code listing in a frame, not a table
    filled = [c for r in cells for c in r if c]
    if sum(len(c) for c in filled) / len(filled) > 60:
        return None  # long prose cells: columns of text, not a table
    if not _substantive(cells, filled):
        return None  # tick labels of a plot, an equation: ruled, aligned, but not a table
    box = (min(rx0, inside[0]), min(ry0, inside[1]), max(rx1, inside[2]), max(ry1, inside[3]))
    table = Table(cells, box)
    table.caption = " ".join(caption) or None
    table.notes = notes
    return table


def _continues(row: list[str], prev: list[str], words: list[_Word], prev_span: tuple[float, float]) -> bool:
    """A wrapped cell's next line: first cell empty, few cells, each under a filled cell, set tight."""
    filled = [j for j, c in enumerate(row) if c]
    if row[0] or not filled or len(filled) > max(1, len(row) // 2) or any(not prev[j] for j in filled):
        return False
    top = max(w[4] for w in words)
    height = top - min(w[3] for w in words)
    return prev_span[1] - top <= 0.6 * height


def _meaningful(cell: str) -> bool:
    return sum(1 for c in cell if c.isalnum()) >= 2


def _substantive(cells: list[list[str]], filled: list[str]) -> bool:
    """Most cells carry a word or a multi-digit number, or the grid is full and its rows are labelled."""
    if sum(1 for c in filled if _meaningful(c)) >= 0.6 * len(filled):
        return True
    labels = [r[0] for r in cells if r[0]]
    full = len(filled) >= 0.65 * sum(len(r) for r in cells)
    return full and bool(labels) and sum(1 for c in labels if _meaningful(c)) >= 0.6 * len(labels)


def _split_by_height(words: list[_Word]) -> list[list[_Word]]:
    """Words of one pdfium line that sit at different heights (a title beside a header row) as rows."""
    rows: list[list[_Word]] = []
    for w in sorted(words, key=lambda w: -w[4]):
        for row in rows:
            top, bottom = row[0][4], row[0][3]
            if min(top, w[4]) - max(bottom, w[3]) >= 0.4 * min(top - bottom, w[4] - w[3]):
                row.append(w)
                break
        else:
            rows.append([w])
    return [sorted(r, key=lambda w: w[1]) for r in rows]


def _max_gap(words: list[_Word]) -> float:
    return max((b[1] - a[2] for a, b in itertools.pairwise(words)), default=0.0)


def _crosses(words: list[_Word], bounds: list[float]) -> bool:
    lo, hi = words[0][1], words[-1][2]
    return any(lo < b < hi for b in bounds)


def _boundaries(rows: list[list[_Word]], min_gap: float, vrules: list[tuple[float, float, float]]) -> list[float]:
    """Column boundaries: x ranges no body row covers with a word (narrower ones where a rule runs)."""
    events: list[tuple[float, int]] = []
    for ws in rows:
        for a, b in _merge_intervals(ws):
            events.append((a, 1))
            events.append((b, -1))
    events.sort()
    allow = len(rows) // 10
    lo = min(e[0] for e in events)
    hi = max(e[0] for e in events)
    rule_xs = sorted(v[0] for v in vrules)
    bounds: list[float] = []
    depth = 0
    gap_start: float | None = None
    for x, delta in events:
        before = depth
        depth += delta
        if before > allow >= depth:
            gap_start = x
        elif before <= allow < depth and gap_start is not None:
            if lo < gap_start and x < hi:
                ruled = any(gap_start <= rx <= x for rx in rule_xs)
                if x - gap_start >= min_gap or (ruled and x - gap_start > 0.5):
                    bounds.append((gap_start + x) / 2)
            gap_start = None
    return bounds


def _merge_intervals(words: list[_Word]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for w in sorted(words, key=lambda t: t[1]):
        if out and w[1] <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], w[2]))
        else:
            out.append((w[1], w[2]))
    return out
