"""HTML: main content only, structure kept, hidden content stripped and counted.

The page is parsed with lxml's HTML parser (no network, comments and processing instructions dropped).
Then, in this order:

1. **hidden content** is removed and counted — elements with the ``hidden`` attribute,
   ``aria-hidden="true"``, ``<input type=hidden>``, and elements that the page's CSS (``<style>`` rules,
   inline styles, presentational attributes) hides: ``display:none``, ``visibility:hidden``,
   ``opacity:0``, tiny fonts, ``scale(0)``, clipping (``.sr-only``), off-screen or negative ``z-index``
   positioning, transparent or white-on-white text (:mod:`~ragwright.parse.html.clean`). Hidden text
   is a prompt-injection vector; the count goes to ``Document.warnings`` and
   ``metadata["hidden_elements"]``;
2. **non-content** is removed: ``script``, ``style``, ``noscript``, ``template``, ``iframe``, media, and
   ``form`` (unless it wraps the page's main content, as ASP.NET pages do);
3. **main content** is located by trafilatura on that cleaned tree (it drops nav, header/footer, asides
   and other boilerplate itself; removing them beforehand skews its choice). Its output (a small XML
   vocabulary: ``head``, ``p``, ``list``/``item``, ``table``/``row``/``cell``, ``code``, ``quote``) is walked
   into typed elements. Code blocks get their verbatim text and ``language`` (``class="language-x"``)
   back from the original ``<pre>``. When trafilatura finds nothing (or ``main_content=False``), page
   chrome is removed — ``nav``, ``aside``, ``footer``, a ``header`` outside ``article``/``main``, landmark
   roles (navigation, banner, contentinfo …) — and the same walk runs over ``<main>``, ``[role=main]``,
   a single ``<article>``, or else ``<body>``.

Metadata: ``title``, ``language`` (``<html lang>``), ``canonical_url``, ``created_at`` (published) and
``updated_at`` (modified) as ISO-8601 from meta tags or JSON-LD (trafilatura's date as a fallback),
``author``, ``site_name``.
"""

from __future__ import annotations

import copy
import re
from typing import Any
from urllib.parse import urljoin

from ragwright._deps import require
from ragwright.errors import LimitExceeded, ParseError
from ragwright.model.document import Document, Element, ElementKind
from ragwright.parse.html.clean import strip_chrome, strip_hidden
from ragwright.parse.html.meta import iso_date, page_metadata
from ragwright.parse.options import ParseOptions

VERSION = "html/3"  # 3: "Label: | value" tables as labelled lines; a page whose headings trafilatura lost is walked

_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_LISTS = frozenset({"ul", "ol", "dl", "list", "menu"})
_ITEMS = frozenset({"li", "item", "dt", "dd"})
_QUOTES = frozenset({"blockquote", "quote"})
_BLOCKS = frozenset(
    {"p", "div", "section", "article", "main", "header", "body", "head", "pre", "table", "figure", "figcaption",
     "details", "summary", "address", "center", "fieldset", "hr", "hgroup", "search"}
) | _LISTS | _ITEMS | _QUOTES | frozenset(_HEADINGS)  # fmt: skip
_LANG_CLASS = re.compile(r"(?:^|\s)(?:language|lang|highlight-source|brush:?)-?([A-Za-z0-9_+#.-]+)")
_WS = re.compile(r"\s+")
_HSPACE = re.compile(r"[^\S\n]+")


# --------------------------------------------------------------------------------------------- parsing
def _encoding(data: bytes) -> str:
    """BOM, then strict UTF-8, then the ``<meta charset>`` declaration, then cp1252."""
    for bom, name in ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            return name
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        pass
    match = re.search(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", data[:4096], re.IGNORECASE)
    if match:
        name = match.group(1).decode("ascii", "replace").lower()
        try:
            "".encode(name)
            return "cp1252" if name in ("iso-8859-1", "latin-1", "us-ascii", "ascii") else name
        except LookupError:
            pass
    return "cp1252"


def _parse_tree(data: bytes | str) -> Any:
    """The lxml HTML root of *data* (bytes are decoded with :func:`_encoding`)."""
    lxml_html = require("lxml.html", "html", "HTML parsing")
    encoding = "utf-8" if isinstance(data, str) else _encoding(data)
    if encoding.startswith("utf-16") and isinstance(data, bytes):
        data, encoding = data.decode("utf-16", "replace"), "utf-8"
    raw = data.lstrip("\ufeff").encode("utf-8") if isinstance(data, str) else data.removeprefix(b"\xef\xbb\xbf")
    parser = lxml_html.HTMLParser(
        encoding=encoding, remove_comments=True, remove_pis=True, no_network=True, default_doctype=False
    )
    try:
        root = lxml_html.document_fromstring(raw, parser=parser)
    except Exception as exc:  # lxml raises ParserError / XMLSyntaxError / ValueError on unusable input
        raise ParseError(f"malformed HTML: {exc}") from exc
    if root is None:
        raise ParseError("malformed HTML: no document element")
    return root


# -------------------------------------------------------------------------------------- text and walk
def _inline(el: Any) -> str:
    """Text of an element subtree: whitespace collapsed, ``<br>`` as a newline, blocks on their own lines."""
    etree = require("lxml.etree", "html", "HTML parsing")
    parts: list[str] = []
    for event, node in etree.iterwalk(el, events=("start", "end")):
        if not isinstance(node.tag, str):
            if event == "end" and node is not el and node.tail:
                parts.append(_WS.sub(" ", node.tail))
            continue
        if event == "start":
            if node.tag in ("br", "lb") or node.tag in _BLOCKS or node.tag in ("cell", "td", "th", "tr", "row"):
                parts.append("\n" if node.tag not in ("cell", "td", "th") else " ")
            if node.text:
                parts.append(_WS.sub(" ", node.text))
        else:
            if node.tag in _BLOCKS:
                parts.append("\n")
            if node is not el and node.tail:
                parts.append(_WS.sub(" ", node.tail))
    return _clean("".join(parts))


def _clean(text: str) -> str:
    lines = (_HSPACE.sub(" ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def _verbatim(el: Any) -> str:
    """Preformatted text of an element: whitespace kept, ``<br>`` as a newline."""
    parts: list[str] = []
    for node in el.iter():
        if node.tag in ("br", "lb"):
            parts.append("\n")
        elif isinstance(node.tag, str) and node.text:
            parts.append(node.text)
        if node is not el and node.tail:
            parts.append(node.tail)
    return "\n".join(line.rstrip() for line in "".join(parts).strip("\n").split("\n")).replace("\xa0", " ")


def _code_language(el: Any) -> str | None:
    for node in (el, *el.iter("code")):
        for value in (node.get("data-lang"), node.get("data-language")):
            if value and value.strip():
                return str(value).strip().lower()
        match = _LANG_CLASS.search(node.get("class") or "")
        if match:
            return str(match.group(1)).lower()
    return None


def _code_map(root: Any) -> dict[str, tuple[str, str | None]]:
    """Each ``<pre>`` of the cleaned page: normalized text → (verbatim text, language)."""
    return {" ".join(_verbatim(pre).split()): (_verbatim(pre), _code_language(pre)) for pre in root.iter("pre")}


class _Walker:
    """Turns a block-structured tree (HTML or trafilatura's XML) into typed elements."""

    def __init__(self, *, traf: bool, codes: dict[str, tuple[str, str | None]]) -> None:
        self.traf = traf
        self.codes = codes
        self.out: list[Element] = []

    def _is_block(self, el: Any) -> bool:
        if el.tag in _BLOCKS or el.tag in ("row", "cell"):
            return True
        return el.tag == "code" and (self.traf or "\n" in _verbatim(el))

    def blocks(self, container: Any) -> None:
        buf = [_WS.sub(" ", container.text or "")]
        for child in container:
            if isinstance(child.tag, str) and self._is_block(child):
                self._paragraph(buf)
                buf = []
                self.block(child)
            elif isinstance(child.tag, str):
                buf.append(_inline(child) if child.tag not in ("br", "lb") else "\n")
            buf.append(_WS.sub(" ", child.tail or ""))
        self._paragraph(buf)

    def _paragraph(self, buf: list[str]) -> None:
        text = _clean("".join(buf))
        if text:
            self.out.append(Element(ElementKind.PARAGRAPH, text))

    def block(self, el: Any) -> None:
        tag = el.tag
        if tag in _HEADINGS or tag == "head":
            level = _HEADINGS.get(tag) or _HEADINGS.get(el.get("rend") or "", 2)
            text = _inline(el).replace("\n", " ")
            if text:
                self.out.append(Element(ElementKind.HEADING, text, level=level))
        elif tag == "p":
            self._paragraph([_inline(el)])
        elif tag in _LISTS:
            self.list(el, 1)
        elif tag in _ITEMS:
            self.item(el, 1, ordered=False)
        elif tag == "table":
            self.table(el)
        elif tag in ("pre", "code") or (tag == "quote" and " ".join(_verbatim(el).split()) in self.codes):
            self.code(el)
        elif tag in _QUOTES:
            inner = _Walker(traf=self.traf, codes=self.codes)
            inner.blocks(el)
            text = "\n\n".join(e.text for e in inner.out)
            if text:
                self.out.append(Element(ElementKind.QUOTE, text))
        elif tag != "hr":
            self.blocks(el)

    def list(self, el: Any, level: int) -> None:
        ordered = el.tag == "ol" or el.get("rend") == "ol"
        for child in el:
            if not isinstance(child.tag, str):
                continue
            if child.tag in _LISTS:
                self.list(child, level + 1)
            else:
                self.item(child, level, ordered=ordered)

    def item(self, el: Any, level: int, *, ordered: bool) -> None:
        parts = [_WS.sub(" ", el.text or "")]
        nested: list[Any] = []
        for child in el:
            if isinstance(child.tag, str) and (child.tag in _LISTS or child.tag in ("table", "pre")):
                nested.append(child)
            elif isinstance(child.tag, str):
                parts.append("\n" + _inline(child) + "\n" if child.tag in _BLOCKS else _inline(child))
            parts.append(_WS.sub(" ", child.tail or ""))
        text = _clean("".join(parts))
        if text:
            attrs = {"ordered": True} if ordered else {}
            self.out.append(Element(ElementKind.LIST_ITEM, text, level=level, attributes=attrs))
        for child in nested:
            if child.tag in _LISTS:
                self.list(child, level + 1)
            else:
                self.block(child)

    def code(self, el: Any) -> None:
        text = _verbatim(el)
        found = self.codes.get(" ".join(text.split()))
        language = _code_language(el)
        if found:
            text, language = found[0], language or found[1]
        if text.strip():
            attrs = {"language": language} if language else {}
            self.out.append(Element(ElementKind.CODE, text, attributes=attrs))

    def table(self, el: Any) -> None:
        if _is_layout(el):  # a table used for page layout holds prose, not data: walk its cells
            for cell in el.iter("td", "th", "cell"):
                if next(cell.iterancestors("table"), None) is el:
                    self.blocks(cell)
            return
        rows: list[list[str]] = []
        header_rows = 0
        for row in el.iter("tr", "row"):
            if next(row.iterancestors("table"), None) is not el:
                continue
            cells = [c for c in row if c.tag in ("td", "th", "cell")]
            texts: list[str] = []
            for cell in cells:
                texts.append(_inline(cell).replace("\n", " ").replace("|", "\\|"))
                span = cell.get("colspan") or "1"
                texts.extend([""] * (min(int(span), 50) - 1 if span.isdigit() and int(span) > 1 else 0))
            if not any(texts):
                continue
            is_head = row.getparent().tag == "thead" or all(c.tag == "th" or c.get("role") == "head" for c in cells)
            if is_head and len(rows) == header_rows:
                header_rows += 1
            rows.append(texts)
        width = max((len(r) for r in rows), default=0)
        rows = [r + [""] * (width - len(r)) for r in rows]
        keep = [c for c in range(width) if any(r[c] for r in rows)]
        rows = [[r[c] for c in keep] for r in rows]
        if not rows or not keep:
            return
        if len(keep) == 1 or len(rows) == 1:  # layout tables: a single row or column is prose
            for r in rows if len(keep) == 1 else [[" ".join(c for c in rows[0] if c)]]:
                self._paragraph([r[0]])
            return
        if _is_record(rows, header_rows):  # "Default: | DeflateBufferSize 8096" rows: one labelled value each
            for label, value in rows:
                self._paragraph([f"{label} {value}".replace("\\|", "|")])  # cells were escaped for a table
            return
        lines = ["| " + " | ".join(r) + " |" for r in rows]
        lines.insert(max(header_rows, 1), "|" + "|".join(" --- " for _ in keep) + "|")
        attrs: dict[str, Any] = {"rows": len(rows), "columns": len(keep)}
        caption = next((_inline(c) for c in el.iter("caption")), "")
        if caption:
            attrs["caption"] = caption
        self.out.append(Element(ElementKind.TABLE, "\n".join(lines), attributes=attrs))


def _is_record(rows: list[list[str]], header_rows: int) -> bool:
    """Whether a table is one record's fields, a label then its value on each row ("Description:",
    "Syntax:", "Default:" … down the left, as in a reference page's summary box): no header row, two
    columns, every left cell a label ending in ":"."""
    return (
        header_rows == 0
        and len(rows[0]) == 2
        and all(r[0].rstrip().endswith(":") and len(r[0].split()) <= 4 for r in rows)
    )


def _is_layout(table: Any) -> bool:
    """A table whose cells hold headings, lists, nested tables or long prose is layout, not data."""
    structural = ("h1", "h2", "h3", "h4", "h5", "h6", "head", "ul", "ol", "list", "table", "blockquote")
    for cell in table.iter("td", "th", "cell"):
        if next(cell.iter(*structural), None) is not None or sum(len(t) for t in cell.itertext()) > 1000:
            return True
    return False


def _fallback_root(root: Any) -> tuple[Any, str]:
    mains = list(root.iter("main")) or root.xpath("//*[@role='main']")
    if len(mains) == 1:
        return mains[0], "main"
    articles = list(root.iter("article"))
    if len(articles) == 1:
        return articles[0], "article"
    body = root.find("body")
    return (body if body is not None else root), "body"


def _headings(root: Any) -> int:
    return sum(1 for _ in root.iter("h1", "h2", "h3", "h4", "h5", "h6"))


def _unlink_headings(root: Any) -> None:
    """Headings keep their text, not their links; a permalink whose text is only a symbol ("¶" after a
    reference manual's or Sphinx's section title, "#", "§") goes with its text."""
    for heading in root.iter("h1", "h2", "h3", "h4", "h5", "h6"):
        for link in list(heading.iter("a")):
            if not re.search(r"\w", link.text_content() or ""):
                link.drop_tree()
            else:
                link.drop_tag()


def _trafilatura(root: Any) -> Any:
    """trafilatura's extraction of a copy of the cleaned tree (``None`` when it found nothing)."""
    require("lxml_html_clean", "html", "HTML cleaning used by trafilatura")
    traf = require("trafilatura", "html", "HTML main-content extraction")
    return traf.bare_extraction(
        copy.deepcopy(root),
        include_comments=False,
        include_tables=True,
        include_formatting=True,
        include_links=False,
        include_images=False,
        with_metadata=True,
        date_extraction_params={"extensive_search": False, "original_date": True},
    )


def html_elements(data: bytes | str, *, main_content: bool = True) -> tuple[list[Element], dict[str, Any], int]:
    """Elements, page metadata and the hidden-element count of an HTML page (or fragment)."""
    root = _parse_tree(data)
    meta = page_metadata(root, None)
    hidden = strip_hidden(root)
    # trafilatura judges boilerplate itself (and removes nav/header/footer/aside): it is given the page
    # without hidden and non-content elements only, since pre-removing page chrome skews its choice.
    strip_chrome(root, page_chrome=False)
    codes = _code_map(root)
    elements: list[Element] = []
    if main_content:
        result = _trafilatura(root)
        if result is not None and result.body is not None:
            walker = _Walker(traf=True, codes=codes)
            walker.blocks(result.body)
            elements = walker.out
            meta["extraction"] = "trafilatura"
            for key, value in (("title", result.title), ("created_at", iso_date(result.date))):
                if value:
                    meta.setdefault(key, value)
            author = (result.author or "").strip()
            if author and len(author) <= 60 and len(author.split()) <= 5:
                meta.setdefault("author", author)
    if elements and not any(e.kind is ElementKind.HEADING for e in elements) and _headings(root) >= 3:
        # trafilatura kept none of the page's headings (a reference manual's section titles, each
        # followed by a summary table, went so): its extraction lost the structure, so walk the page
        elements = []
    if not elements:
        strip_chrome(root, page_chrome=True)
        _unlink_headings(root)
        container, how = _fallback_root(root)
        walker = _Walker(traf=False, codes=codes)
        walker.blocks(container)
        elements = walker.out
        meta["extraction"] = how
    # The page's own <h1> when the <title> repeats it (titles carry site names; og:title is sometimes
    # the site's name), else og:title / JSON-LD headline, trafilatura's title, the <title>.
    page_title = meta.pop("page_title", None)
    h1 = next((e.text for e in elements if e.kind is ElementKind.HEADING and e.level == 1), None)
    if h1 and page_title and h1 in page_title:
        meta["title"] = h1
    if page_title:
        meta.setdefault("title", page_title)
    return elements, meta, hidden


def parse_html(
    document_id: str,
    data: bytes | str,
    *,
    source: str | None = None,
    options: ParseOptions | None = None,
    main_content: bool = True,
) -> Document:
    """Parse an HTML page into a Document (see the module docstring for what is kept and dropped).

    ``main_content=False`` keeps the whole (cleaned) body — used for HTML email bodies, which have
    no boilerplate for main-content extraction to remove.
    """
    options = options or ParseOptions()
    size = len(data.encode("utf-8") if isinstance(data, str) else data)
    if size > options.max_file_bytes:
        raise LimitExceeded(f"HTML of {size:,} bytes is over max_file_bytes ({options.max_file_bytes:,})")
    if not data.strip():
        raise ParseError("the HTML file is empty")
    try:
        elements, meta, hidden = html_elements(data, main_content=main_content)
    except RecursionError as exc:
        raise ParseError("HTML nested too deeply to parse") from exc
    if meta.get("canonical_url") and source and source.startswith(("http://", "https://")):
        meta["canonical_url"] = urljoin(source, meta["canonical_url"])
    if not elements:
        raise ParseError("no text could be extracted from the HTML page")
    meta["hidden_elements"] = hidden
    warnings = (f"stripped {hidden} hidden element{'s' if hidden != 1 else ''}",) if hidden else ()
    return Document(
        id=document_id,
        elements=tuple(elements),
        title=meta.get("title"),
        source=source,
        mime_type="text/html",
        metadata=meta,
        warnings=warnings,
    )
