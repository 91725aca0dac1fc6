"""PDF: text with reading order, paragraphs, headings, ruled tables, metadata, OCR for scanned pages.

Built on pypdfium2 (Apache-2.0/BSD, fast): the page text comes out in one call per page and only two
character boxes per line are read; structure (geometry, object scan, layout) costs about as much
again as plain pdfium text extraction (``benchmarks/parse_speed.py --breakdown``). pdfplumber is
not used: on the corpus its table finder missed or mangled three of four ruled tables and took
50-400 ms a page. The steps:

1. open (the empty password is tried by pdfium itself, then ``ParseOptions.pdf_password``);
2. per page: lines with geometry (:mod:`~ragwright.parse.pdf_layout`), ruled tables
   (:mod:`~ragwright.parse.pdf_tables`, only on pages that draw rules), scanned or garbage-OCR pages
   rendered and sent to OCR (:mod:`~ragwright.parse.ocr`);
3. running headers/footers removed (lines repeating, modulo digits, at the top/bottom of pages);
4. reading order by columns and bands, paragraphs, list items, de-hyphenation
   (:mod:`~ragwright.parse.pdf_order`);
5. headings by font size (levels by size rank), the title from the largest text on page 1.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections import Counter
from typing import Any

from ragwright._deps import require
from ragwright.errors import LimitExceeded, ParseError
from ragwright.model.document import Document, Element, ElementKind
from ragwright.options import ParseOptions
from ragwright.parse import ocr as _ocr
from ragwright.parse import pdf_core
from ragwright.parse.pdf_layout import Line, extract_lines, read_text
from ragwright.parse.pdf_meta import MAX_FORM_PAGES, document_metadata, form_fields, has_widgets
from ragwright.parse.pdf_order import (
    Block,
    reading_groups,
    running_candidates,
    running_tokens,
    split_blocks,
)
from ragwright.parse.pdf_tables import (
    Graphics,
    Table,
    find_tables,
    graphics_from_core,
    has_regions,
    read_tables,
    scan_graphics,
)

__all__ = ["VERSION", "parse_pdf"]

VERSION = "pdf/1"
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
_GARBAGE_QUALITY = 0.8  # an invisible OCR text layer scoring below this is re-OCRed (or flagged)
_LEADER = re.compile(r"(?:\.\s?){4,}\s*\S{1,6}$")
_CAPTION = re.compile(r"^(Table|Tab\.|Tabelle)\s*\d")
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+\S")
_OCR_HINT = "enable OCR with pip install 'ragwright[ocr]'"


class _Page:
    __slots__ = ("attributes", "core", "height", "lines", "number", "ocr", "tables", "widgets", "width")

    def __init__(self, number: int, width: float, height: float) -> None:
        self.number = number
        self.width = width
        self.height = height
        self.lines: list[Line] = []
        self.core: Any = None  # the page's lines held by the C engine (pdf_core) until Python needs them
        self.tables: list[Table] = []
        self.ocr: dict[str, Any] | None = None  # OCR provenance when the page's text came from OCR
        self.attributes: dict[str, Any] = {}  # facts every element of the page carries (poor text layer)
        self.widgets = False  # the page has form widget annotations


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
        pdf = _open(pdfium, data, options.pdf_password)
        try:
            count = len(pdf)
            if count > options.max_pages:
                raise LimitExceeded(
                    f"the PDF has {count} pages, more than max_pages={options.max_pages}; "
                    "raise ParseOptions(max_pages=...) to parse it"
                )
            metadata = document_metadata(pdf, raw, count)
            forms = int(raw.FPDF_GetFormType(pdf.raw)) != 0  # no AcroForm/XFA: no form fields to look for
            pages = [_read_page_safely(raw, pdf, i, options, warnings, forms) for i in range(count)]
            if any(p.widgets for p in pages):
                fields = form_fields(pdf, raw, count)
                if fields:
                    metadata["form_fields"] = fields
        finally:
            pdf.close()
    _strip_running_lines(pages)
    elements = _elements(pages)
    ocr_pages = sum(1 for p in pages if p.ocr)
    if ocr_pages:
        metadata["ocr_pages"] = ocr_pages
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


def _open(pdfium: Any, data: bytes, password: str | None) -> Any:
    """Open the document: pdfium tries the empty user password itself, then *password*."""
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code != _ERR_PASSWORD:
            raise ParseError(f"corrupt PDF: {_ERR_REASONS.get(code or 1, str(exc))}") from exc
    if password is None:
        raise ParseError("encrypted: the PDF is password-protected; pass ParseOptions(pdf_password=...)")
    try:
        return pdfium.PdfDocument(data, password=password)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == _ERR_PASSWORD:
            raise ParseError("encrypted: the password in ParseOptions(pdf_password=...) is wrong for this PDF") from exc
        raise ParseError(f"corrupt PDF: {exc}") from exc


def _read_page_safely(
    raw: Any, pdf: Any, index: int, options: ParseOptions, warnings: list[str], forms: bool = False
) -> _Page:
    """One damaged page must not fail the document: it is skipped with a warning (event ``pdf_page_failed``)."""
    try:
        return _read_page(raw, pdf, index, options, warnings, forms)
    except Exception as exc:
        _log.warning("pdf_page_failed", extra={"page": index + 1, "error": repr(exc)})
        warnings.append(f"page {index + 1} could not be read ({type(exc).__name__}: {exc}) and was skipped")
        return _Page(index + 1, 0.0, 0.0)


def _read_page(
    raw: Any, pdf: Any, index: int, options: ParseOptions, warnings: list[str], forms: bool = False
) -> _Page:
    """Lines and tables of one page; routes scanned pages and garbage OCR layers to OCR.

    The C engine (:mod:`~ragwright.parse.pdf_core`) reads the lines when it is installed and takes the
    page; a page with a table candidate or bound for OCR gets Python ``Line`` objects from it.
    """
    handle = raw.FPDF_LoadPage(pdf.raw, index)
    if not handle:
        warnings.append(f"page {index + 1} could not be loaded and was skipped")
        return _Page(index + 1, 0.0, 0.0)
    page = _Page(index + 1, float(raw.FPDF_GetPageWidthF(handle)), float(raw.FPDF_GetPageHeightF(handle)))
    page.widgets = forms and index < MAX_FORM_PAGES and has_widgets(raw, handle)
    core = pdf_core.get(raw)
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
                    if page.tables:
                        page.core.add_tables([(t.x0, t.y0, t.x1, t.y1, t.markdown()) for t in page.tables])
        finally:
            raw.FPDFText_ClosePage(textpage)
        if graphics.image_cover >= 0.3 and letters < _SCANNED_CHARS:
            reason = "scanned"
        elif graphics.image_cover >= 0.5 and _invisible_share(raw, handle) >= 0.5:
            _materialize(page)
            quality = _ocr.text_quality(" ".join(ln.text for ln in page.lines))
            if quality < _GARBAGE_QUALITY:
                reason = f"garbage:{quality:.2f}"
    finally:
        raw.FPDF_ClosePage(handle)
    if reason:
        _materialize(page)
        _route_to_ocr(pdf, page, graphics, reason, options, warnings)
    return page


def _materialize(page: _Page) -> None:
    """Hand a page from the C engine to the Python path: its lines as ``Line`` objects."""
    if page.core is not None:
        page.lines = page.core.lines(Line)
        page.core = None


def _invisible_share(raw: Any, handle: Any) -> float:
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


def _route_to_ocr(
    pdf: Any, page: _Page, graphics: Graphics | None, reason: str, options: ParseOptions, warnings: list[str]
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
    page.lines, page.tables, page.attributes = lines, [], {}
    page.ocr = {"ocr": True, "engine": engine.name, "confidence": round(confidence, 3)}


def _ocr_lines(pdf: Any, page: _Page, graphics: Graphics | None, engine: _ocr.OcrEngine) -> tuple[list[Line], float]:
    """Render the page near the scan's own resolution (at most 2000 px a side) and OCR it."""
    native = graphics.image_px if graphics is not None and graphics.image_px > 0 else 200 / 72
    longest = max(page.width, page.height, 1.0)
    scale = max(1.0, min(native, 3.0, 2000 / longest))
    handle = pdf[page.number - 1]
    try:
        image = handle.render(scale=scale).to_pil()
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


def _strip_running_lines(pages: list[_Page]) -> None:
    """Remove page numbers and running headers/footers (see :func:`pdf_order.running_tokens`)."""
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


def _elements(pages: list[_Page]) -> list[Element]:
    """Blocks of every page in reading order, classified into typed elements."""
    weights: Counter[float] = Counter()
    for page in pages:
        if page.core is not None:
            for key, chars in page.core.weights():
                weights[key] += chars
        else:
            for ln in page.lines:
                weights[round(ln.size * 2) / 2] += len(ln.text)
    body = weights.most_common(1)[0][0] if weights else 10.0
    per_page: list[tuple[_Page, list[Block]]] = []
    core_heads: dict[int, list[tuple[int, float, float]]] = {}  # page number -> (block index, size, top)
    for page in pages:
        if page.core is not None:  # the engine keeps the blocks; only the size headings come back
            core_heads[page.number] = page.core.blocks(body)
            per_page.append((page, []))
            continue
        items = list(page.lines)
        for t in page.tables:
            stand_in = Line(t.markdown(), t.x0, t.y0, t.x1, t.y1, 10.0)
            stand_in.table = t
            items.append(stand_in)
        blocks = [b for g in reading_groups(items) for b in split_blocks(g, body)]
        per_page.append((page, blocks))
    return _classify(per_page, core_heads, body)


_CORE_KINDS = (ElementKind.TITLE, ElementKind.HEADING, ElementKind.PARAGRAPH, ElementKind.LIST_ITEM)


def _classify(
    per_page: list[tuple[_Page, list[Block]]], core_heads: dict[int, list[tuple[int, float, float]]], body: float
) -> list[Element]:
    # OCR boxes are too uneven for font-size headings: OCR pages give paragraphs and list items
    kinds = {id(b): k for p, bs in per_page if not p.ocr for b in bs if (k := _heading_kind(b, body))}
    # headings by size, as (page number, block or engine block index, size, top)
    heads: list[tuple[int, Block | int, float, float]] = []
    for page, blocks in per_page:
        if page.core is not None:
            heads.extend((page.number, i, size, top) for i, size, top in core_heads[page.number])
        else:
            heads.extend((page.number, b, b.size, b.top) for b in blocks if kinds.get(id(b)) == "size")
    title: tuple[int, Block | int] | None = None
    first_page = [h for h in heads if h[0] == per_page[0][0].number] if per_page else []
    if first_page:
        top = max(first_page, key=lambda h: h[2])
        if top[2] >= 1.25 * body and top[3] >= 0.5 * per_page[0][0].height:
            title = (top[0], top[1])
    levels = _levels([h[2] for h in heads if title is None or (h[0], h[1]) != title])
    deepest = max(levels.values(), default=0)
    out: list[Element] = []
    for page, blocks in per_page:
        if page.core is not None:  # the engine's blocks: no tables, no OCR, no page attributes
            core_title = title[1] if title is not None and title[0] == page.number else -1
            by_index = {i: levels.get(round(size, 1), 1) for i, size, _ in core_heads[page.number]}
            tables = functools.partial(_core_table_elements, page.tables, page.number)
            out.extend(page.core.elements(Element, _CORE_KINDS, page.number, core_title, by_index, deepest, tables))
            continue
        page_title = title[1] if title is not None and title[0] == page.number else None
        attrs = dict(page.ocr) if page.ocr else dict(page.attributes)
        for i, b in enumerate(blocks):
            text = b.text.strip()
            if not text:
                continue
            extra = dict(attrs)
            if page.ocr:
                extra["confidence"] = round(sum(ln.confidence for ln in b.lines) / len(b.lines), 3)
            if b is page_title:
                out.append(Element(ElementKind.TITLE, text, page=page.number, attributes=extra))
            elif b.kind == "table":
                out.extend(_table_elements(b.lines[0].table, _caption_beside(blocks, i), page.number))
            elif id(b) in kinds:
                if kinds[id(b)] == "size":
                    level = levels.get(round(b.size, 1), 1)
                else:
                    numbered = _NUMBERED.match(text)
                    level = min(numbered.group(1).count(".") + 1, 6) if numbered else min(deepest + 1, 6)
                out.append(Element(ElementKind.HEADING, text, level=level, page=page.number, attributes=extra))
            elif b.kind == "list_item":
                out.append(Element(ElementKind.LIST_ITEM, text, level=1, page=page.number, attributes=extra))
            else:
                out.append(Element(ElementKind.PARAGRAPH, text, page=page.number, attributes=extra))
    return out


def _heading_kind(b: Block, body: float) -> str | None:
    """``"size"`` for text clearly larger than the body, ``"bold"`` for a short bold line, else None."""
    if b.kind != "paragraph" or b.vertical or len(b.lines) > 4:
        return None
    text = b.text
    if not any(c.isalpha() for c in text) or _LEADER.search(text):
        return None
    if b.size >= 1.15 * body and len(text) <= 250:
        return "size"
    if (
        b.bold
        and len(b.lines) <= 2
        and len(text) <= 150
        and b.size >= 0.9 * body
        and not text.endswith((".", ",", ";"))
    ):
        return "bold"
    return None


def _levels(sizes: list[float]) -> dict[float, int]:
    """Heading level by size rank: the largest size is level 1; sizes within 6 % share a level."""
    levels: dict[float, int] = {}
    level, anchor = 0, 0.0
    for s in sorted({round(s, 1) for s in sizes}, reverse=True):
        if not level or s < anchor * 0.94:
            level, anchor = level + 1, s
        levels[s] = min(level, 6)
    return levels


def _caption_beside(blocks: list[Block], i: int) -> str | None:
    """The text of the block before or after a table when it reads like its caption ("Table 3 …")."""
    for j in (i - 1, i + 1):
        if 0 <= j < len(blocks) and blocks[j].kind != "table" and _CAPTION.match(blocks[j].text):
            return blocks[j].text
    return None


def _core_table_elements(tables: list[Table], page: int, index: int, caption: str | None) -> list[Element]:
    return _table_elements(tables[index], caption, page)


def _table_elements(table: Table, beside: str | None, page: int) -> list[Element]:
    """A table's elements: its own caption, the table (with the caption beside it as attribute), notes."""
    attrs: dict[str, Any] = {"rows": len(table.rows), "columns": max(len(r) for r in table.rows)}
    caption = table.caption if table.caption is not None else beside
    if caption:
        attrs["caption"] = caption
    out = []
    if table.caption:
        out.append(Element(ElementKind.PARAGRAPH, table.caption, page=page))
    out.append(Element(ElementKind.TABLE, table.markdown(), page=page, attributes=attrs))
    out.extend(Element(ElementKind.PARAGRAPH, note, page=page) for note in table.notes)
    return out
