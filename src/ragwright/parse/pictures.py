"""Text inside pictures embedded in documents (a scanned page pasted into a DOCX, a screenshot of a
table on a slide, a labelled figure on a PDF page), read by OCR.

:class:`PictureReader` is handed each embedded picture's bytes by the DOCX, PPTX and XLSX parsers (or
the decoded image, by :mod:`~ragwright.parse.pdf.images`), where the picture sits in reading order, and
returns the paragraphs OCR found in it, flagged like every OCR element (``ocr``, ``engine``,
``confidence``, plus ``image``: the part name) so chunks and citations say "from a scanned page"
(:mod:`ragwright.ingest.scanned`).

Pictures that cannot hold a readable line are skipped before any OCR: smaller than
:data:`MIN_SIDE` pixels on a side (icons, bullets, logos), over :data:`~ragwright.parse.image.MAX_PIXELS`,
not an image PIL can open (EMF/WMF drawings), or one that does not look like text (:func:`looks_like_text`:
a photo, a logo, a drawing in broad areas of colour, a blank picture — the rule the images on PDF pages
follow; OCR of a 900-pixel picture costs about a second whether it finds text or not). The same
picture used twice is read once, and at most :data:`MAX_PICTURES` pictures a document are read (each
costs about a second of OCR), within :data:`OCR_BUDGET_PIXELS` pixels handed to OCR (its time grows
with them; a budget in pixels, not seconds, keeps a document's text the same on a busy machine).
Nothing happens when OCR is off (``ParseOptions.ocr``), OCR of pictures is off
(``ParseOptions.ocr_images``) or no engine is installed: the document parses as before.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import logging
from typing import Any, Final

from ragwright._deps import require
from ragwright.model.document import Element
from ragwright.parse import ocr as _ocr
from ragwright.parse.image import MAX_PIXELS, prepare, recognise
from ragwright.parse.options import ParseOptions
from ragwright.parse.pdf.elements import PdfPage, page_elements

__all__ = ["MAX_PICTURES", "MIN_EDGE", "MIN_SIDE", "OCR_BUDGET_PIXELS", "PictureReader", "looks_like_text"]

MIN_SIDE: Final = 120
MAX_PICTURES: Final = 20
# pixels of prepared pictures OCR'd a document (about two figures of half a page): OCR time, deterministic;
# a picture counts at least MIN_COST pixels (rapidocr's detector enlarges small ones to 736 px a side)
OCR_BUDGET_PIXELS: Final = 3_000_000
MIN_COST: Final = 736 * 736
MIN_EDGE: Final = 0.2  # share of ink pixels on a stroke's edge below which an image holds no text
_log = logging.getLogger(__name__)


class PictureReader:
    """OCR of a document's embedded pictures, bounded (see the module docstring)."""

    def __init__(self, options: ParseOptions) -> None:
        self._options = options
        self._engine: _ocr.OcrEngine | None = None
        self._resolved = False
        self._seen: set[str] = set()
        self._spent = 0  # pixels handed to OCR so far
        self.read_count = 0  # pictures sent to OCR
        self.warnings: list[str] = []

    @property
    def exhausted(self) -> bool:
        """No more picture will be read: OCR of pictures is off, or the caps are reached."""
        return (
            not (self._options.ocr and self._options.ocr_images)
            or self.read_count >= MAX_PICTURES
            or self._spent >= OCR_BUDGET_PIXELS
        )

    def _get_engine(self) -> _ocr.OcrEngine | None:
        if not self._resolved:
            self._engine = _ocr.get_engine() if self._options.ocr and self._options.ocr_images else None
            self._resolved = True
        return self._engine

    def read(self, blob: bytes, name: str, page: int | None = None) -> list[Element]:
        """The paragraphs OCR reads in the picture *blob* (part *name*), or none."""
        digest = hashlib.sha256(blob).hexdigest()
        if digest in self._seen or self.exhausted:
            return []
        self._seen.add(digest)
        if self._get_engine() is None:
            return []
        try:
            from PIL import Image

            image = Image.open(io.BytesIO(blob))
            width, height = image.size
            if min(width, height) < MIN_SIDE or width * height > MAX_PIXELS:
                return []
            image.load()
        except Exception:  # not a raster image PIL reads (EMF, WMF, SVG …) or a damaged one
            return []
        try:
            if not looks_like_text(image):
                return []  # a photo, a logo, a drawing in broad colours, a blank picture
        except Exception:  # a mode the check cannot convert: OCR decides
            pass
        scanned = self._ocr(image, name, page)
        return self.elements(scanned, name, page) if scanned is not None else []

    def recognise(self, image: Any, name: str, page: int | None = None, min_side: int = 1) -> PdfPage | None:
        """The lines OCR reads in the decoded *image* (PIL) as a page of pixels (y up), or None: a picture
        seen before, the caps reached, no engine, nothing read or a confidence below the threshold."""
        if self.exhausted or min(image.size) < min_side or image.size[0] * image.size[1] > MAX_PIXELS:
            return None
        digest = hashlib.sha256(image.tobytes()).hexdigest()
        if digest in self._seen:
            return None
        self._seen.add(digest)
        if self._get_engine() is None:
            return None
        return self._ocr(image, name, page)

    def _ocr(self, image: Any, name: str, page: int | None) -> PdfPage | None:
        engine = self._get_engine()
        if engine is None:
            return None
        self.read_count += 1
        try:
            prepared = prepare(image)
            self._spent += max(prepared.size[0] * prepared.size[1], MIN_COST)
            scanned = recognise(prepared, engine, page or 1)
        except Exception as exc:  # an engine failure must not fail the document
            _log.warning("ocr_failed", extra={"image": name, "engine": engine.name, "error": repr(exc)})
            self.warnings.append(f"OCR of the picture {name} with {engine.name} failed ({exc!r})")
            return None
        finally:
            if self._spent >= OCR_BUDGET_PIXELS:
                self.warnings.append(
                    f"OCR of pictures stopped after {self.read_count} picture(s) ({name} the last): the "
                    f"budget of {OCR_BUDGET_PIXELS:,} pixels of OCR a document is spent"
                )
        confidence = float(scanned.ocr["confidence"]) if scanned.ocr else 0.0
        if not scanned.lines or confidence < self._options.ocr_min_confidence:
            return None
        return scanned

    def elements(self, scanned: PdfPage, name: str, page: int | None) -> list[Element]:
        """The paragraphs of a page :meth:`recognise` read, on *page*, flagged with the picture *name*."""
        if not scanned.lines:
            return []
        return [
            dataclasses.replace(e, page=page, attributes={**e.attributes, "image": name})
            for e in page_elements([scanned])
        ]


def looks_like_text(image: Any) -> bool:
    """Whether *image* (PIL) may hold text worth an OCR run (about a second each): some ink, drawn in
    thin strokes. Photos, logos, rendered shapes and blank images are mostly thick areas of colour.

    On a grey copy (at most 512 pixels a side, on white), ink is what differs from the paper (the
    median) by a quarter of the range; the share of ink pixels with a paper pixel beside them is
    0.5-0.95 for text and labelled diagrams, 0.05-0.15 for photos, logos and rendered objects (the
    images of the docs corpus). Too little ink (under 0.2 %) is a blank or faded picture.
    """
    np = require("numpy", "")
    pil = require("PIL.Image", "ocr", "reading images")
    frame = image.convert("RGBA")
    white = pil.new("RGBA", frame.size, (255, 255, 255, 255))
    grey = pil.alpha_composite(white, frame).convert("L")
    factor = 512 / max(grey.size)
    if factor < 1:
        grey = grey.resize((max(1, round(grey.size[0] * factor)), max(1, round(grey.size[1] * factor))))
    pixels = np.asarray(grey, dtype=np.int16)
    ink = np.abs(pixels - int(np.median(pixels))) > 64
    count = int(ink.sum())
    if count < 0.002 * ink.size:
        return False
    inside = ink.copy()  # ink pixels whose four neighbours are ink too
    inside[1:, :] &= ink[:-1, :]
    inside[:-1, :] &= ink[1:, :]
    inside[:, 1:] &= ink[:, :-1]
    inside[:, :-1] &= ink[:, 1:]
    return 1.0 - int(inside.sum()) / count >= MIN_EDGE


def picture_part(part: Any) -> tuple[bytes, str] | None:
    """``(bytes, part name)`` of an image part of an OPC package (python-docx / python-pptx), or None."""
    blob = getattr(part, "blob", None)
    if not isinstance(blob, bytes | bytearray):
        return None
    return bytes(blob), str(getattr(part, "partname", "") or "picture")
