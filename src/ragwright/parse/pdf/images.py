"""Text inside the images of PDF pages that have a text layer: a figure with labels, a scanned insert, a
chart, a screenshot of a table — read by OCR and placed where the image sits in the reading order.

A page without a text layer is OCR'd whole (:func:`~ragwright.parse.pdf.parser._route_to_ocr`); on every other
page, :func:`read_page_images` looks at the page's image objects (pdfium enumerates them with their bounds
and pixel sizes; the C engine's scan only says how much images and forms cover, so nothing is read on a
page whose images cover nothing) and hands each one that can hold a readable line to the same
:class:`~ragwright.parse.pictures.PictureReader` the DOCX/PPTX/XLSX parsers use: the same engine,
preprocessing, confidence threshold, one read per distinct picture (a logo repeated on every page is
read once: an image whose stored stream was seen before is not even rendered again), and the
same caps on the work (:data:`~ragwright.parse.pictures.MAX_PICTURES` a document,
:data:`~ragwright.parse.pictures.OCR_BUDGET_PIXELS`).

Images inside form XObjects are read too (Word, InDesign and LaTeX exports wrap figures and scanned
inserts in forms): forms are followed :data:`MAX_FORM_DEPTH` deep and at most :data:`_MAX_OBJECTS`
objects a page are looked at in all (a self-drawing or deeply nested form ends there); a nested image's
box is taken to the page, and it is rendered, through its forms' matrices.

Skipped before rendering: images under :data:`MIN_POINTS` on a side or :data:`MIN_AREA` on the page
(icons, bullets, rules drawn as images) or under :data:`MIN_PIXELS` on a side, and images under dense
text of the layer (:data:`MAX_LAYER_CHARS`: a page background, or a scan already carrying a text layer).
Skipped after rendering, before OCR: images that do not look like text (:func:`looks_like_text`:
photos, logos, rendered shapes, blank images). An image's strip is padded to at most
:data:`MAX_ASPECT` to 1 (:func:`_pad`, six times cheaper for a sliced diagram). After OCR: lines mostly
read by the text layer already (a label drawn over the image as text) are dropped, and an image whose
text is under :data:`MIN_CHARS` letters and digits or reads as noise (``ocr.text_quality`` under
:data:`MIN_QUALITY`) gives nothing — a stray "8" of a drawing, the letters of a logo.

Each image read becomes a :class:`PageImage`: a stand-in in the page's reading order, like a table's
(both the C engine and :mod:`~ragwright.parse.pdf.order` place it among the lines by its box), that
turns into the paragraphs OCR found, flagged ``ocr``/``engine``/``confidence`` plus ``image``
("page 3 image 2"), so their chunks say "from a scanned page".
"""

from __future__ import annotations

import ctypes
import dataclasses
import hashlib
from collections.abc import Iterator
from typing import Any, Final

from ragwright._deps import require
from ragwright.model.document import Element
from ragwright.parse.ocr import text_quality
from ragwright.parse.options import ParseOptions
from ragwright.parse.pdf.layout import Line
from ragwright.parse.pictures import MIN_EDGE, PictureReader, looks_like_text

__all__ = [
    "MAX_ASPECT",
    "MAX_FORM_DEPTH",
    "MAX_LAYER_CHARS",
    "MIN_AREA",
    "MIN_CHARS",
    "MIN_EDGE",
    "MIN_PIXELS",
    "MIN_POINTS",
    "MIN_QUALITY",
    "PageImage",
    "PageImages",
    "looks_like_text",
    "read_page_images",
]

MIN_POINTS: Final = 18.0  # shorter side on the page, in points (a quarter inch): one line of 12 pt text
MIN_AREA: Final = 3600.0  # points², about an inch by 0.7 inch: smaller images are icons, bullets, bars
MIN_PIXELS: Final = 24  # shorter side in pixels: less cannot hold a line OCR reads
MAX_LAYER_CHARS: Final = 200  # text-layer characters over an image beyond which it is a background
MIN_CHARS: Final = 6  # letters and digits OCR must read in an image for its text to be kept
MIN_QUALITY: Final = 0.5  # ocr.text_quality below which an image's OCR text is noise
MAX_ASPECT: Final = 3.0  # longer side to shorter side of what OCR is handed (see _pad)
MAX_FORM_DEPTH: Final = 8  # form XObjects inside form XObjects followed this deep for their images
_IMAGE: Final = 3  # FPDF_PAGEOBJ_IMAGE
_FORM: Final = 5  # FPDF_PAGEOBJ_FORM
_LAYER_SHARE: Final = 0.5  # an OCR line whose box holds this share of its length in layer text is dropped
_MAX_OBJECTS: Final = 5000  # objects looked at on one page, inside its forms included

Matrix = tuple[float, float, float, float, float, float]  # a, b, c, d, e, f: x' = ax + cy + e, y' = bx + dy + f


@dataclasses.dataclass
class PageImage:
    """An image of a page whose text OCR read: its box (points, origin bottom left) and elements."""

    x0: float
    y0: float
    x1: float
    y1: float
    elements: list[Element]

    @property
    def text(self) -> str:
        return "\n\n".join(e.text for e in self.elements)

    def stand_in(self) -> Line:
        """A line standing for the image in the reading order (:mod:`~ragwright.parse.pdf.order`)."""
        line = Line(self.text, self.x0, self.y0, self.x1, self.y1, 10.0)
        line.table = self
        return line


class PageImages:
    """A document's OCR of the images on its text pages: the reader (engine, caps, one read per
    picture) and the images already looked at."""

    def __init__(self, options: ParseOptions) -> None:
        self.reader = PictureReader(options)
        self.seen: set[bytes] = set()

    def read(self, raw: Any, pdf: Any, handle: Any, textpage: Any, page: Any, image_cover: float) -> list[PageImage]:
        """The images of *page* (a ``PdfPage``) whose text OCR read; nothing is looked at on a page whose
        images (``Graphics.image_cover``, a share of its area) cover less than one image worth reading."""
        if image_cover * page.width * page.height < MIN_AREA or self.reader.exhausted:
            return []
        return read_page_images(raw, pdf, handle, textpage, page, self.reader, self.seen)


def read_page_images(
    raw: Any, pdf: Any, handle: Any, textpage: Any, page: Any, reader: PictureReader, seen: set[bytes]
) -> list[PageImage]:
    """The images of *page* (a ``PdfPage``; pdfium *handle*, its *textpage*) whose text OCR read, in the
    page's drawing order. An image mostly off the page is not read (hidden text, like hidden.py's).

    *seen* holds the digests of the image streams already looked at in the document: a repeated logo is
    skipped without rendering it again.
    """
    out: list[PageImage] = []
    number = page.number
    left, bottom, right, top = ctypes.c_float(), ctypes.c_float(), ctypes.c_float(), ctypes.c_float()
    px_w, px_h = ctypes.c_uint(), ctypes.c_uint()
    for obj, where, to_page in _image_objects(raw, handle):
        if reader.exhausted:
            break
        if not raw.FPDFPageObj_GetBounds(obj, *(ctypes.byref(v) for v in (left, bottom, right, top))):
            continue
        x0, y0, x1, y1 = left.value, bottom.value, right.value, top.value
        if to_page is not None:  # inside a form: its box in the form's space, taken to the page's
            x0, y0, x1, y1 = _box_through(to_page, x0, y0, x1, y1)
        w, h = x1 - x0, y1 - y0
        if min(w, h) < MIN_POINTS or w * h < MIN_AREA:
            continue
        shown = max(0.0, min(x1, page.width) - max(x0, 0.0)) * max(0.0, min(y1, page.height) - max(y0, 0.0))
        if shown < 0.5 * w * h:
            continue
        if not raw.FPDFImageObj_GetImagePixelSize(obj, ctypes.byref(px_w), ctypes.byref(px_h)):
            continue
        if min(px_w.value, px_h.value) < MIN_PIXELS:
            continue
        key = _stream_digest(raw, obj)
        if key in seen:
            continue
        seen.add(key)
        if _layer_chars(raw, textpage, x0, y0, x1, y1) > MAX_LAYER_CHARS:
            continue
        image = _render(raw, pdf, handle, obj, px_w.value, px_h.value, w, h, to_page)
        if image is None or not looks_like_text(image):
            continue
        name = f"page {number} image {where}"
        padded = _pad(image)
        scanned = reader.recognise(padded, name, number)
        if scanned is None:
            continue
        # OCR lines (pixels of the prepared image, y up) to page points; drop what the layer reads already
        sx = w * padded.size[0] / image.size[0] / max(scanned.width, 1.0)
        sy = h * padded.size[1] / image.size[1] / max(scanned.height, 1.0)
        base = y1 - h * padded.size[1] / image.size[1]  # the padding goes below or right of the image
        scanned.lines = [
            ln
            for ln in scanned.lines
            if _layer_chars(raw, textpage, x0 + ln.x0 * sx, base + ln.y0 * sy, x0 + ln.x1 * sx, base + ln.y1 * sy)
            < _LAYER_SHARE * len(ln.text)
        ]
        found = " ".join(ln.text for ln in scanned.lines)
        if sum(c.isalnum() for c in found) < MIN_CHARS or text_quality(found) < MIN_QUALITY:
            continue  # a stray glyph of a drawing ("8", "O"), a logo's letters, noise
        elements = reader.elements(scanned, name, number)
        if elements:  # placed where its text is: a figure wider than the text column does not widen it
            lines = scanned.lines
            box = (
                min(ln.x0 for ln in lines),
                min(ln.y0 for ln in lines),
                max(ln.x1 for ln in lines),
                max(ln.y1 for ln in lines),
            )
            out.append(PageImage(x0 + box[0] * sx, base + box[1] * sy, x0 + box[2] * sx, base + box[3] * sy, elements))
    return out


def _image_objects(raw: Any, handle: Any) -> Iterator[tuple[Any, str, Matrix | None]]:
    """The image objects of the page *handle* in drawing order, with those inside its form XObjects:
    each with its place ("3", the third object of the page; "3.2", the second of the form drawn third)
    and, inside a form, the matrix from the form's space to the page's (``None`` on the page itself).

    Forms are followed :data:`MAX_FORM_DEPTH` deep and :data:`_MAX_OBJECTS` objects are looked at in
    all: pdfium itself follows a form that draws itself down to about 40 levels, and a hostile file can
    nest forms as deep as that or fill them with objects.
    """
    budget = [_MAX_OBJECTS]
    matrix = raw.FS_MATRIX()

    def walk(form: Any, where: str, to_page: Matrix | None, depth: int) -> Iterator[tuple[Any, str, Matrix | None]]:
        count = int(raw.FPDFFormObj_CountObjects(form) if form is not None else raw.FPDFPage_CountObjects(handle))
        for i in range(max(count, 0)):
            if budget[0] <= 0:
                return
            budget[0] -= 1
            obj = raw.FPDFFormObj_GetObject(form, i) if form is not None else raw.FPDFPage_GetObject(handle, i)
            if not obj:
                continue
            kind = raw.FPDFPageObj_GetType(obj)
            if kind == _IMAGE:
                yield obj, f"{where}{i + 1}", to_page
            elif kind == _FORM and depth < MAX_FORM_DEPTH and raw.FPDFPageObj_GetMatrix(obj, ctypes.byref(matrix)):
                own: Matrix = (matrix.a, matrix.b, matrix.c, matrix.d, matrix.e, matrix.f)
                inner = own if to_page is None else _compose(own, to_page)
                yield from walk(obj, f"{where}{i + 1}.", inner, depth + 1)

    yield from walk(None, "", None, 0)


def _compose(first: Matrix, then: Matrix) -> Matrix:
    """The matrix applying *first*, then *then* (PDF's row-vector order: ``first × then``)."""
    a, b, c, d, e, f = first
    a2, b2, c2, d2, e2, f2 = then
    return (
        a * a2 + b * c2,
        a * b2 + b * d2,
        c * a2 + d * c2,
        c * b2 + d * d2,
        e * a2 + f * c2 + e2,
        e * b2 + f * d2 + f2,
    )


def _box_through(m: Matrix, x0: float, y0: float, x1: float, y1: float) -> tuple[float, float, float, float]:
    """The box holding the box (x0, y0, x1, y1) once taken through the matrix *m*."""
    xs, ys = [], []
    for x, y in ((x0, y0), (x0, y1), (x1, y0), (x1, y1)):
        xs.append(m[0] * x + m[2] * y + m[4])
        ys.append(m[1] * x + m[3] * y + m[5])
    return min(xs), min(ys), max(xs), max(ys)


def _stream_digest(raw: Any, obj: Any) -> bytes:
    """A digest of the image's stream as stored (compressed): the same picture drawn again has the same."""
    size = int(raw.FPDFImageObj_GetImageDataRaw(obj, None, 0))
    buffer = (ctypes.c_ubyte * max(size, 1))()
    raw.FPDFImageObj_GetImageDataRaw(obj, buffer, size)
    return hashlib.blake2b(bytes(buffer)[:size], digest_size=16).digest()


def _pad(image: Any) -> Any:
    """*image* on white, padded below or to the right to at most :data:`MAX_ASPECT` to 1.

    rapidocr's detector enlarges an image until its shorter side is 736 pixels: a strip 640 by 80
    pixels (a diagram cut in slices) became 5900 by 736 and took six times longer than padded.
    """
    pil = require("PIL.Image", "ocr", "reading images")
    frame = pil.alpha_composite(pil.new("RGBA", image.size, (255, 255, 255, 255)), image.convert("RGBA"))
    w, h = frame.size
    size = (w, max(h, round(w / MAX_ASPECT))) if w > h else (max(w, round(h / MAX_ASPECT)), h)
    out = pil.new("RGB", size, (255, 255, 255))
    out.paste(frame.convert("RGB"), (0, 0))
    return out


def _layer_chars(raw: Any, textpage: Any, x0: float, y0: float, x1: float, y1: float) -> int:
    """How many characters of the text layer lie in the box (pdfium's bounded text, UTF-16 units)."""
    return max(0, int(raw.FPDFText_GetBoundedText(textpage, x0, y1, x1, y0, None, 0)) - 1)


def _render(
    raw: Any, pdf: Any, handle: Any, obj: Any, px_w: int, px_h: int, w: float, h: float, to_page: Matrix | None = None
) -> Any:
    """The image as drawn (matrix and soft mask applied) near its native resolution, as a PIL image.

    pdfium renders an image object at one pixel a point; the object's matrix is scaled up to the
    image's own pixel size for the rendering, then restored (as pypdfium2's ``PdfImage.get_bitmap``).
    An image inside a form is drawn through the form's matrix *to_page* too (its turn or mirroring on
    the page, and *w*, *h* are its size on the page).
    """
    pdfium = require("pypdfium2", "pdf", "PDF parsing")
    if (px_w < px_h) != (w < h):  # drawn rotated by a quarter turn
        px_w, px_h = px_h, px_w
    factor = max(px_w / max(w, 1e-3), px_h / max(h, 1e-3), 1.0)
    matrix = raw.FS_MATRIX()
    if not raw.FPDFPageObj_GetMatrix(obj, ctypes.byref(matrix)):
        return None
    own: Matrix = (matrix.a, matrix.b, matrix.c, matrix.d, matrix.e, matrix.f)
    a, b, c, d, e, f = own if to_page is None else _compose(own, to_page)
    scaled = raw.FS_MATRIX(a * factor, b * factor, c * factor, d * factor, e, f)
    raw.FPDFPageObj_SetMatrix(obj, ctypes.byref(scaled))
    try:
        bitmap = raw.FPDFImageObj_GetRenderedBitmap(pdf.raw, handle, obj)
    finally:
        raw.FPDFPageObj_SetMatrix(obj, ctypes.byref(matrix))
    if not bitmap:
        return None
    return pdfium.PdfBitmap.from_raw(bitmap).to_pil().copy()
