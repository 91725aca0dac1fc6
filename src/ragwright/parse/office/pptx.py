"""PPTX: one section per slide — title heading, body text, lists, tables, speaker notes.

* each visible slide opens with a level-1 ``HEADING``: its title placeholder's text (``TITLE`` /
  ``CENTER_TITLE`` / ``VERTICAL_TITLE``), else ``"Slide N"``; every element carries ``page = N``;
* text frames give ``PARAGRAPH`` or ``LIST_ITEM`` (``level = paragraph level + 1``): a paragraph is a
  list item when it has an explicit bullet or number, sits below level 0, or belongs to a body
  placeholder (which inherits bullets from the master) without ``buNone``;
* tables become one Markdown ``TABLE`` (first row as header, merged cells repeated); group shapes are
  walked recursively; pictures with alternative text give an ``IMAGE`` element, and the text OCR reads
  in a picture follows it (:mod:`~ragwright.parse.pictures`, unless ``options.ocr`` is off);
* date, footer and slide-number placeholders are dropped (like headers and footers elsewhere);
* what a viewer of the slide show never sees is dropped and counted (``metadata["hidden_elements"]``,
  with a warning): hidden slides, hidden shapes (``hidden="1"``), shapes lying wholly off the slide, and
  runs smaller than 2 pt or coloured like what is under them (the shape's solid fill, else the slide's
  background through its layout and master, white by default; an unresolvable fill hides nothing);
* speaker notes follow the slide as a ``PARAGRAPH`` ``"Notes: …"`` with attribute ``{"notes": True}``.
"""

from __future__ import annotations

import io
from typing import Any, Final

from ragwright._deps import require
from ragwright.errors import LimitExceeded
from ragwright.model.document import Document, Element, ElementKind
from ragwright.parse.office.ooxml import core_properties, library_errors, markdown_table, open_package
from ragwright.parse.office.pptx_look import SlideLook, hidden_flag, off_slide, shape_fill
from ragwright.parse.options import ParseOptions
from ragwright.parse.pictures import PictureReader
from ragwright.parse.visibility import WHITE

VERSION = "pptx/4"
MIME: Final = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
_A: Final = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_P: Final = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_TITLES: Final = frozenset({"TITLE", "CENTER_TITLE", "VERTICAL_TITLE"})
_DROPPED: Final = frozenset({"DATE", "FOOTER", "SLIDE_NUMBER", "HEADER"})
_BODIES: Final = frozenset({"BODY", "OBJECT", "VERTICAL_BODY", "VERTICAL_OBJECT"})


def _placeholder_type(shape: Any) -> str | None:
    if not shape.is_placeholder:
        return None
    try:
        kind = shape.placeholder_format.type
    except ValueError:  # a placeholder whose type python-pptx does not know
        return None
    return None if kind is None else str(getattr(kind, "name", kind))


def _text_frame(shape: Any, page: int, out: list[Element], *, body: bool, look: SlideLook) -> None:
    under = shape_fill(shape, look.background, look.theme)
    for para in shape.text_frame.paragraphs:
        text = look.paragraph_text(para, under)  # runs, fields and line breaks (vertical tabs)
        if not text:
            continue
        ppr = para._p.find(_A + "pPr")
        bullet = ppr is not None and (ppr.find(_A + "buChar") is not None or ppr.find(_A + "buAutoNum") is not None)
        no_bullet = ppr is not None and ppr.find(_A + "buNone") is not None
        level = int(para.level or 0)
        if not no_bullet and (bullet or level > 0 or body):
            out.append(Element(ElementKind.LIST_ITEM, text, level=level + 1, page=page))
        else:
            out.append(Element(ElementKind.PARAGRAPH, text, page=page))


def _table(table: Any, look: SlideLook) -> str:
    """A pptx table as Markdown, the merge origin's text repeated over its span (cell fills come from
    table styles: colour hides nothing in a table, size does)."""
    n_rows, n_cols = len(table.rows), len(table.columns)
    grid = [[""] * n_cols for _ in range(n_rows)]
    for r in range(n_rows):
        for c in range(n_cols):
            cell = table.cell(r, c)
            if cell.is_spanned:
                continue
            text = " ".join(look.paragraph_text(p, None) for p in cell.text_frame.paragraphs).strip()
            height, width = (cell.span_height, cell.span_width) if cell.is_merge_origin else (1, 1)
            for dr in range(height):
                for dc in range(width):
                    if r + dr < n_rows and c + dc < n_cols:
                        grid[r + dr][c + dc] = text
    rows = [row for row in grid if any(row)]
    return markdown_table(rows)


def _shape_type(shape: Any) -> int | None:
    try:
        kind = shape.shape_type
    except NotImplementedError:  # an auto shape of a kind python-pptx does not know
        return None
    return None if kind is None else int(kind)


def _shapes(
    shapes: Any,
    page: int,
    out: list[Element],
    skip: Any,
    look: SlideLook,
    *,
    top: bool = True,
    pictures: PictureReader | None = None,
) -> None:
    """Walk shapes in order (recursing into groups), appending their elements; hidden and (at the top
    level, where positions are on the slide) off-slide shapes are dropped and counted."""
    for shape in shapes:
        if shape is skip or (skip is not None and shape.shape_id == skip.shape_id):
            continue
        kind = _placeholder_type(shape)
        if kind in _DROPPED:
            continue
        if hidden_flag(shape) or (top and off_slide(shape, look)):
            look.hidden += 1
            continue
        shape_type = _shape_type(shape)
        if shape_type == 6:  # MSO_SHAPE_TYPE.GROUP
            _shapes(shape.shapes, page, out, None, look, top=False, pictures=pictures)
        elif getattr(shape, "has_table", False) and shape.has_table:
            table = _table(shape.table, look)
            if table:
                out.append(Element(ElementKind.TABLE, table, page=page))
        elif shape.has_text_frame:
            _text_frame(shape, page, out, body=kind in _BODIES, look=look)
        elif shape_type == 13:  # MSO_SHAPE_TYPE.PICTURE
            alt = " ".join((shape._element._nvXxPr.cNvPr.get("descr") or "").split())
            if alt:
                out.append(Element(ElementKind.IMAGE, alt, page=page, attributes={"alt": True}))
            if pictures is not None:
                try:
                    blob, name = shape.image.blob, shape.image.filename or "picture"
                except Exception:  # a linked picture, or one whose part is missing
                    blob = None
                if blob is not None:
                    out.extend(pictures.read(blob, name, page))


def _slide(slide: Any, page: int, look: SlideLook, pictures: PictureReader | None = None) -> list[Element]:
    title_shape = None
    title = ""
    for shape in slide.shapes:
        if _placeholder_type(shape) in _TITLES and shape.has_text_frame:
            title_shape = shape
            if not (hidden_flag(shape) or off_slide(shape, look)):
                under = shape_fill(shape, look.background, look.theme)
                title = " ".join(look.paragraph_text(p, under) for p in shape.text_frame.paragraphs).strip()
            else:
                look.hidden += 1
            break
    out = [
        Element(
            ElementKind.HEADING,
            title or f"Slide {page}",
            level=1,
            page=page,
            attributes={"slide": page} if title else {"slide": page, "untitled": True},
        )
    ]
    _shapes(slide.shapes, page, out, title_shape, look, pictures=pictures)
    if slide.has_notes_slide:
        frame = slide.notes_slide.notes_text_frame
        notes = "\n".join(look.paragraph_text(p, WHITE) for p in frame.paragraphs) if frame is not None else ""
        notes = "\n".join(line for line in notes.split("\n") if line)
        if notes:
            out.append(Element(ElementKind.PARAGRAPH, f"Notes: {notes}", page=page, attributes={"notes": True}))
    return out


def parse_pptx(document_id: str, data: bytes, *, source: str | None, options: ParseOptions) -> Document:
    """Parse PPTX bytes into a :class:`Document` (see the module docstring for the rules)."""
    archive = open_package(data, options, kind="PPTX", main_part="ppt/presentation.xml", noun="presentation")
    pptx = require("pptx", "office", "PPTX parsing")
    elements: list[Element] = []
    hidden: list[int] = []
    dropped = 0
    with library_errors("PPTX"):
        presentation = pptx.Presentation(io.BytesIO(data))
        count = len(presentation.slides)
        if count > options.max_slides:
            raise LimitExceeded(f"the presentation has {count:,} slides, over max_slides ({options.max_slides:,})")
        pictures = PictureReader(options) if options.ocr else None
        for page, slide in enumerate(presentation.slides, start=1):
            if slide._element.get("show") in ("0", "false"):
                hidden.append(page)
                continue
            look = SlideLook.of(slide, presentation.slide_width or 0, presentation.slide_height or 0)
            elements.extend(_slide(slide, page, look, pictures))
            dropped += look.hidden
    meta = core_properties(archive)
    meta["slides"] = count
    first = next((e.text for e in elements if e.kind is ElementKind.HEADING and not e.attributes.get("untitled")), None)
    warnings: tuple[str, ...] = (f"hidden slide(s) skipped: {', '.join(map(str, hidden))}",) if hidden else ()
    if dropped:
        warnings += (f"{dropped} hidden shape(s) or run(s) dropped",)
    if hidden or dropped:
        meta["hidden_elements"] = len(hidden) + dropped
    if pictures is not None:
        warnings += tuple(pictures.warnings)
        read = {e.attributes["image"] for e in elements if e.attributes.get("ocr") is True and "image" in e.attributes}
        if read:
            meta["ocr_pictures"] = len(read)
    return Document(
        id=document_id,
        elements=tuple(elements),
        title=meta.get("title") or first,
        source=source,
        mime_type=MIME,
        metadata=meta,
        warnings=warnings,
    )
