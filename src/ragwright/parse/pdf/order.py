"""Reading order and blocks for one page: columns, bands, paragraphs, list items, de-hyphenation.

* **Columns** come from vertical gutters: x ranges that no narrow line covers, with at least three
  lines on each side that sit beside each other. Lines that reach well into two columns (titles,
  wide figures and tables) split the page into horizontal *bands*; each band is read column by
  column, top to bottom, so a two-column abstract reads contiguously.
* **Paragraphs** break on a vertical gap larger than the usual line spacing, a change of font size,
  a first-line indent, a short line ending a sentence, or a list bullet.
* **De-hyphenation**: a word broken at a line end is joined ("infor-" + "mation"), but the hyphen is
  kept when the continuation starts with an uppercase letter or a digit ("Lucene-" + "BM25").
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Hashable

from ragwright.parse.pdf.layout import Line

__all__ = [
    "Block",
    "find_gutters",
    "group_rows",
    "join_lines",
    "reading_groups",
    "running_candidates",
    "running_tokens",
    "sort_rows",
    "split_blocks",
]

_BULLET = re.compile(r"^(?:[•●○◦▪■□‣►▸✓✔\-–—*]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)]|\([ivxlc]{1,5}\))\s+[\w(\"“‘'„]")
_BULLET_GLYPH = re.compile(r"^[•●○◦▪■□‣►▸✓✔]\s*")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ue000-\uf8ff]")  # controls, private-use glyphs
_SENTENCE_END = (".", "!", "?", ":", ";", "\u3002", "\uff01", "\uff1f")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef\u3000-\u303f]")
_LEADER = re.compile(r"(?:\.\s?){4,}\s*\S{1,6}$")
_PAGE_NUMBER = re.compile(r"^(?:(?:page|seite|p\.|s\.)\s*)?[-–—]?\s*(?:#|[ivxlcdm]+)\s*[-–—]?(?:\s*(?:of|/|von)\s*#)?$")
_LINE_NUMBER = re.compile(r"^\d{1,3}$")
_DIGITS = re.compile(r"\d+")


class Block:
    """Consecutive lines that form one paragraph, list item, heading candidate or table."""

    __slots__ = ("_text", "kind", "lines", "size")

    def __init__(self, lines: list[Line], kind: str) -> None:
        self.lines = lines
        self.kind = kind  # "paragraph", "list_item" or "table"
        self.size = lines[0].size if len(lines) == 1 else max(lines, key=lambda ln: len(ln.text)).size
        self._text: str | None = None

    @property
    def text(self) -> str:
        """The block's text, lines joined with de-hyphenation (a table's Markdown for tables)."""
        if self._text is None:
            if self.kind == "table":
                text = str(self.lines[0].text)
            else:
                text = join_lines(self.lines)
                if _CONTROL.search(text):
                    text = " ".join(_CONTROL.sub("", text).split())
                if self.kind == "list_item":
                    text = _BULLET_GLYPH.sub("", text)
            self._text = text
        return self._text

    @property
    def bold(self) -> bool:
        return all(ln.bold for ln in self.lines)

    @property
    def vertical(self) -> bool:
        return self.lines[0].vertical

    @property
    def top(self) -> float:
        return max(ln.y1 for ln in self.lines)


def find_gutters(lines: list[Line]) -> list[tuple[float, float]]:
    """Vertical gutters ``(x_left, x_right)`` between text columns; empty for single-column pages."""
    if len(lines) < 6:
        return []
    left = min(ln.x0 for ln in lines)
    width = max(ln.x1 for ln in lines) - left
    if width <= 0:
        return []
    narrow = sorted((ln.x0, ln.x1) for ln in lines if ln.x1 - ln.x0 < 0.6 * width)
    if len(narrow) < 6:
        return []
    sizes = sorted(ln.size for ln in lines)
    min_gap = max(0.6 * sizes[len(sizes) // 2], 4.0)
    candidates = _coverage_gaps(narrow, len(narrow) // 10, min_gap)
    gutters: list[tuple[float, float]] = []
    for ga, gb in candidates:
        lft = [ln for ln in lines if ln.x1 <= ga + 1.0]
        rgt = [ln for ln in lines if ln.x0 >= gb - 1.0]
        if len(lft) < 3 or len(rgt) < 3 or len(lft) + len(rgt) < 0.5 * len(lines):
            continue
        l_top, l_bot = max(ln.y1 for ln in lft), min(ln.y0 for ln in lft)
        r_top, r_bot = max(ln.y1 for ln in rgt), min(ln.y0 for ln in rgt)
        overlap = min(l_top, r_top) - max(l_bot, r_bot)
        if overlap < 0.3 * min(l_top - l_bot, r_top - r_bot):
            continue
        gutters.append((ga, gb))
    return gutters


def _coverage_gaps(intervals: list[tuple[float, float]], allow: int, min_gap: float) -> list[tuple[float, float]]:
    """X ranges at least *min_gap* wide covered by at most *allow* intervals, between covered ranges.

    Each range is then narrowed to its least covered part, so a gutter crossed by a few long lines
    (centred titles, overlong entries) is placed where the columns really part.
    """
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    gaps: list[tuple[float, float]] = []
    depth = 0
    start: float | None = None
    for x, delta in events:
        before = depth
        depth += delta
        if before > allow >= depth:
            start = x
        elif before <= allow < depth and start is not None:
            if x - start >= min_gap:
                gaps.append(_narrowest(events, start, x))
            start = None
    return gaps


def _narrowest(events: list[tuple[float, int]], lo: float, hi: float) -> tuple[float, float]:
    """The widest sub-range of ``[lo, hi]`` at the lowest coverage depth."""
    depth = 0
    best_depth, best = 1 << 30, (lo, hi)
    prev_x = lo
    for x, delta in events:
        if x > lo and prev_x < hi:
            a, b = max(prev_x, lo), min(x, hi)
            if b > a and (depth < best_depth or (depth == best_depth and b - a > best[1] - best[0])):
                best_depth, best = depth, (a, b)
        depth += delta
        prev_x = x
    return best


def _column(ln: Line, gutters: list[tuple[float, float]], mids: list[float]) -> int:
    """Column index of a line, or -1 when it spans a gutter (or sits inside one)."""
    for (ga, gb), mid in zip(gutters, mids, strict=True):
        if ln.x0 >= ga - 1.0 and ln.x1 <= gb + 1.0:
            return -1
        if ln.x0 < mid < ln.x1 and mid - ln.x0 > 2 * ln.size and ln.x1 - mid > 2 * ln.size:
            return -1
    return bisect.bisect(mids, (ln.x0 + ln.x1) / 2)


def group_rows(lines: list[Line], max_size_ratio: float = 0.0) -> list[list[Line]]:
    """Lines grouped into visual rows (top to bottom), each row sorted left to right.

    A line joins the current row when it overlaps the row's vertical span by at least 40 % of the
    smaller height: superscripts, subscripts and inline math pdfium emitted as separate lines. With
    *max_size_ratio*, only lines whose size is within that ratio of the row's first line join it.
    """
    rows: list[list[Line]] = []
    row: list[Line] = []
    top = bottom = 0.0
    for ln in sorted(lines, key=lambda x: -x.y1):
        if row:
            overlap = min(top, ln.y1) - max(bottom, ln.y0)
            ratio = ln.size / row[0].size if row[0].size > 0 else 1.0
            similar = not max_size_ratio or 1 / max_size_ratio <= ratio <= max_size_ratio
            if similar and overlap >= 0.4 * min(top - bottom, ln.y1 - ln.y0):
                row.append(ln)
                continue
            rows.append(sorted(row, key=lambda r: r.x0))
        row, top, bottom = [ln], ln.y1, ln.y0
    if row:
        rows.append(sorted(row, key=lambda r: r.x0))
    return rows


def sort_rows(lines: list[Line]) -> list[Line]:
    """Top to bottom; the pieces of one visual row joined left to right into one line."""
    if len(lines) < 2:
        return list(lines)
    for a, b in itertools.pairwise(lines):
        if (b.y0 + b.y1) / 2 >= a.y0:
            break
    else:
        return list(lines)  # already top to bottom, one line per row: the common case
    out: list[Line] = []
    for row in group_rows(lines):
        if len(row) == 1 or any(ln.table is not None for ln in row):
            out.extend(row)
        else:
            out.append(_join_row(row))
    return out


def _join_row(row: list[Line]) -> Line:
    main = max(row, key=lambda ln: len(ln.text))
    parts = [row[0].text]
    for prev, ln in itertools.pairwise(row):
        parts.append(("" if ln.x0 - prev.x1 < 0.12 * main.size else " ") + ln.text)
    joined = Line("".join(parts), row[0].x0, main.y0, max(ln.x1 for ln in row), main.y1, main.size)
    joined.start, joined.end = min(ln.start for ln in row), max(ln.end for ln in row)
    joined.hyphen, joined.bold = row[-1].hyphen, main.bold
    joined.confidence = min(ln.confidence for ln in row)
    return joined


def reading_groups(lines: list[Line]) -> list[list[Line]]:
    """Lines of one page as groups in reading order; each group is one column of one band."""
    flat = [ln for ln in lines if not ln.vertical]
    vertical = [ln for ln in lines if ln.vertical]
    gutters = find_gutters(flat)
    groups: list[list[Line]] = []
    if not gutters:
        if flat:
            groups.append(sort_rows(flat))
    else:
        mids = [(a + b) / 2 for a, b in gutters]
        band: dict[int, list[Line]] = {}
        spanning: list[Line] = []
        for ln in sorted(flat, key=lambda x: -x.y1):
            col = _column(ln, gutters, mids)
            if col < 0:
                _flush(band, groups)
                spanning.append(ln)
            else:
                if spanning:
                    groups.append(sort_rows(spanning))
                    spanning = []
                band.setdefault(col, []).append(ln)
        _flush(band, groups)
        if spanning:
            groups.append(sort_rows(spanning))
        groups = [g for g in groups if not _is_line_numbers(g)]
    if vertical:
        groups.append(vertical)
    return groups


def _flush(band: dict[int, list[Line]], groups: list[list[Line]]) -> None:
    for col in sorted(band):
        groups.append(sort_rows(band[col]))
    band.clear()


def _is_line_numbers(group: list[Line]) -> bool:
    """A margin column of line numbers (court transcripts, legal drafts): dropped from the text."""
    return len(group) >= 5 and all(_LINE_NUMBER.match(ln.text) for ln in group)


def split_blocks(group: list[Line], body: float = 0.0) -> list[Block]:
    """Split one reading-order group into paragraphs, list items and tables.

    *body* is the page's usual text size: lines clearly larger than it (titles, headings) keep
    together across their wider line spacing.
    """
    if not group:
        return []
    left = min(ln.x0 for ln in group)
    right = max(ln.x1 for ln in group)
    gaps = sorted(prev.y0 - ln.y1 for prev, ln in itertools.pairwise(group))
    usual_gap = gaps[len(gaps) // 2] if len(gaps) >= 3 else 0.2 * group[0].size
    blocks: list[Block] = []
    current: list[Line] = []
    kind = "paragraph"
    for ln in group:
        if ln.table is not None:
            if current:
                blocks.append(Block(current, kind))
            blocks.append(Block([ln], "table"))
            current, kind = [], "paragraph"
            continue
        bullet = bool(_BULLET.match(ln.text))
        if current and (bullet or _breaks(current[-1], ln, left, right, usual_gap, body)):
            blocks.append(Block(current, kind))
            current = []
        if not current:
            kind = "list_item" if bullet else "paragraph"
        current.append(ln)
    if current:
        blocks.append(Block(current, kind))
    return blocks


def _breaks(prev: Line, ln: Line, left: float, right: float, usual_gap: float, body: float) -> bool:
    size = max(prev.size, ln.size)
    ratio = ln.size / prev.size if prev.size > 0 else 1.0
    if ratio > 1.12 or ratio < 0.89:
        return True
    if _LEADER.search(prev.text):
        return True  # a table-of-contents entry
    gap = prev.y0 - ln.y1
    if body and min(prev.size, ln.size) >= 1.15 * body and 0.97 <= ratio <= 1.03:
        return gap > 1.0 * size or gap < -0.5 * size  # a title or heading set over several lines
    if gap > max(usual_gap, 0.0) + 0.45 * size or gap < -0.5 * size:
        return True
    if ln.x0 - left > 0.8 * size and prev.x0 - left < 0.5 * size and ln.x1 > right - 3 * size:
        return True  # first-line indent of a new paragraph
    measured = ln.text[:1].isupper() or ln.text[:1].isdigit()  # bold is only looked up for such lines
    if measured and prev.bold != ln.bold and (prev if prev.bold else ln).x1 < right - 2.5 * size:
        return True  # a short bold line: a heading before or after body text
    return prev.x1 < right - 2.5 * size and prev.text.endswith(_SENTENCE_END)


def join_lines(lines: list[Line]) -> str:
    """Join the lines of one block with spaces, de-hyphenating words broken at line ends."""
    out = lines[0].text
    for prev, ln in itertools.pairwise(lines):
        nxt = ln.text
        if not nxt:
            continue
        explicit = out.endswith("-") and len(out) > 1 and out[-2].isalpha()
        if prev.hyphen or explicit:
            stem = out[:-1] if explicit else out
            if nxt[0].islower():
                out = stem + nxt
            else:
                out = stem + "-" + nxt
        elif out and _CJK.match(out[-1]) and _CJK.match(nxt[0]):
            out += nxt
        else:
            out = f"{out} {nxt}" if out else nxt
    if lines[-1].hyphen:
        out += "-"
    return out


def _running_key(text: str) -> str:
    return " ".join(_DIGITS.sub("#", text.lower()).split())


def running_candidates(lines: list[Line], height: float) -> list[tuple[str, float, str, Line]]:
    """``(zone, y, key, line)`` for the three outermost lines in the top and bottom fifth of a page."""
    flat = sorted((ln for ln in lines if not ln.vertical), key=lambda ln: -ln.y1)
    out: list[tuple[str, float, str, Line]] = []
    for zone, seq in (("top", flat[:3]), ("bottom", flat[::-1][:3])):
        for ln in seq:
            y = ln.y1 if zone == "top" else ln.y0
            if (zone == "top" and y < 0.8 * height) or (zone == "bottom" and y > 0.2 * height):
                break
            out.append((zone, y, _running_key(ln.text), ln))
    return out


def running_tokens(pages: list[tuple[int, list[tuple[str, float, str, Hashable]]]]) -> set[Hashable]:
    """Tokens of page numbers and running headers/footers among the pages' candidates.

    Each page gives ``(page number, [(zone, y, key, token)])`` (:func:`running_candidates`, or the C
    engine's ``LineSet.candidates``): the three outermost lines in the top and bottom fifth of the
    page, with their text as a key (lowercase, digits as ``#``). Page numbers ("12", "- 3 -",
    "Page 4 of 9", "xii") always go; other lines go when their key repeats at the same height
    (within 3 pt) on at least 2 pages (3 for documents over 4 pages).
    """
    seen: dict[tuple[str, str], list[tuple[float, int, Hashable]]] = {}
    drop: set[Hashable] = set()
    for number, candidates in pages:
        for zone, y, key, token in candidates:
            if _PAGE_NUMBER.match(key):
                drop.add(token)
            else:
                seen.setdefault((zone, key), []).append((y, number, token))
    need = 2 if len(pages) <= 4 else 3
    for hits in seen.values():
        if len(hits) < need:
            continue
        ys = sorted(y for y, _, _ in hits)
        mid = ys[len(ys) // 2]
        close = [(n, token) for y, n, token in hits if abs(y - mid) <= 3.0]
        if len({n for n, _ in close}) >= need:
            drop.update(token for _, token in close)
    return drop
