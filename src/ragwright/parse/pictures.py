"""Text inside pictures embedded in Office documents (a scanned page pasted into a DOCX, a screenshot
of a table on a slide), read by OCR.

:class:`PictureReader` is handed each embedded picture's bytes by the DOCX and PPTX parsers, where the
picture sits in reading order, and returns the paragraphs OCR found in it, flagged like every OCR
element (``ocr``, ``engine``, ``confidence``, plus ``image``: the part name) so chunks and citations say
"from a scanned page" (:mod:`ragwright.ingest.scanned`).

Pictures that cannot hold a readable line are skipped before any OCR: smaller than
:data:`MIN_SIDE` pixels on a side (icons, bullets, logos), over :data:`~ragwright.parse.image.MAX_PIXELS`,
or not an image PIL can open (EMF/WMF drawings). The same picture used twice is read once, and at most
:data:`MAX_PICTURES` pictures a document are read (each costs about a second of OCR). Nothing happens
when OCR is off (``ParseOptions.ocr``) or no engine is installed: the document parses as before.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import logging
from typing import Any, Final

from ragwright.model.document import Element
from ragwright.parse import ocr as _ocr
from ragwright.parse.image import MAX_PIXELS, prepare, recognise
from ragwright.parse.options import ParseOptions
from ragwright.parse.pdf_elements import page_elements

__all__ = ["MAX_PICTURES", "MIN_SIDE", "PictureReader"]

MIN_SIDE: Final = 120
MAX_PICTURES: Final = 20
_log = logging.getLogger(__name__)


class PictureReader:
    """OCR of a document's embedded pictures, bounded (see the module docstring)."""

    def __init__(self, options: ParseOptions) -> None:
        self._options = options
        self._engine: _ocr.OcrEngine | None = None
        self._resolved = False
        self._seen: set[str] = set()
        self.read_count = 0  # pictures sent to OCR
        self.warnings: list[str] = []

    def _get_engine(self) -> _ocr.OcrEngine | None:
        if not self._resolved:
            self._engine = _ocr.get_engine() if self._options.ocr else None
            self._resolved = True
        return self._engine

    def read(self, blob: bytes, name: str, page: int | None = None) -> list[Element]:
        """The paragraphs OCR reads in the picture *blob* (part *name*), or none."""
        digest = hashlib.sha256(blob).hexdigest()
        if digest in self._seen or self.read_count >= MAX_PICTURES:
            return []
        self._seen.add(digest)
        engine = self._get_engine()
        if engine is None:
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
        self.read_count += 1
        try:
            scanned = recognise(prepare(image), engine, page or 1)
        except Exception as exc:  # an engine failure must not fail the document
            _log.warning("ocr_failed", extra={"image": name, "engine": engine.name, "error": repr(exc)})
            self.warnings.append(f"OCR of the picture {name} with {engine.name} failed ({exc!r})")
            return []
        confidence = float(scanned.ocr["confidence"]) if scanned.ocr else 0.0
        if not scanned.lines or confidence < self._options.ocr_min_confidence:
            return []
        return [
            dataclasses.replace(e, page=page, attributes={**e.attributes, "image": name})
            for e in page_elements([scanned])
        ]


def picture_part(part: Any) -> tuple[bytes, str] | None:
    """``(bytes, part name)`` of an image part of an OPC package (python-docx / python-pptx), or None."""
    blob = getattr(part, "blob", None)
    if not isinstance(blob, bytes | bytearray):
        return None
    return bytes(blob), str(getattr(part, "partname", "") or "picture")
