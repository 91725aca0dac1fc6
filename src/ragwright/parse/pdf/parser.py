"""PDF: text with reading order, paragraphs, headings, ruled tables, metadata, OCR for scanned pages.

Built on pypdfium2 (Apache-2.0/BSD, fast): the page text comes out in one call per page and only two
character boxes per line are read; with the C engine the structure (geometry, object scan, layout)
costs under a tenth of plain pdfium text extraction (``benchmarks/parse_speed.py --breakdown``).
pdfplumber is not used: on the corpus its table finder missed or mangled three of four ruled tables and took
50-400 ms a page. The steps:

1. open (the empty password is tried by pdfium itself, then ``ParseOptions.pdf_password``);
2. per page: hidden text objects removed (:mod:`~ragwright.parse.pdf.hidden`), lines with geometry
   (:mod:`~ragwright.parse.pdf.layout`), ruled tables
   (:mod:`~ragwright.parse.pdf.tables`, only on pages that draw rules), scanned or garbage-OCR pages
   rendered and sent to OCR (:mod:`~ragwright.parse.ocr`), the images of other pages that may hold
   text OCR'd where they sit (:mod:`~ragwright.parse.pdf.images`, ``ParseOptions.ocr_images``);
3. running headers/footers removed (lines repeating, modulo digits, at the top/bottom of pages);
4. reading order by columns and bands, paragraphs, list items, de-hyphenation
   (:mod:`~ragwright.parse.pdf.order`);
5. headings by font size (levels by size rank), the title from the largest text on page 1
   (:mod:`~ragwright.parse.pdf.elements`).

Steps 2 to 5 run in C where the engine is installed (:mod:`~ragwright.parse.pdf.core`); the Python
modules are the reference and take the pages the engine declines.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from ragwright._deps import require
from ragwright.errors import LimitExceeded, MissingDependencyError, ParseError
from ragwright.model.document import Document, ElementKind
from ragwright.parse import ocr as _ocr
from ragwright.parse.image import deskew
from ragwright.parse.options import ParseOptions
from ragwright.parse.pdf import core as pdf_core
from ragwright.parse.pdf.elements import PdfPage, page_elements
from ragwright.parse.pdf.hidden import hidden_objects, invisible_share, remove_objects
from ragwright.parse.pdf.images import MIN_PIXELS, PageImages
from ragwright.parse.pdf.layout import Line, extract_lines, read_text
from ragwright.parse.pdf.meta import MAX_FORM_PAGES, document_metadata, form_fields, has_widgets
from ragwright.parse.pdf.order import running_candidates, running_tokens
from ragwright.parse.pdf.repair import recover
from ragwright.parse.pdf.tables import (
    Graphics,
    find_tables,
    graphics_from_core,
    has_regions,
    read_tables,
    scan_graphics,
)

__all__ = ["VERSION", "merge_text_layer", "parse_pdf"]

VERSION = "pdf/7"
_log = logging.getLogger(__name__)
_PDFIUM_LOCK = threading.RLock()

_ERR_PASSWORD = 4
_ERR_REASONS = {
    1: "unknown pdfium error",
    2: "the file could not be read",
    3: "the file is not a PDF or its structure is damaged beyond repair (pdfium: data format error)",
    5: "it uses an unsupported security handler",
    6: "its page tree is damaged",
}
_SCANNED_CHARS = 20
_LAYER_WINS = 0.3  # share of an OCR line's box on text-layer lines that drops it (merge_text_layer)
_GARBAGE_QUALITY = 0.8  # an invisible OCR text layer scoring below this is re-OCRed (or flagged)
_OCR_HINT = "enable OCR with pip install 'ragwright[ocr]'"


def parse_pdf(
    document_id: str, data: bytes, *, source: str | None = None, options: ParseOptions | None = None
) -> Document:
    """Parse PDF bytes into a :class:`Document` (see the module docstring for the steps)."""
    options = options or ParseOptions()
    if not data or data.isspace():
        raise ParseError("empty file: the PDF has no content (0 bytes)")
    if len(data) > options.max_file_bytes:
        raise LimitExceeded(
            f"the PDF has {len(data)} bytes, more than max_file_bytes={options.max_file_bytes}; "
            "raise ParseOptions(max_file_bytes=...) to parse it"
        )
    pdfium = require("pypdfium2", "pdf", "PDF parsing")
    raw = require("pypdfium2.raw", "pdf", "PDF parsing")
    warnings: list[str] = []
    with _PDFIUM_LOCK:  # pdfium is not thread-safe, not even across documents
        pdf, repaired = _open_or_recover(pdfium, data, options, warnings)
        try:
            count = len(pdf)
            if count > options.max_pages:
                raise LimitExceeded(
                    f"the PDF has {count} pages, more than max_pages={options.max_pages}; "
                    "raise ParseOptions(max_pages=...) to parse it"
                )
            metadata = document_metadata(pdf, raw, count)
            if repaired:  # the producer is now the rebuilt copy's, not the original's
                if str(metadata.get("producer", "")).startswith("pypdf"):
                    metadata.pop("producer")
                metadata.update(repaired)
            forms = int(raw.FPDF_GetFormType(pdf.raw)) != 0  # no AcroForm/XFA: no form fields to look for
            images = PageImages(options)
            pages = [_read_page_safely(raw, pdf, i, options, warnings, forms, images) for i in range(count)]
            if any(p.widgets for p in pages):
                fields = form_fields(pdf, raw, count)
                if fields:
                    metadata["form_fields"] = fields
        finally:
            pdf.close()
    _strip_running_lines(pages)
    elements = page_elements(pages)
    ocr_pages = sum(1 for p in pages if p.ocr)
    if ocr_pages:
        metadata["ocr_pages"] = ocr_pages
    pictures = sum(len(p.images) for p in pages)
    if pictures:
        metadata["ocr_pictures"] = pictures
    warnings.extend(images.reader.warnings)
    hidden = sum(p.hidden for p in pages)
    if hidden:
        metadata["hidden_elements"] = hidden
        warnings.append(f"{hidden} hidden text object(s) dropped (invisible, off-page, tiny or covered text)")
    if not elements:
        if any("scanned" in w or "OCR" in w for w in warnings):
            raise ParseError(f"no text: probably scanned (image-only); {' | '.join(warnings)}")
        raise ParseError("no text: the PDF has no extractable text on any page")
    title = metadata.get("title") or next((e.text for e in elements if e.kind is ElementKind.TITLE), None)
    return Document(
        id=document_id,
        elements=tuple(elements),
        title=title,
        source=source,
        mime_type="application/pdf",
        metadata=metadata,
        warnings=tuple(warnings),
    )


def _open_or_recover(
    pdfium: Any, data: bytes, options: ParseOptions, warnings: list[str]
) -> tuple[Any, dict[str, Any]]:
    """Open with pdfium; a file it refuses as corrupt is rebuilt by a tolerant reader (:mod:`.repair`).

    Returns the document and the metadata saying it was repaired (``repaired_by``, ``pages_recovered``);
    when recovery finds no page either, the pdfium error stands, saying so.
    """
    try:
        return _open(pdfium, data, options.pdf_password), {}
    except ParseError as exc:
        if not str(exc).startswith("corrupt PDF"):
            raise
        try:
            fixed = recover(data, max_pages=options.max_pages)
        except MissingDependencyError:
            raise ParseError(f"{exc}; install pypdf (pip install 'ragwright[pdf]') to try recovering it") from exc
        if fixed is None:
            raise ParseError(f"{exc}; pypdf found no readable page either") from exc
        try:
            pdf = pdfium.PdfDocument(fixed.data)
        except pdfium.PdfiumError as again:  # pragma: no cover - pypdf wrote what pdfium cannot read
            raise ParseError(f"{exc}; the copy pypdf rebuilt is unreadable too ({again})") from exc
        _log.warning("pdf_recovered", extra={"reader": "pypdf", "pages": fixed.kept, "found": fixed.found})
        warnings.append(
            f"pdfium refused the PDF ({str(exc)[len('corrupt PDF: ') :]}); {fixed.kept} of the {fixed.found} "
            "page(s) found were recovered through pypdf, in an order that may differ from the original"
        )
        return pdf, {"repaired_by": "pypdf", "pages_recovered": fixed.kept}


def _open(pdfium: Any, data: bytes, password: str | None) -> Any:
    """Open the document: pdfium tries the empty user password itself, then *password*."""
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code != _ERR_PASSWORD:
            raise ParseError(f"corrupt PDF: {_ERR_REASONS.get(code or 1, str(exc))}") from exc
    if password is None:
        raise ParseError(
            "encrypted: the PDF is password-protected; give its password (ragwright ingest --password / "
            "--passwords FILE, or ParseOptions(pdf_password=...) / pdf_passwords={pattern: password})"
        )
    try:
        return pdfium.PdfDocument(data, password=password)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == _ERR_PASSWORD:
            raise ParseError(
                "encrypted: the password given (--password / ParseOptions.pdf_password) is wrong for this PDF"
            ) from exc
        raise ParseError(f"corrupt PDF: {exc}") from exc


def _read_page_safely(
    raw: Any,
    pdf: Any,
    index: int,
    options: ParseOptions,
    warnings: list[str],
    forms: bool = False,
    images: PageImages | None = None,
) -> PdfPage:
    """One damaged page must not fail the document: it is skipped with a warning (event ``pdf_page_failed``)."""
    try:
        return _read_page(raw, pdf, index, options, warnings, forms, images)
    except Exception as exc:
        _log.warning("pdf_page_failed", extra={"page": index + 1, "error": repr(exc)})
        warnings.append(f"page {index + 1} could not be read ({type(exc).__name__}: {exc}) and was skipped")
        return PdfPage(index + 1, 0.0, 0.0)


def _read_page(
    raw: Any,
    pdf: Any,
    index: int,
    options: ParseOptions,
    warnings: list[str],
    forms: bool = False,
    images: PageImages | None = None,
) -> PdfPage:
    """Lines, tables and images' text of one page; routes scanned pages and garbage OCR layers to OCR.

    The C engine (:mod:`~ragwright.parse.pdf.core`) reads the lines and tables when it is installed and
    keeps the page; a page bound for OCR (or with a garbled text layer) gets Python ``Line`` objects.
    """
    handle = raw.FPDF_LoadPage(pdf.raw, index)
    if not handle:
        warnings.append(f"page {index + 1} could not be loaded and was skipped")
        return PdfPage(index + 1, 0.0, 0.0)
    page = PdfPage(index + 1, float(raw.FPDF_GetPageWidthF(handle)), float(raw.FPDF_GetPageHeightF(handle)))
    page.widgets = forms and index < MAX_FORM_PAGES and has_widgets(raw, handle)
    core = pdf_core.get(raw)
    hidden = (
        core.hidden(pdf_core.address(handle), page.width, page.height)
        if core is not None
        else hidden_objects(raw, handle, page.width, page.height)
    )
    if hidden:  # off the page before its text is read, on both paths
        remove_objects(raw, handle, hidden)
        page.hidden = len(hidden)
    graphics = Graphics()
    reason = ""
    try:
        textpage = raw.FPDFText_LoadPage(handle)
        if not textpage:
            raise RuntimeError("pdfium could not read the page's text")
        try:
            lineset = core.extract(pdf_core.address(textpage)) if core is not None else None
            if lineset is not None:
                text = ""
                letters = lineset.letters
                page.core = lineset if lineset.count else None
            else:
                text = read_text(raw, textpage)
                page.lines = extract_lines(raw, textpage, text) if text.strip() else []
                letters = sum(len(ln.text) for ln in page.lines)
            # every page is scanned for rules and images: a few text objects holding many lines can
            # sit beside a ruled table, so no object count can tell that a page draws nothing else
            if core is not None:
                graphics = graphics_from_core(core.graphics(pdf_core.address(handle), page.width, page.height))
            else:
                graphics = scan_graphics(raw, handle, page.width, page.height)
            if len(graphics.hrules) >= 2 and (page.lines or page.core is not None) and has_regions(graphics):
                if page.core is None:
                    page.tables = find_tables(raw, textpage, text, page.lines, graphics)
                else:  # the engine reads the regions and keeps the tables as stand-ins in its lines
                    source = pdf_core.EngineTableLines(page.core, pdf_core.address(textpage), graphics.vrules)
                    page.tables = read_tables(source, graphics.regions or [])
            ocr_layer = False
            if graphics.image_cover >= 0.3 and letters < _SCANNED_CHARS:
                reason = "scanned"
            elif graphics.image_cover >= 0.5 and invisible_share(raw, handle) >= 0.5:
                ocr_layer = True  # a scan with its OCR text layer: its image holds no other text
                _materialize(page)
                quality = _ocr.text_quality(" ".join(ln.text for ln in page.lines))
                if quality < _GARBAGE_QUALITY:
                    reason = f"garbage:{quality:.2f}"
            # images on a page with a text layer: their text OCR'd in place (images.py)
            if images is not None and not reason and not ocr_layer:
                page.images = images.read(raw, pdf, handle, textpage, page, graphics.image_cover)
        finally:
            raw.FPDFText_ClosePage(textpage)
    finally:
        raw.FPDF_ClosePage(handle)
    if reason:
        _materialize(page)
        _route_to_ocr(pdf, page, graphics, reason, options, warnings)
    return page


def _materialize(page: PdfPage) -> None:
    """Hand a page from the C engine to the Python path: its lines as ``Line`` objects."""
    if page.core is not None:
        page.lines = page.core.lines(Line)
        page.core = None


def _route_to_ocr(
    pdf: Any, page: PdfPage, graphics: Graphics | None, reason: str, options: ParseOptions, warnings: list[str]
) -> None:
    """OCR a scanned page (or one with a garbage text layer); flag it when OCR is off or unsure.

    Whatever text layer the page has is kept when OCR cannot do better (off, no engine, failure,
    nothing recognised, confidence below ``ocr_min_confidence``); an image-only page then has none.
    """
    n = page.number
    layer = sum(len(ln.text) for ln in page.lines)
    if reason.startswith("garbage"):
        problem = f"page {n} has a poor OCR text layer (quality {reason.split(':')[1]})"
    elif layer:
        problem = f"page {n} is a scanned image with only {layer} characters of text"
    else:
        problem = f"page {n} has no text layer (probably scanned)"
    kept = "; its text layer was kept" if layer else ""
    if reason.startswith("garbage"):
        page.attributes = {"text_layer_quality": float(reason.split(":")[1])}
    engine = _ocr.get_engine() if options.ocr else None
    if engine is None:
        hint = "OCR is off (ParseOptions(ocr=False))" if not options.ocr else _OCR_HINT
        warnings.append(f"{problem}{kept}; {hint}")
        return
    try:
        lines, confidence = _ocr_lines(pdf, page, graphics, engine)
    except Exception as exc:  # an engine failure must not fail the document
        _log.warning("ocr_failed", extra={"page": n, "engine": engine.name, "error": repr(exc)})
        warnings.append(f"{problem}; OCR with {engine.name} failed ({exc!r}){kept}")
        return
    if not lines:
        warnings.append(f"{problem}; OCR ({engine.name}) found no text{kept}")
        return
    if confidence < options.ocr_min_confidence:
        warnings.append(
            f"{problem}; OCR confidence {confidence:.2f} is below ocr_min_confidence={options.ocr_min_confidence}, "
            f"so the OCR text is not indexed{kept}"
        )
        return
    page.ocr = {"ocr": True, "engine": engine.name, "confidence": round(confidence, 3)}
    if reason == "scanned" and layer:  # a text layer over a scan reads what it says: OCR only adds to it
        page.lines = merge_text_layer(page.lines, lines)
        page.ocr["text_layer_kept"] = True
    else:
        page.lines, page.tables, page.attributes = lines, [], {}


def merge_text_layer(layer: list[Line], recognised: list[Line]) -> list[Line]:
    """A scanned page's text layer, with the OCR lines that read where the layer has no text.

    A scan can carry a few lines of real text (a date typed into a form, a stamp's caption): OCR of the
    image may read less there — ``malformed-from-issue-932.pdf`` lost its date "2021 3 31" under a seal —
    so where the layer has text it wins: an OCR line a third or more of whose box lies on layer lines is
    dropped; every other OCR line is kept beside the layer.
    """
    out = list(layer)
    for o in recognised:
        area = max((o.x1 - o.x0) * (o.y1 - o.y0), 1e-6)
        covered = sum(
            max(0.0, min(o.x1, ln.x1) - max(o.x0, ln.x0)) * max(0.0, min(o.y1, ln.y1) - max(o.y0, ln.y0))
            for ln in layer
        )
        if covered < _LAYER_WINS * area:
            out.append(o)
    return out


#: Scans are rendered at no less than this many pixels a point (200 dpi) for OCR.
MIN_RENDER_SCALE = 200 / 72


def render_scale(native: float | None, width: float, height: float) -> float:
    """Pixels a point to render a scanned page at for OCR: the scan's own resolution (*native*, pixels of
    its image a point; 200 dpi when unknown), never under 200 dpi — a 100–150 dpi scan read at its own
    resolution loses characters that 200 dpi keeps (``benchmarks/ocr_dpi.py``: 100 dpi CER 0.037 → 0.028,
    120 dpi 0.009 → 0.007) — and at most 3× and 2000 px on the longest side (rapidocr's limit)."""
    longest = max(width, height, 1.0)
    return max(1.0, min(max(native or MIN_RENDER_SCALE, MIN_RENDER_SCALE), 3.0, 2000 / longest))


def _ocr_lines(pdf: Any, page: PdfPage, graphics: Graphics | None, engine: _ocr.OcrEngine) -> tuple[list[Line], float]:
    """Render the page at :func:`render_scale` and OCR it; a page whose rendering is under
    :data:`~ragwright.parse.pdf.images.MIN_PIXELS` on a side holds no line OCR reads (a 12-pixel fax image:
    rapidocr would enlarge it to 736 pixels a side to find nothing)."""
    native = graphics.image_px if graphics is not None and graphics.image_px > 0 else None
    scale = render_scale(native, page.width, page.height)
    if min(page.width, page.height) * scale < MIN_PIXELS:
        return [], 0.0
    handle = pdf[page.number - 1]
    try:
        image = deskew(handle.render(scale=scale).to_pil(), expand=False)  # same size: boxes stay on the page
    finally:
        handle.close()
    height = image.size[1] / scale
    lines: list[Line] = []
    weight = total = 0.0
    for o in engine.recognize(image):
        ln = Line(
            o.text, o.x0 / scale, height - o.y1 / scale, o.x1 / scale, height - o.y0 / scale, (o.y1 - o.y0) / scale
        )
        ln.confidence = o.confidence
        lines.append(ln)
        weight += len(o.text)
        total += o.confidence * len(o.text)
    return lines, (total / weight if weight else 0.0)


def _strip_running_lines(pages: list[PdfPage]) -> None:
    """Remove page numbers and running headers/footers (see :func:`~ragwright.parse.pdf.order.running_tokens`)."""
    candidates: list[tuple[int, list[tuple[str, float, str, Any]]]] = []
    for p in pages:
        found: list[tuple[str, float, str, Any]]
        if p.core is not None:  # tokens (page, line index)
            found = [(z, y, k, (p.number, i)) for z, y, k, i in p.core.candidates(p.height)]
        else:  # tokens id(line)
            found = [(z, y, k, id(ln)) for z, y, k, ln in running_candidates(p.lines, p.height)]
        candidates.append((p.number, found))
    drop = running_tokens(candidates)
    if drop:
        by_page: dict[int, list[int]] = {}
        for token in drop:
            if isinstance(token, tuple):
                by_page.setdefault(token[0], []).append(token[1])
        for page in pages:
            if page.core is not None:
                page.core.drop(by_page.get(page.number, ()))
            else:
                page.lines = [ln for ln in page.lines if id(ln) not in drop]
