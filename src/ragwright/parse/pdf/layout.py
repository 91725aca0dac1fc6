"""Text lines with geometry from a pdfium text page, and the fixes they need before layout.

pdfium's text page already orders characters in content-stream order and breaks them into lines
(``\\r\\n``). Reading the whole page text in one call and asking for two character boxes per line keeps
this fast: no per-character Python loop except where a line needs it (right-to-left runs, table cells,
a line pdfium did not break). pdfium marks a hyphen that it joined across a line break with U+FFFE;
we split there again and remember the hyphen for de-hyphenation.

Coordinates are PDF user space: ``x`` grows to the right, ``y`` grows upwards.
"""

from __future__ import annotations

import ctypes
import math
import re
from typing import Any

__all__ = ["Line", "char_words", "extract_lines", "read_text"]

_SEGMENT = re.compile(r"[^\r\n\ufffe]+\ufffe?")
_RTL = "\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc"
_RTL_RUN = re.compile(f"[{_RTL}](?:[{_RTL}\\s\\d.,:;!?%()\\-]*[{_RTL}])?")
_HAS_RTL = re.compile(f"[{_RTL}]")
_LTR_INSIDE = re.compile(r"[0-9A-Za-z][0-9A-Za-z.,:%]*")
_BOLD_NAME = re.compile(r"bold|black|heavy|demi|medi(?:um)?\b|-md\b|-bd|bd$|cmbx|sfbx|\bbx\d|semibold", re.I)
_BOLD_CHECK_CHARS = 80


class Line:
    """One visual text line (or, with ``table`` set, a detected table) and its bounding box."""

    __slots__ = (
        "bold",
        "confidence",
        "end",
        "hyphen",
        "size",
        "start",
        "table",
        "text",
        "vertical",
        "x0",
        "x1",
        "y0",
        "y1",
    )

    def __init__(
        self,
        text: str,
        x0: float,
        y0: float,
        x1: float,
        y1: float,
        size: float,
        start: int = -1,
        end: int = -1,
        hyphen: bool = False,
    ) -> None:
        self.text = text
        self.x0 = x0
        self.y0 = y0
        self.x1 = x1
        self.y1 = y1
        self.size = size
        self.start = start  # first char index on the text page (-1: not from pdfium, e.g. OCR)
        self.end = end  # last char index, inclusive
        self.hyphen = hyphen  # the line ended in a hyphen pdfium removed (U+FFFE)
        self.vertical = False
        self.table: Any = None  # a Table (see tables.py) when this "line" stands for a whole table
        self.confidence = 1.0  # OCR confidence of the line (1.0 for a text layer)
        self.bold = False  # set for short lines whose first character is in a bold font

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return (
            f"Line({self.text[:40]!r}, x={self.x0:.0f}-{self.x1:.0f}, y={self.y0:.0f}-{self.y1:.0f}, s={self.size:.1f})"
        )


def read_text(raw: Any, textpage: Any) -> str:
    """The whole text of a page, one Python character per pdfium character index.

    ``FPDFText_GetText`` is one call; when its output does not line up with the character indices
    (characters pdfium leaves out of the text), the text is rebuilt character by character.
    """
    count = int(raw.FPDFText_CountChars(textpage))
    if count <= 0:
        return ""
    buffer = (ctypes.c_ushort * (2 * count + 1))()
    written = int(raw.FPDFText_GetText(textpage, 0, count, buffer))
    text = ctypes.string_at(buffer, max(written - 1, 0) * 2).decode("utf-16-le", "replace")
    if len(text) == count:
        return text
    get = raw.FPDFText_GetUnicode
    return "".join(chr(get(textpage, i) or 0xFFFD) for i in range(count))


def _loose_box(raw: Any, textpage: Any, index: int, rect: Any) -> tuple[float, float, float, float]:
    raw.FPDFText_GetLooseCharBox(textpage, index, ctypes.byref(rect))
    left, right = rect.left, rect.right
    bottom, top = (rect.bottom, rect.top) if rect.top >= rect.bottom else (rect.top, rect.bottom)
    return left, bottom, right, top


def extract_lines(raw: Any, textpage: Any, text: str) -> list[Line]:
    """Visual lines of one page: pdfium's lines, split at U+FFFE, superscripts merged back in.

    Two loose character boxes per line (first and last character) give its box and size; this loop
    is the hot path of PDF parsing, hence the local bindings.
    """
    lines: list[Line] = []
    append = lines.append
    rect = raw.FS_RECTF()
    ref = ctypes.byref(rect)
    box = raw.FPDFText_GetLooseCharBox
    font = ctypes.create_string_buffer(128)
    rtl = _HAS_RTL.search(text) is not None
    for match in _SEGMENT.finditer(text):
        seg = match.group()
        tail = seg.lstrip()
        stripped = tail.rstrip()
        if not stripped or stripped == "\ufffe":
            continue
        start = match.start() + len(seg) - len(tail)
        last = start + len(stripped) - 1
        box(textpage, start, ref)
        l1, r1, b1, t1 = rect.left, rect.right, rect.bottom, rect.top
        if last != start:
            box(textpage, last, ref)
            l2, r2, b2, t2 = rect.left, rect.right, rect.bottom, rect.top
        else:
            l2, r2, b2, t2 = l1, r1, b1, t1
        if t1 < b1 or t2 < b2:  # flipped boxes (rotated pages): normalise
            b1, t1, b2, t2 = min(b1, t1), max(b1, t1), min(b2, t2), max(b2, t2)
        h1, h2 = t1 - b1, t2 - b2
        size = h1 if h1 >= h2 else h2
        if not (stripped[0].isalnum() and stripped[-1].isalnum()):
            size = _size(stripped[0], h1, stripped[-1], h2)
        if (t1 if t1 < t2 else t2) - (b1 if b1 > b2 else b2) < -0.3 * size:
            # The two ends are not on one visual line: rotated text, or a line pdfium did not break.
            lines.extend(_split_segment(raw, textpage, text, start, last, stripped[-1] == "\ufffe"))
            continue
        hyphen = stripped[-1] == "\ufffe"
        body = stripped[:-1].rstrip() if hyphen else stripped
        if rtl and _HAS_RTL.search(body):
            body = _logical_order(raw, textpage, body, start, rect)
        line = Line(
            body,
            l1 if l1 < l2 else l2,
            b1 if b1 < b2 else b2,
            r1 if r1 > r2 else r2,
            t1 if t1 > t2 else t2,
            size,
            start,
            last,
            hyphen,
        )
        if len(body) <= _BOLD_CHECK_CHARS and (body[0].isupper() or body[0].isdigit()):
            line.bold = _is_bold(raw, textpage, start, font)
        append(line)
    return merge_same_row(lines)


def _is_bold(raw: Any, textpage: Any, index: int, font: Any) -> bool:
    """Bold by weight (>= 600) or by font name (Bold, Black, Demi, Medi, CMBX …: weights lie often)."""
    if int(raw.FPDFText_GetFontWeight(textpage, index)) >= 600:
        return True
    flags = ctypes.c_int()
    if not raw.FPDFText_GetFontInfo(textpage, index, font, len(font), ctypes.byref(flags)):
        return False
    return bool(_BOLD_NAME.search(font.value.decode("latin-1")))


def _size(first: str, h1: float, last: str, h2: float) -> float:
    """Line size from the loose box heights of its end characters, ignoring brackets and symbols."""
    a, b = first.isalnum(), last.isalnum()
    if a and not b:
        return max(h1, 0.1)
    if b and not a:
        return max(h2, 0.1)
    return max(h1, h2, 0.1)


def _split_segment(raw: Any, textpage: Any, text: str, start: int, last: int, hyphen: bool) -> list[Line]:
    """Per-character fallback for a segment that is vertical or spans several visual lines."""
    angle = float(raw.FPDFText_GetCharAngle(textpage, start))
    rect = raw.FS_RECTF()
    if abs(math.sin(angle)) > 0.5:
        boxes = [_loose_box(raw, textpage, i, rect) for i in (start, last)]
        x0, x1 = min(b[0] for b in boxes), max(b[2] for b in boxes)
        y0, y1 = min(b[1] for b in boxes), max(b[3] for b in boxes)
        line = Line(text[start : last + 1].strip().rstrip("\ufffe"), x0, y0, x1, y1, x1 - x0, start, last)
        line.vertical = True
        return [line]
    out: list[Line] = []
    cur: list[int] = []
    cy0 = cy1 = 0.0
    for i in range(start, last + 1):
        if text[i] in "\r\n":
            continue
        _, b, _, t = _loose_box(raw, textpage, i, rect)
        mid = (b + t) / 2
        if cur and not (cy0 <= mid <= cy1):
            out.append(_line_from_chars(raw, textpage, text, cur, rect))
            cur = []
        if not cur:
            cy0, cy1 = b, t
        cur.append(i)
    if cur:
        out.append(_line_from_chars(raw, textpage, text, cur, rect))
    out = [ln for ln in out if ln.text]
    if out:
        out[-1].hyphen = hyphen
    return out


def _line_from_chars(raw: Any, textpage: Any, text: str, idx: list[int], rect: Any) -> Line:
    boxes = [_loose_box(raw, textpage, i, rect) for i in (idx[0], idx[-1])]
    body = "".join(text[i] for i in idx).strip().rstrip("\ufffe").replace("\ufffe", "-")
    size = max(b[3] - b[1] for b in boxes)
    return Line(
        body,
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
        size,
        idx[0],
        idx[-1],
    )


def _logical_order(raw: Any, textpage: Any, body: str, start: int, rect: Any) -> str:
    """Reverse right-to-left runs whose glyphs pdfium returned in visual (left-to-right) order."""
    parts: list[str] = []
    pos = 0
    for run in _RTL_RUN.finditer(body):
        a, b = run.span()
        if b - a < 2:
            continue
        first = _loose_box(raw, textpage, start + a, rect)
        last = _loose_box(raw, textpage, start + b - 1, rect)
        # Stored left to right (or one glyph carrying the whole run, as ligatures do): visual order.
        if first[0] + first[2] <= last[0] + last[2]:
            flipped = run.group()[::-1]
            flipped = _LTR_INSIDE.sub(lambda m: m.group()[::-1], flipped)
            parts.append(body[pos:a])
            parts.append(flipped)
            pos = b
    if not parts:
        return body
    parts.append(body[pos:])
    return "".join(parts)


def merge_same_row(lines: list[Line]) -> list[Line]:
    """Join consecutive pieces of one visual line (superscripts, footnote marks, font changes)."""
    out: list[Line] = []
    for ln in lines:
        if out and not ln.vertical:
            prev = out[-1]
            h = min(prev.y1 - prev.y0, ln.y1 - ln.y0)
            gap = ln.x0 - prev.x1
            big = max(prev.size, ln.size)
            if (
                not prev.vertical
                and not prev.hyphen
                and min(prev.y1, ln.y1) - max(prev.y0, ln.y0) >= 0.5 * h
                and -0.3 * big <= gap <= 1.2 * big
            ):
                sep = "" if gap < 0.12 * big else " "
                prev.text = prev.text + sep + ln.text
                if len(ln.text) > len(prev.text) - len(ln.text):
                    prev.size = ln.size
                prev.x1 = max(prev.x1, ln.x1)
                prev.y0 = min(prev.y0, ln.y0)
                prev.y1 = max(prev.y1, ln.y1)
                prev.end = ln.end
                prev.hyphen = ln.hyphen
                prev.bold = prev.bold and (ln.bold or len(ln.text) <= 2)
                continue
        out.append(ln)
    return out


def char_words(raw: Any, textpage: Any, text: str, line: Line) -> list[tuple[str, float, float, float, float]]:
    """Words of one line with their boxes ``(word, x0, x1, y0, y1)``, from per-character boxes."""
    words: list[tuple[str, float, float, float, float]] = []
    rect = raw.FS_RECTF()
    chars: list[str] = []
    wx0 = wx1 = wy0 = wy1 = 0.0
    gap_limit = 0.25 * line.size
    for i in range(line.start, line.end + 1):
        ch = text[i]
        if ch.isspace():
            if chars:
                words.append(("".join(chars), wx0, wx1, wy0, wy1))
                chars = []
            continue
        left, bottom, right, top = _loose_box(raw, textpage, i, rect)
        if chars and left - wx1 > gap_limit:
            words.append(("".join(chars), wx0, wx1, wy0, wy1))
            chars = []
        if not chars:
            wx0, wx1, wy0, wy1 = left, right, bottom, top
        chars.append("-" if ch == "\ufffe" else ch)
        wx1 = max(right, wx1)
    if chars:
        words.append(("".join(chars), wx0, wx1, wy0, wy1))
    return words
