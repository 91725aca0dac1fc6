"""DOCX: headings, lists, tables, footnotes, tracked changes and (optionally) comments.

python-docx opens the package (content types, relationships, parts); the body is walked directly in
its XML, in document order, because python-docx has no API for tracked changes, footnotes or
interleaving paragraphs with tables:

* headings come from the paragraph style's *display name* (``Heading 1``…``Heading 9``; ``Title`` →
  ``TITLE``), resolved through the styles part along the ``basedOn`` chain, falling back to the
  outline level (``w:outlineLvl``) of the paragraph or its styles — style ids are not reliable across
  locales and templates;
* list paragraphs (numbering ``w:numPr`` on the paragraph or its style, or a ``List …`` style) become
  ``LIST_ITEM`` with ``level = ilvl + 1``;
* tables become one Markdown ``TABLE`` element (first row as header, merged cells repeated);
* tracked changes are read as accepted: insertions and move destinations are kept, deletions
  (``w:delText``) and move sources (``w:moveFrom``) dropped — deletions come back with
  ``options.include_deleted`` (move sources never: their text already appears at the destination);
* footnotes and endnotes are kept: the body carries a ``[^n]`` marker where they are referenced and
  the notes follow at the end as paragraphs ``[^n]: text`` with attribute ``{"footnote": n}``
  (``{"endnote": n}``, marker ``[^en]``); headers and footers are dropped;
* comments are excluded unless ``options.include_comments``: then each follows the block that
  anchors it as a ``QUOTE`` with attributes ``author``, ``comment_id``, ``date`` and ``reply_to``;
* pictures are read by OCR where they sit (:mod:`~ragwright.parse.pictures`; paragraphs flagged ``ocr``
  with the picture's part name in ``image``), unless ``options.ocr`` is off or no engine is installed;
* runs a reader cannot see are dropped and counted (``metadata["hidden_elements"]``, one per stretch
  of consecutive hidden runs, and a warning): hidden (``w:vanish``, ``w:specVanish``, ``w:webHidden``),
  smaller than 2 pt, or coloured like their background — resolved through styles
  (:mod:`~ragwright.parse.office.docx_look`).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import Any, Final

from ragwright._deps import require
from ragwright.model.document import Document, Element, ElementKind
from ragwright.parse.office.docx_look import RunLook
from ragwright.parse.office.ooxml import core_properties, library_errors, markdown_table, open_package
from ragwright.parse.options import ParseOptions
from ragwright.parse.pictures import PictureReader, picture_part
from ragwright.parse.safexml import parse_xml

VERSION = "docx/4"
MIME: Final = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_W: Final = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_W14: Final = "{http://schemas.microsoft.com/office/word/2010/wordml}"
_W15: Final = "{http://schemas.microsoft.com/office/word/2012/wordml}"
_MC: Final = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_A: Final = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_V: Final = "{urn:schemas-microsoft-com:vml}"
_R: Final = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_HEADING_NAME: Final = re.compile(r"heading\s*([1-9])")
_SKIP: Final = frozenset(
    _W + t for t in ("pPr", "rPr", "instrText", "delInstrText", "fldData", "moveFrom", "tblPr", "sectPr")
) | {_MC + "Fallback"}


def _val(el: Any, child: str) -> str | None:
    """``w:val`` of the first *child* of *el* (a ``w:`` local name), or None."""
    if el is None:
        return None
    node = el.find(_W + child)
    return None if node is None else node.get(_W + "val")


@dataclass(frozen=True, slots=True)
class _Style:
    name: str
    based_on: str | None
    outline: int | None
    num: tuple[str, int] | None  # (numId, ilvl) from the style's own w:numPr


class _Styles:
    """Paragraph styles by id, with ``basedOn`` resolution (cycle-safe)."""

    def __init__(self, root: Any) -> None:
        self.by_id: dict[str, _Style] = {}
        self.default: str | None = None
        self.language: str | None = None
        if root is None:
            return
        for st in root.iter(_W + "style"):
            sid = st.get(_W + "styleId")
            if not sid or st.get(_W + "type", "paragraph") != "paragraph":
                continue
            ppr = st.find(_W + "pPr")
            outline = _val(ppr, "outlineLvl")
            numpr = None if ppr is None else ppr.find(_W + "numPr")
            num = None
            if numpr is not None and _val(numpr, "numId") not in (None, "0"):
                num = (str(_val(numpr, "numId")), int(_val(numpr, "ilvl") or 0))
            self.by_id[sid] = _Style(
                name=(_val(st, "name") or sid).strip().lower(),
                based_on=_val(st, "basedOn"),
                outline=int(outline) if outline and outline.isdigit() else None,
                num=num,
            )
            if st.get(_W + "default") in ("1", "true") and self.default is None:
                self.default = sid
        lang = root.find(f"{_W}docDefaults/{_W}rPrDefault/{_W}rPr/{_W}lang")
        if lang is not None and lang.get(_W + "val"):
            self.language = lang.get(_W + "val")

    def chain(self, style_id: str | None) -> list[_Style]:
        out: list[_Style] = []
        seen: set[str] = set()
        sid = style_id if style_id in self.by_id else self.default  # unknown ids fall back, as in Word
        while sid and sid not in seen and sid in self.by_id:
            seen.add(sid)
            out.append(self.by_id[sid])
            sid = self.by_id[sid].based_on
        return out


@dataclass
class _Ctx:
    """State of one parse: options, styles, notes and comments met so far."""

    options: ParseOptions
    styles: _Styles
    notes: dict[str, list[tuple[str, int]]] = field(default_factory=lambda: {"footnote": [], "endnote": []})
    comment_refs: list[str] = field(default_factory=list)
    hidden_runs: int = 0  # stretches of consecutive hidden runs
    look: RunLook | None = None
    pictures: PictureReader | None = None  # OCR of embedded pictures (parse.pictures)
    parts: Any = None  # the main part's related parts by relationship id (the pictures' bytes)


def _text(el: Any, ctx: _Ctx, out: list[str], *, deleted: bool = False) -> None:
    """Append the visible text under *el* to *out*, applying the tracked-change rules."""
    hiding = False  # inside a stretch of hidden runs
    for child in el:
        tag = child.tag
        if not isinstance(tag, str) or tag in _SKIP:
            continue
        if tag == _W + "r" and ctx.look is not None and ctx.look.hidden(child):
            ctx.hidden_runs += not hiding
            hiding = True
            continue
        if tag in (_W + "r", _W + "hyperlink", _W + "ins", _W + "moveTo", _W + "smartTag"):
            hiding = False
        if tag == _W + "t":
            out.append(child.text or "")
        elif tag == _W + "delText":
            if deleted:
                out.append(child.text or "")
        elif tag == _W + "del":
            if ctx.options.include_deleted:
                _text(child, ctx, out, deleted=True)
        elif tag == _W + "r":
            _text(child, ctx, out, deleted=deleted)
        elif tag in (_W + "tab", _W + "ptab"):
            out.append("\t")
        elif tag in (_W + "br", _W + "cr"):
            out.append("\n")
        elif tag == _W + "noBreakHyphen":
            out.append("-")
        elif tag in (_W + "footnoteReference", _W + "endnoteReference"):
            kind = "footnote" if tag == _W + "footnoteReference" else "endnote"
            refs = ctx.notes[kind]
            n = len(refs) + 1
            refs.append((child.get(_W + "id", ""), n))
            out.append(f"[^{n}]" if kind == "footnote" else f"[^e{n}]")
        elif tag == _W + "commentReference":
            ctx.comment_refs.append(child.get(_W + "id", ""))
        elif tag == _W + "p":  # a paragraph nested in a text box
            out.append("\n")
            _text(child, ctx, out, deleted=deleted)
        else:  # hyperlinks, w:ins, w:moveTo, fields, smart tags, content controls, drawings …
            _text(child, ctx, out, deleted=deleted)


def _clean(parts: list[str]) -> str:
    text = "".join(parts).replace("\t", " ")
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def _classify(p: Any, ctx: _Ctx) -> tuple[ElementKind, int | None]:
    """Kind and level of a paragraph from its style chain, outline level and numbering."""
    ppr = p.find(_W + "pPr")
    chain = ctx.styles.chain(_val(ppr, "pStyle"))
    for style in chain:
        if style.name == "title":
            return ElementKind.TITLE, None
        match = _HEADING_NAME.fullmatch(style.name)
        if match:
            return ElementKind.HEADING, int(match.group(1))
    outline = _val(ppr, "outlineLvl")
    level = (
        int(outline)
        if outline and outline.isdigit()
        else next((s.outline for s in chain if s.outline is not None), None)
    )
    if level is not None and 0 <= level <= 8:
        return ElementKind.HEADING, level + 1
    numpr = None if ppr is None else ppr.find(_W + "numPr")
    if numpr is not None:
        if _val(numpr, "numId") == "0":  # numbering explicitly removed
            return ElementKind.PARAGRAPH, None
        return ElementKind.LIST_ITEM, int(_val(numpr, "ilvl") or 0) + 1
    for style in chain:
        if style.num is not None:
            return ElementKind.LIST_ITEM, style.num[1] + 1
    if chain and chain[0].name.startswith("list"):
        return ElementKind.LIST_ITEM, 1
    if chain and chain[0].name in ("quote", "intense quote"):
        return ElementKind.QUOTE, None
    return ElementKind.PARAGRAPH, None


def _rows(container: Any) -> Any:
    """The table's own rows (also inside row-level content controls), not those of nested tables."""
    for child in container:
        if child.tag == _W + "tr":
            yield child
        elif child.tag in (_W + "sdt", _W + "sdtContent", _W + "customXml"):
            yield from _rows(child)


def _table(tbl: Any, ctx: _Ctx) -> str:
    """A ``w:tbl`` as Markdown: spans repeated across (gridSpan) and down (vMerge)."""
    rows: list[list[str]] = []
    above: dict[int, str] = {}
    for tr in _rows(tbl):
        trpr = tr.find(_W + "trPr")
        row: list[str] = [""] * int(_val(trpr, "gridBefore") or 0)
        for tc in tr.findall(_W + "tc"):
            tcpr = tc.find(_W + "tcPr")
            span = max(1, int(_val(tcpr, "gridSpan") or 1))
            vmerge = None if tcpr is None else tcpr.find(_W + "vMerge")
            col = len(row)
            if vmerge is not None and vmerge.get(_W + "val", "continue") == "continue":
                text = above.get(col, "")
            else:
                parts: list[str] = []
                for block in tc:
                    if block.tag in (_W + "p", _W + "tbl", _W + "sdt"):
                        parts.append(" ")
                        _text(block, ctx, parts)
                text = " ".join("".join(parts).split())
            for k in range(span):
                above[col + k] = text
                row.append(text)
        if any(cell for cell in row):
            rows.append(row)
    return markdown_table(rows)


def _blocks(container: Any, ctx: _Ctx, out: list[Element], comments: dict[str, Element]) -> None:
    """Walk block-level content in order: paragraphs, tables, content controls."""
    for child in container:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        before = len(ctx.comment_refs)
        if tag == _W + "p":
            parts: list[str] = []
            _text(child, ctx, parts)
            text = _clean(parts)
            if text:
                kind, level = _classify(child, ctx)
                out.append(Element(kind, text, level=level))
            if ctx.pictures is not None:
                out.extend(_picture_text(child, ctx))
        elif tag == _W + "tbl":
            table = _table(child, ctx)
            if table:
                out.append(Element(ElementKind.TABLE, table))
        elif tag == _W + "sdt":
            content = child.find(_W + "sdtContent")
            if content is not None:
                _blocks(content, ctx, out, comments)
        elif tag in (_W + "customXml", _W + "ins", _W + "moveTo", _W + "smartTag"):
            _blocks(child, ctx, out, comments)
        elif tag == _MC + "AlternateContent":
            choice = child.find(_MC + "Choice")
            if choice is not None:
                _blocks(choice, ctx, out, comments)
        for cid in ctx.comment_refs[before:]:
            if cid in comments:
                out.append(comments.pop(cid))


def _picture_text(p: Any, ctx: _Ctx) -> list[Element]:
    """What OCR reads in the pictures a paragraph holds (DrawingML ``a:blip``, legacy VML ``v:imagedata``)."""
    out: list[Element] = []
    for node in p.iter(_A + "blip", _V + "imagedata"):
        rid = node.get(_R + "embed") or node.get(_R + "id")
        part = ctx.parts.get(rid) if rid and ctx.parts is not None else None
        found = picture_part(part) if part is not None else None
        if found is not None and ctx.pictures is not None:
            out.extend(ctx.pictures.read(*found))
    return out


def _part_root(document: Any, reltype_suffix: str) -> Any:
    """The parsed XML (defusedxml) of the main part's related part of that type, or None."""
    for rel in document.part.rels.values():
        if not rel.is_external and rel.reltype.endswith(reltype_suffix):
            return parse_xml(rel.target_part.blob)
    return None


def _comments(document: Any, ctx: _Ctx) -> dict[str, Element]:
    """Comments by id as QUOTE elements (only built when asked for)."""
    root = _part_root(document, "/comments")
    if root is None:
        return {}
    parents: dict[str, str] = {}  # paraId → parent paraId (threaded replies)
    extended = _part_root(document, "/commentsExtended")
    if extended is not None:
        for ex in extended.iter(_W15 + "commentEx"):
            if ex.get(_W15 + "paraIdParent"):
                parents[ex.get(_W15 + "paraId", "")] = ex.get(_W15 + "paraIdParent", "")
    by_para: dict[str, str] = {}
    found: dict[str, tuple[str, dict[str, Any], str]] = {}
    for c in root.iter(_W + "comment"):
        cid = c.get(_W + "id", "")
        parts: list[str] = []
        _blocks_text(c, ctx, parts)
        text = _clean(parts)
        paras = c.findall(_W + "p")
        last_para = paras[-1].get(_W14 + "paraId", "") if paras else ""
        by_para[last_para] = cid
        attrs: dict[str, Any] = {"comment_id": cid, "author": c.get(_W + "author", "")}
        if c.get(_W + "date"):
            attrs["date"] = c.get(_W + "date")
        found[cid] = (text, attrs, last_para)
    out: dict[str, Element] = {}
    for cid, (text, attrs, para) in found.items():
        if para in parents and parents[para] in by_para:
            attrs["reply_to"] = by_para[parents[para]]
        if text:
            out[cid] = Element(ElementKind.QUOTE, text, attributes=attrs)
    return out


def _notes(document: Any, ctx: _Ctx, kind: str) -> list[Element]:
    """The referenced footnotes (or endnotes), in reference order."""
    refs = ctx.notes[kind]
    if not refs:
        return []
    root = _part_root(document, f"/{kind}s")
    if root is None:
        return []
    texts: dict[str, str] = {}
    for note in root.iter(_W + kind):
        parts: list[str] = []
        _blocks_text(note, ctx, parts)
        texts[note.get(_W + "id", "")] = _clean(parts)
    marker = "^" if kind == "footnote" else "^e"
    return [
        Element(ElementKind.PARAGRAPH, f"[{marker}{n}]: {texts[nid]}", attributes={kind: n})
        for nid, n in refs
        if texts.get(nid)
    ]


def _blocks_text(container: Any, ctx: _Ctx, parts: list[str]) -> None:
    for block in container:
        parts.append("\n")
        _text(block, ctx, parts)


def parse_docx(document_id: str, data: bytes, *, source: str | None, options: ParseOptions) -> Document:
    """Parse DOCX bytes into a :class:`Document` (see the module docstring for the rules)."""
    archive = open_package(data, options, kind="DOCX", main_part="word/document.xml", noun="document")
    docx = require("docx", "office", "DOCX parsing")
    with library_errors("DOCX"):
        document = docx.Document(io.BytesIO(data))
        ctx = _Ctx(options=options, styles=_Styles(document.styles.element))
        ctx.look = RunLook(document.styles.element, document.element)
        if options.ocr:
            ctx.pictures, ctx.parts = PictureReader(options), document.part.related_parts
        comments = _comments(document, ctx) if options.include_comments else {}
        elements: list[Element] = []
        _blocks(document.element.body, ctx, elements, comments)
        elements.extend(comments.values())  # comments not anchored in the body
        elements.extend(_notes(document, ctx, "footnote"))
        elements.extend(_notes(document, ctx, "endnote"))
    meta = core_properties(archive)
    if "language" not in meta and ctx.styles.language:
        meta["language"] = ctx.styles.language
    title = meta.get("title") or next(
        (e.text for e in elements if e.kind is ElementKind.TITLE or (e.kind is ElementKind.HEADING and e.level == 1)),
        None,
    )
    if ctx.hidden_runs:
        meta["hidden_elements"] = ctx.hidden_runs
    warnings: tuple[str, ...] = (f"{ctx.hidden_runs} hidden run(s) dropped",) if ctx.hidden_runs else ()
    if ctx.pictures is not None:
        warnings += tuple(ctx.pictures.warnings)
        pictures = {
            e.attributes["image"] for e in elements if e.attributes.get("ocr") is True and "image" in e.attributes
        }
        if pictures:
            meta["ocr_pictures"] = len(pictures)
    return Document(
        id=document_id,
        elements=tuple(elements),
        title=title,
        source=source,
        mime_type=MIME,
        metadata=meta,
        warnings=warnings,
    )
