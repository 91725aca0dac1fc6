"""PDF pages to typed elements: blocks in reading order, headings and levels, the title, tables.

The pages come from :func:`~ragwright.parse.pdf.parse_pdf` once read and stripped of running lines.
A page the C engine holds (``PdfPage.core``) builds its blocks and elements in C
(:mod:`~ragwright.parse.pdf.core`); only its headings by size come back, since heading levels and the
title are decided over the whole document. Other pages go through
:func:`~ragwright.parse.pdf.order.reading_groups` and :func:`~ragwright.parse.pdf.order.split_blocks`.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from typing import Any

from ragwright.model.document import Element, ElementKind
from ragwright.parse.pdf.layout import Line
from ragwright.parse.pdf.order import Block, reading_groups, split_blocks
from ragwright.parse.pdf.tables import Table

__all__ = ["PdfPage", "page_elements"]

_LEADER = re.compile(r"(?:\.\s?){4,}\s*\S{1,6}$")
_CAPTION = re.compile(r"^(Table|Tab\.|Tabelle)\s*\d")
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+\S")


class PdfPage:
    """What :func:`~ragwright.parse.pdf.parse_pdf` knows of a page once read: lines (or the engine's),
    tables, OCR provenance."""

    __slots__ = (
        "attributes",
        "core",
        "height",
        "hidden",
        "images",
        "lines",
        "number",
        "ocr",
        "tables",
        "widgets",
        "width",
    )

    def __init__(self, number: int, width: float, height: float) -> None:
        self.number = number
        self.width = width
        self.height = height
        self.lines: list[Line] = []
        self.core: Any = None  # the page's lines held by the C engine (core.py) until Python needs them
        self.tables: list[Table] = []
        self.images: list[Any] = []  # images whose text OCR read (images.PageImage), placed like tables
        self.ocr: dict[str, Any] | None = None  # OCR provenance when the page's text came from OCR
        self.attributes: dict[str, Any] = {}  # facts every element of the page carries (poor text layer)
        self.widgets = False  # the page has form widget annotations
        self.hidden = 0  # hidden text objects removed before the text was read (hidden.py)


def page_elements(pages: list[PdfPage]) -> list[Element]:
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
    per_page: list[tuple[PdfPage, list[Block]]] = []
    core_heads: dict[int, list[tuple[int, float, float]]] = {}  # page number -> (block index, size, top)
    for page in pages:
        if page.core is not None:  # the engine keeps the blocks; only the size headings come back
            if page.tables or page.images:  # stand-ins in the reading order (one call: indices from 0)
                page.core.add_tables(
                    [(t.x0, t.y0, t.x1, t.y1, t.markdown()) for t in page.tables]
                    + [(i.x0, i.y0, i.x1, i.y1, i.text) for i in page.images]
                )
            core_heads[page.number] = page.core.blocks(body)
            per_page.append((page, []))
            continue
        items = list(page.lines)
        for t in page.tables:
            stand_in = Line(t.markdown(), t.x0, t.y0, t.x1, t.y1, 10.0)
            stand_in.table = t
            items.append(stand_in)
        items.extend(image.stand_in() for image in page.images)
        blocks = [b for g in reading_groups(items) for b in split_blocks(g, body)]
        per_page.append((page, blocks))
    return _classify(per_page, core_heads, body)


_CORE_KINDS = (ElementKind.TITLE, ElementKind.HEADING, ElementKind.PARAGRAPH, ElementKind.LIST_ITEM)


def _classify(
    per_page: list[tuple[PdfPage, list[Block]]], core_heads: dict[int, list[tuple[int, float, float]]], body: float
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
        if page.core is not None:  # the engine's blocks (no OCR, no page attributes; tables call back)
            core_title = title[1] if title is not None and title[0] == page.number else -1
            by_index = {i: levels.get(round(size, 1), 1) for i, size, _ in core_heads[page.number]}
            tables = functools.partial(_core_table_elements, [*page.tables, *page.images], page.number)
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
            elif b.kind == "table" and not isinstance(b.lines[0].table, Table):  # an image's OCR text
                out.extend(b.lines[0].table.elements)
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


def _core_table_elements(tables: list[Any], page: int, index: int, caption: str | None) -> list[Element]:
    """A stand-in's elements: a table's, or the OCR text of an image (``images.PageImage``)."""
    if not isinstance(tables[index], Table):
        return list(tables[index].elements)
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
