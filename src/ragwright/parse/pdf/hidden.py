"""Hidden PDF text: the text objects of a page a reader never sees, removed before the text is read.

A text object (top level of the page's content) is hidden when:

* it is drawn invisibly — text render mode 3 (neither filled nor stroked) or 7 (clipping only) —
  unless it lies on an image: that is a scan's OCR text layer, which describes what the image shows;
* it lies wholly outside the page box (crop box, else media box);
* its effective size (font size times the scale of its matrix) is under
  :data:`~ragwright.parse.visibility.MIN_FONT_PT`;
* its colour (the fill colour; the stroke colour for the stroke-only modes 1 and 5; none for the modes
  that both fill and stroke) is fully
  transparent, or cannot be told from white (:func:`~ragwright.parse.visibility.indistinct`) while no
  earlier object under its centre — an image, a form, a shading, or a filled path of a colour it can be
  told from — gives it another background;
* an opaque box drawn after it — a filled path without transparency, white (paper) or black (a
  redaction bar), whose points all sit on the corners of one axis-aligned rectangle (not a frame with a
  hole, not a triangle whose bounds happen to span the text) — covers 90 % or more of its box. (A
  coloured box may be a pattern fill that lets the text show through: pdfium does not say.)

Text objects with an empty box (spaces, empty strings) are left alone and not counted.

:func:`hidden_objects` is the reference; the C engine (``_pdfcore.hidden``) computes the same list with
the same arithmetic (``tests/parse/test_pdfcore.py``). :func:`remove_objects` takes them off the page,
so both reading paths load a text page without them.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

from ragwright.parse.visibility import MIN_CONTRAST, MIN_FONT_PT

__all__ = ["MAX_OBJECTS", "hidden_objects", "invisible_share", "remove_objects"]

#: Objects looked at on one page (as the graphics scan): a hostile page cannot make this unbounded.
MAX_OBJECTS = 20000
_TEXT, _PATH, _IMAGE, _SHADING, _FORM = 1, 2, 3, 4, 5
_INVISIBLE_MODES = (3, 7)
_FILL_MODES = (0, 4)
_STROKE_MODES = (1, 5)  # modes 2 and 6 fill and stroke: either colour may show, no colour test
_BOX_SEGMENTS = 6  # a rectangle: move, three or four lines, close
_CORNER = 0.5  # points a rectangle's corner may be off
_COVERED = 0.9  # share of a text object's box an opaque object drawn after it must cover to hide it


def _luminance(v: float) -> float:
    v /= 255.0
    return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4


def _contrast(r1: float, g1: float, b1: float, r2: float, g2: float, b2: float) -> float:
    """WCAG contrast, with the same operations (and order) as the C engine."""
    la = 0.2126 * _luminance(r1) + 0.7152 * _luminance(g1) + 0.0722 * _luminance(b1)
    lb = 0.2126 * _luminance(r2) + 0.7152 * _luminance(g2) + 0.0722 * _luminance(b2)
    hi, lo = (la, lb) if la > lb else (lb, la)
    return (hi + 0.05) / (lo + 0.05)


def _box(raw: Any, handle: Any, width: float, height: float) -> tuple[float, float, float, float]:
    vals = [ctypes.c_float() for _ in range(4)]
    for getter in (raw.FPDFPage_GetCropBox, raw.FPDFPage_GetMediaBox):
        if getter(handle, *vals):
            x0, y0, x1, y1 = (v.value for v in vals)
            return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
    return (0.0, 0.0, width, height)


def _color(getter: Any, obj: Any) -> tuple[float, float, float, float] | None:
    r, g, b, a = (ctypes.c_uint() for _ in range(4))
    if not getter(obj, r, g, b, a):
        return None
    return (float(r.value), float(g.value), float(b.value), float(a.value))


Box = tuple[float, float, float, float]
Rgba = tuple[float, float, float, float]


def _objects(raw: Any, handle: Any) -> list[tuple[int, Any, Box]]:
    """``(kind, object, bounds)`` of the page's top-level objects (kind 0: no bounds)."""
    count = min(int(raw.FPDFPage_CountObjects(handle)), MAX_OBJECTS)
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    out: list[tuple[int, Any, Box]] = []
    for i in range(count):
        obj = raw.FPDFPage_GetObject(handle, i)
        if raw.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
            box = (float(left.value), float(bottom.value), float(right.value), float(top.value))
            out.append((int(raw.FPDFPageObj_GetType(obj)), obj, box))
        else:
            out.append((0, obj, (0.0, 0.0, 0.0, 0.0)))
    return out


def _backdrops(
    raw: Any, objs: list[tuple[int, Any, Box]]
) -> tuple[list[tuple[int, int, Box, Rgba | None]], list[tuple[int, Box]]]:
    """What text may sit on — ``(index, kind, box, fill or None)`` of filled paths, images, shadings and
    forms — and the opaque covers among them (filled paths without transparency, opaque images)."""
    fill_mode, stroke = ctypes.c_int(), ctypes.c_int()
    unders: list[tuple[int, int, Box, Rgba | None]] = []
    covers: list[tuple[int, Box]] = []
    for i, (kind, obj, box) in enumerate(objs):
        if kind == _PATH:
            if not raw.FPDFPath_GetDrawMode(obj, fill_mode, stroke) or fill_mode.value == 0:
                continue
            fill = _color(raw.FPDFPageObj_GetFillColor, obj)
            unders.append((i, kind, box, fill))
            if fill is not None and fill[3] >= 255.0 and _blank(fill) and not raw.FPDFPageObj_HasTransparency(obj):
                rect = _rectangle(raw, obj)
                if rect is not None:
                    covers.append((i, rect))
        elif kind in (_IMAGE, _SHADING, _FORM):
            unders.append((i, kind, box, None))
    return unders, covers


def _blank(fill: Rgba) -> bool:
    """A white or black fill: what a box hiding text (paper, a redaction bar) is drawn with."""
    r, g, b = fill[0], fill[1], fill[2]
    return _contrast(r, g, b, 255.0, 255.0, 255.0) < MIN_CONTRAST or _contrast(r, g, b, 0.0, 0.0, 0.0) < MIN_CONTRAST


def _rectangle(raw: Any, obj: Any) -> Box | None:
    """The page box of a path that is one axis-aligned rectangle (lines only, every point on a corner,
    all four corners met)."""
    count = int(raw.FPDFPath_CountSegments(obj))
    matrix = raw.FS_MATRIX()
    if count < 4 or count > _BOX_SEGMENTS or not raw.FPDFPageObj_GetMatrix(obj, matrix):
        return None
    a, b, c, d, e, f = (float(v) for v in (matrix.a, matrix.b, matrix.c, matrix.d, matrix.e, matrix.f))
    x, y = ctypes.c_float(), ctypes.c_float()
    points: list[tuple[float, float]] = []
    for k in range(count):
        segment = raw.FPDFPath_GetPathSegment(obj, k)
        if (
            not segment
            or int(raw.FPDFPathSegment_GetType(segment)) == 1
            or not raw.FPDFPathSegment_GetPoint(segment, x, y)
        ):
            return None  # a Bézier curve, or an unreadable segment
        px, py = float(x.value), float(y.value)
        points.append((a * px + c * py + e, b * px + d * py + f))
    x0, x1 = min(p[0] for p in points), max(p[0] for p in points)
    y0, y1 = min(p[1] for p in points), max(p[1] for p in points)
    corners = 0  # bit k: corner k of the box was met (so a right triangle, three corners, is no box)
    for px, py in points:
        left, right = abs(px - x0) <= _CORNER, abs(px - x1) <= _CORNER
        low, high = abs(py - y0) <= _CORNER, abs(py - y1) <= _CORNER
        if not (left or right) or not (low or high):
            return None
        corners |= (1 if left else 2) << (0 if low else 2)
    if corners != 15:
        return None
    return (x0, y0, x1, y1)


def _covered(text: Box, cover: Box) -> bool:
    """Whether *cover* hides at least :data:`_COVERED` of the box *text* (a point-sized box: its centre)."""
    w, h = text[2] - text[0], text[3] - text[1]
    if w <= 0.0 or h <= 0.0:
        return _inside((text[0] + text[2]) / 2.0, (text[1] + text[3]) / 2.0, cover)
    iw = min(text[2], cover[2]) - max(text[0], cover[0])
    ih = min(text[3], cover[3]) - max(text[1], cover[1])
    return iw > 0.0 and ih > 0.0 and iw * ih >= _COVERED * (w * h)


def _det(m: Any) -> float:
    return float(m.a) * float(m.d) - float(m.b) * float(m.c)


def _inside(x: float, y: float, box: Box) -> bool:
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def _backed(i: int, color: Rgba, cx: float, cy: float, unders: list[tuple[int, int, Box, Rgba | None]]) -> bool:
    """Whether something drawn before text *i*, under its centre, shows its (near-white) colour."""
    for j, _kind, box, fill in unders:
        if j >= i:
            return False
        if _inside(cx, cy, box) and (
            fill is None or _contrast(color[0], color[1], color[2], fill[0], fill[1], fill[2]) >= MIN_CONTRAST
        ):
            return True
    return False


def hidden_objects(raw: Any, handle: Any, width: float, height: float) -> list[int]:
    """Indexes of the page's hidden text objects, ascending (see the module docstring)."""
    objs = _objects(raw, handle)
    if not any(kind == _TEXT for kind, _, _ in objs):
        return []
    page = _box(raw, handle, width, height)
    unders, covers = _backdrops(raw, objs)
    matrix, size = raw.FS_MATRIX(), ctypes.c_float()
    hidden: list[int] = []
    for i, (kind, obj, (x0, y0, x1, y1)) in enumerate(objs):
        if kind != _TEXT or x1 <= x0 or y1 <= y0:  # not text, or an empty box (spaces)
            continue
        cx, cy = (x0 + x1) / 2.0, (y0 + y1) / 2.0
        mode = int(raw.FPDFTextObj_GetTextRenderMode(obj))
        if mode in _INVISIBLE_MODES:  # kept on an image: a scan's OCR text layer
            if not any(k == _IMAGE and _inside(cx, cy, box) for _, k, box, _ in unders):
                hidden.append(i)
            continue
        if x1 < page[0] or x0 > page[2] or y1 < page[1] or y0 > page[3]:
            hidden.append(i)
            continue
        if (
            raw.FPDFTextObj_GetFontSize(obj, size)
            and raw.FPDFPageObj_GetMatrix(obj, matrix)
            and float(size.value) * math.sqrt(abs(_det(matrix))) < MIN_FONT_PT
        ):
            hidden.append(i)
            continue
        color = None
        if mode in _FILL_MODES or mode in _STROKE_MODES:
            getter = raw.FPDFPageObj_GetStrokeColor if mode in _STROKE_MODES else raw.FPDFPageObj_GetFillColor
            color = _color(getter, obj)
        if color is not None and (
            color[3] <= 0.0
            or (
                _contrast(color[0], color[1], color[2], 255.0, 255.0, 255.0) < MIN_CONTRAST
                and not _backed(i, color, cx, cy, unders)
            )
        ):
            hidden.append(i)
            continue
        if any(j > i and _covered((x0, y0, x1, y1), c) for j, c in covers):
            hidden.append(i)
    return hidden


def remove_objects(raw: Any, handle: Any, indexes: list[int]) -> None:
    """Take the objects at *indexes* off the page (and free them)."""
    objects = [raw.FPDFPage_GetObject(handle, i) for i in indexes]
    for obj in objects:
        if raw.FPDFPage_RemoveObject(handle, obj):
            raw.FPDFPageObj_Destroy(obj)


def invisible_share(raw: Any, handle: Any) -> float:
    """Share of text objects drawn invisibly (render mode 3): the mark of an OCR text layer."""
    seen = invisible = 0
    for i in range(int(raw.FPDFPage_CountObjects(handle))):
        obj = raw.FPDFPage_GetObject(handle, i)
        if raw.FPDFPageObj_GetType(obj) == 1:
            seen += 1
            invisible += int(raw.FPDFTextObj_GetTextRenderMode(obj)) == 3
            if seen >= 200:
                break
    return invisible / seen if seen else 0.0
