"""Images as documents: PNG, JPEG, TIFF (every page), WebP, BMP and GIF read through OCR.

A photo of a whiteboard or a scanned letter saved as an image is a document like any other: each frame
(a multi-page TIFF is a scanned file of several pages) goes to the OCR engine of
:mod:`~ragwright.parse.ocr` (rapidocr, else Tesseract), and its lines are laid out into paragraphs by the
same reading order as a scanned PDF page (:mod:`~ragwright.parse.pdf.elements`). Every element carries
``ocr``, ``engine`` and ``confidence`` — the "from a scanned page" flag chunks and citations show
(:mod:`ragwright.ingest.scanned`) — and the document ``ocr_pages``.

Before OCR, only what measurably helps (``benchmarks/ocr_preprocess.py``, rapidocr, 4 generated pages
per case): the EXIF orientation is applied (phones store photos sideways and say so in a tag),
transparency is flattened onto white, text skewed by :data:`MIN_SKEW` degrees or more is levelled
(:func:`deskew`, a projection profile: on pages skewed by 7° the character error rate went from 0.097 to
0.000; below 3° levelling bought at most 0.001 on full pages and cost small photos up to 0.007, as
resampling blurs small letters, so a slight skew is left alone), and an image whose shorter side is
under :data:`UPSCALE_BELOW` pixels is enlarged (up to 3×) so small letters reach a readable height
(10-pixel text: 0.068 to 0.053, 12-pixel: 0.022 to 0.016; 16-pixel text lost 0.003).

Bounded: the pixel count is checked from the header before any pixel is decoded
(:data:`MAX_PIXELS`, a decompression bomb is refused), frames beyond ``max_pages`` are refused, and the
parse runs in the isolated worker like every binary format.
"""

from __future__ import annotations

import dataclasses
import io
from typing import Any, Final

from ragwright._deps import require
from ragwright.errors import LimitExceeded, ParseError
from ragwright.model.document import Document
from ragwright.options import ParseOptions
from ragwright.parse import ocr as _ocr
from ragwright.parse.pdf.elements import PdfPage, page_elements
from ragwright.parse.pdf.layout import Line

__all__ = [
    "MAX_PIXELS",
    "MIN_CHARS",
    "MIN_SKEW",
    "UPSCALE_BELOW",
    "VERSION",
    "deskew",
    "parse_image",
    "prepare",
    "recognise",
    "skew_angle",
]

VERSION = "image/3"
MAX_PIXELS: Final = 80_000_000  # ~ an A4 page at 1200 dpi; PIL's own bomb check is a warning below 2x this
UPSCALE_BELOW: Final = 900
MIN_CHARS: Final = 2  # letters and digits a page's OCR must read to be indexed: one is a logo's letter or a mark
MIN_SKEW: Final = 3.0  # degrees: below, resampling costs small letters more than the skew costs the engine
_MAX_SKEW: Final = 10
_PROFILE_SIDE: Final = 600
_MIME: Final = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "TIFF": "image/tiff",
    "WEBP": "image/webp",
    "BMP": "image/bmp",
    "GIF": "image/gif",
}
_OCR_HINT = "install an OCR engine: pip install 'ragwright[ocr]'"


def parse_image(
    document_id: str, data: bytes, *, source: str | None = None, options: ParseOptions | None = None
) -> Document:
    """OCR every frame of an image file into a :class:`Document` (see the module docstring)."""
    options = options or ParseOptions()
    pil = require("PIL.Image", "ocr", "reading images")
    try:
        image = pil.open(io.BytesIO(data))
        width, height = image.size
    except Exception as exc:
        raise ParseError(f"corrupt image: {type(exc).__name__}: {exc}") from exc
    if width * height > MAX_PIXELS:
        raise LimitExceeded(
            f"the image has {width}x{height} pixels, more than {MAX_PIXELS:,}: refused as a possible decompression bomb"
        )
    frames = int(getattr(image, "n_frames", 1) or 1)
    if image.format == "GIF":
        frames = 1  # an animation, not pages
    if frames > options.max_pages:
        raise LimitExceeded(
            f"the image has {frames} pages, more than max_pages={options.max_pages}; "
            "raise ParseOptions(max_pages=...) to parse it"
        )
    if not options.ocr:
        raise ParseError("an image holds no text without OCR, and OCR is off (ParseOptions(ocr=False))")
    engine = _ocr.get_engine()
    if engine is None:
        raise ParseError(f"an image holds no text without OCR: {_OCR_HINT}")
    pages: list[PdfPage] = []
    warnings: list[str] = []
    for index in range(frames):
        image.seek(index)
        page = recognise(prepare(image), engine, index + 1)
        where = f"page {index + 1}" if frames > 1 else "the image"
        if not page.lines:
            warnings.append(f"OCR ({engine.name}) found no text on {where}")
            continue
        read = " ".join(line.text for line in page.lines)
        if sum(c.isalnum() for c in read) < MIN_CHARS:
            warnings.append(f"OCR ({engine.name}) read only a stray glyph on {where} ({read!r}), so it is not indexed")
            continue
        confidence = float(page.ocr["confidence"]) if page.ocr else 0.0
        if confidence < options.ocr_min_confidence:
            warnings.append(
                f"OCR confidence {confidence:.2f} on {where} is below ocr_min_confidence="
                f"{options.ocr_min_confidence}, so its text is not indexed"
            )
            continue
        pages.append(page)
    elements = page_elements(pages) if pages else []
    if not elements:
        raise ParseError("no text: " + ("; ".join(warnings) or f"OCR ({engine.name}) found none"))
    if frames == 1:  # a single image has no page numbers to cite
        elements = [dataclasses.replace(e, page=None) for e in elements]
    metadata: dict[str, Any] = {"ocr_pages": len(pages), "image_size": f"{width}x{height}"}
    if frames > 1:
        metadata["page_count"] = frames
    return Document(
        id=document_id,
        elements=tuple(elements),
        title=None,
        source=source,
        mime_type=_MIME.get(str(image.format), "image/" + str(image.format).lower()),
        metadata=metadata,
        warnings=tuple(warnings),
    )


def prepare(image: Any) -> Any:
    """The frame as the OCR engine should see it: upright (EXIF), RGB on white, levelled when skewed,
    small images enlarged."""
    ops = require("PIL.ImageOps", "ocr", "reading images")
    pil = require("PIL.Image", "ocr", "reading images")
    frame = ops.exif_transpose(image.copy())
    if frame.mode in ("RGBA", "LA", "P", "PA"):
        frame = frame.convert("RGBA")
        white = pil.new("RGBA", frame.size, (255, 255, 255, 255))
        frame = pil.alpha_composite(white, frame)
    frame = deskew(frame.convert("RGB"))
    shorter = min(frame.size)
    if 0 < shorter < UPSCALE_BELOW:
        factor = min(3.0, UPSCALE_BELOW / shorter)
        frame = frame.resize((round(frame.size[0] * factor), round(frame.size[1] * factor)), pil.LANCZOS)
    return frame


def skew_angle(image: Any, *, at_least: float = 0.0) -> float:
    """The rotation (degrees, counter-clockwise) that levels the text lines of *image*, within ±10°.

    Projection profile: on a reduced grey copy, the angle whose rotation gives the sharpest row profile
    of ink (how much darker than the paper each pixel is; the largest sum of squared differences
    between adjacent rows) — text lines then fall into rows of their own. A coarse pass by 2°, a fine
    one by 0.25° around the best. With *at_least*, a skew that cannot reach that many degrees (the
    coarse pass's best is too near level for the fine one to get there) is 0.0 without the fine pass.
    """
    np = require("numpy", "")
    pil = require("PIL.Image", "ocr", "reading images")
    small = image.convert("L")
    factor = _PROFILE_SIDE / max(small.size)
    if factor < 1:
        small = small.resize((max(1, round(small.size[0] * factor)), max(1, round(small.size[1] * factor))))

    paper = int(np.median(np.asarray(small)))  # the background; ink is how much darker a pixel is

    def sharpness(angle: float) -> float:
        turned = np.asarray(small.rotate(angle, resample=pil.Resampling.BILINEAR, fillcolor=paper), dtype=np.int32)
        rows = np.clip(paper - turned, 0, None).sum(axis=1).astype(np.float64)
        return float(np.square(np.diff(rows)).sum())

    level = sharpness(0.0)
    if level == 0.0:
        return 0.0  # no ink, or nothing but uniform rows: nothing to level
    best = max(range(-_MAX_SKEW, _MAX_SKEW + 1, 2), key=lambda a: sharpness(float(a)))
    if abs(best) + 1.5 < at_least:
        return 0.0  # the fine pass looks 1.5 degrees either side of the coarse best at most
    fine = [best + step / 4 for step in range(-6, 7)]
    angle = float(max(fine, key=sharpness))
    return angle if sharpness(angle) > 1.05 * level else 0.0  # a clear gain over leaving it, or none


def deskew(image: Any, *, expand: bool = True) -> Any:
    """*image* levelled when its text is skewed by :data:`MIN_SKEW` degrees or more (else as given)."""
    pil = require("PIL.Image", "ocr", "reading images")
    angle = skew_angle(image, at_least=MIN_SKEW)
    if abs(angle) < MIN_SKEW:
        return image
    return image.rotate(angle, resample=pil.Resampling.BICUBIC, expand=expand, fillcolor=(255, 255, 255))


def recognise(image: Any, engine: _ocr.OcrEngine, number: int) -> PdfPage:
    """OCR *image* into a page of lines (pixels, y flipped upwards as in a PDF) with OCR provenance."""
    width, height = image.size
    page = PdfPage(number, float(width), float(height))
    weight = total = 0.0
    for o in engine.recognize(image):
        ln = Line(o.text, o.x0, height - o.y1, o.x1, height - o.y0, o.y1 - o.y0)
        ln.confidence = o.confidence
        page.lines.append(ln)
        weight += len(o.text)
        total += o.confidence * len(o.text)
    page.ocr = {"ocr": True, "engine": engine.name, "confidence": round(total / weight, 3) if weight else 0.0}
    return page
