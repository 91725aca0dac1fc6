"""reStructuredText (Sphinx-style docs): sections as headings with levels, paragraphs, lists, code blocks,
tables (grid, simple, ``list-table``), field and definition lists, admonitions.

Parsed with docutils' own reStructuredText parser, without its transforms and with file inclusion and raw
pass-through off (a hostile ``.. include:: /etc/passwd`` reads nothing). Sphinx's roles and directives are
unknown to plain docutils: a role (``:doc:`Configure paths <configure-paths>```) reads as its title, and an
unknown directive's body (``versionadded``, ``tab`` …) is parsed as reStructuredText in its place, while
diagram and build directives (``mermaid``, ``toctree``, ``automodule`` …) hold no prose and are dropped.
Text docutils cannot parse at all falls back to the plain-text reading, with a warning.
"""

from __future__ import annotations

import io
import re
import textwrap
from typing import Any, Final

from ragwright._deps import require
from ragwright.model.document import Document, Element, ElementKind

VERSION = "rst/1"
#: Directives whose body is a diagram, a build instruction, a table of contents or an API import, not prose.
DROPPED_DIRECTIVES: Final = frozenset(
    {
        "contents",
        "currentmodule",
        "module",
        "mermaid",
        "graphviz",
        "digraph",
        "plantuml",
        "toctree",
        "literalinclude",
        "autosummary",
        "automodule",
        "autoclass",
        "autofunction",
        "automethod",
        "autoattribute",
        "autodata",
        "autoexception",
        "raw",
        "include",
        "image",
        "figure",
        "only",
        "ifconfig",
        "tabularcolumns",
        "highlight",
        "index",
        "meta",
    }
)
_ROLE: Final = re.compile(r":(?:[\w.+-]+:)+`(?P<body>[^`]*)`")
_TARGET: Final = re.compile(r"\s*<[^<>]*>\s*$")
_DIRECTIVE: Final = re.compile(r"\A\s*\.\.\s+(?P<name>[\w:.+-]+)::[^\n]*\n?(?P<rest>.*)\Z", re.DOTALL)
_OPTION: Final = re.compile(r"\A\s*:[\w-]+:.*$")
_MAX_DEPTH: Final = 40  # nesting past this (hostile input) is read as text


def role_title(body: str) -> str:
    """What a role's text reads as: ``Title <target>`` → ``Title``; ``~pkg.Name`` → ``Name``; ``!HOME`` →
    ``HOME`` (reStructuredText's and MyST's roles alike)."""
    titled = _TARGET.sub("", body)
    if titled and titled != body:
        return titled.strip()
    body = body.lstrip("!")
    return body.lstrip("~").rsplit(".", 1)[-1] if body.startswith("~") else body


def _role_text(raw: str) -> str:
    """``:doc:`Title <target>``` → ``Title``; ``:class:`~pkg.Name``` → ``Name``; ``:envvar:`HOME``` → ``HOME``."""
    return _ROLE.sub(lambda match: role_title(match.group("body")), raw)


def _text(node: Any) -> str:
    """The inline text of *node*: a Sphinx role read as its title, system messages left out."""
    from docutils import nodes

    if isinstance(node, nodes.Text):
        return str(node)
    if isinstance(node, nodes.system_message):
        return ""
    if isinstance(node, nodes.problematic):
        return _role_text(node.astext())
    return "".join(_text(child) for child in node.children)


def _flat(node: Any) -> str:
    return " ".join(_text(node).split())


def _table(node: Any) -> str:
    """A docutils table as a Markdown table (header rows first, then a rule), as the Markdown parser writes."""
    from docutils import nodes

    lines: list[str] = []
    for group in node.findall(nodes.tgroup):
        head = [row for part in group.children if isinstance(part, nodes.thead) for row in part.children]
        body = [row for part in group.children if isinstance(part, nodes.tbody) for row in part.children]
        for n, row in enumerate([*head, *body]):
            cells = [_flat(entry).replace("|", "\\|") for entry in row.children if isinstance(entry, nodes.entry)]
            lines.append("| " + " | ".join(cells) + " |")
            if head and n == len(head) - 1:
                lines.append("|" + "|".join(" --- " for _ in cells) + "|")
        break  # one tgroup per table in practice
    return "\n".join(lines)


class _Reader:
    """Walks a doctree into elements."""

    def __init__(self, parse: Any) -> None:
        self.parse = parse
        self.elements: list[Element] = []

    def block(self, node: Any, section: int, items: int, depth: int = 0) -> None:
        if depth > _MAX_DEPTH:
            text = _flat(node)
            if text:
                self.elements.append(Element(ElementKind.PARAGRAPH, text))
            return
        for child in node.children:
            self.one(child, section, items, depth + 1)

    def one(self, node: Any, section: int, items: int, depth: int) -> None:
        from docutils import nodes

        add = self.elements.append
        if isinstance(node, nodes.section):
            title = next((c for c in node.children if isinstance(c, nodes.title)), None)
            if title is not None and _flat(title):
                add(Element(ElementKind.HEADING, _flat(title), level=section + 1))
            self.block(node, section + 1, items, depth)
        elif isinstance(node, nodes.title | nodes.comment | nodes.target | nodes.substitution_definition):
            return
        elif isinstance(node, nodes.paragraph | nodes.line_block | nodes.rubric | nodes.caption):
            text = _flat(node)
            if text:
                kind = ElementKind.LIST_ITEM if items else ElementKind.PARAGRAPH
                add(Element(kind, text, level=items or None))
        elif isinstance(node, nodes.literal_block | nodes.doctest_block):
            code = node.astext().rstrip("\n")
            if code.strip():
                lang = next((c for c in node.get("classes", []) if c != "code"), None)
                add(Element(ElementKind.CODE, code, attributes={"language": lang} if lang else {}))
        elif isinstance(node, nodes.bullet_list | nodes.enumerated_list):
            self.block(node, section, items + 1, depth)
        elif isinstance(node, nodes.table):
            table = _table(node)
            if table:
                add(Element(ElementKind.TABLE, table))
        elif isinstance(node, nodes.definition_list_item | nodes.field):
            head = next((c for c in node.children if isinstance(c, nodes.term | nodes.field_name)), None)
            body = next((c for c in node.children if isinstance(c, nodes.definition | nodes.field_body)), None)
            first = body.children[0] if body is not None and body.children else None
            text = _flat(first) if isinstance(first, nodes.paragraph) else ""
            joined = f"{_flat(head)}: {text}".strip(": ") if head is not None else text
            if joined:
                kind = ElementKind.LIST_ITEM if items else ElementKind.PARAGRAPH
                add(Element(kind, joined, level=items or None))
            if body is not None:
                for rest in body.children[1 if text else 0 :]:
                    self.one(rest, section, items, depth + 1)
        elif isinstance(node, nodes.system_message):
            self.unknown_directive(node, section, items, depth)
        elif isinstance(node, nodes.image | nodes.transition | nodes.raw | nodes.pending):
            return
        elif isinstance(node, nodes.Element):  # lists, admonitions, block quotes, containers, topics …
            self.block(node, section, items, depth)

    def unknown_directive(self, node: Any, section: int, items: int, depth: int) -> None:
        """A Sphinx directive docutils does not know: its body, read as reStructuredText, in its place."""
        from docutils import nodes

        if node.get("type") != "ERROR":
            return
        source = next((c.astext() for c in node.children if isinstance(c, nodes.literal_block)), "")
        match = _DIRECTIVE.match(source)
        if match is None or match.group("name").split(":")[-1] in DROPPED_DIRECTIVES:
            return
        lines = match.group("rest").split("\n")
        while lines and (not lines[0].strip() or _OPTION.match(lines[0])):
            lines.pop(0)
        body = textwrap.dedent("\n".join(lines)).strip("\n")
        if body:
            inner = self.parse(body)
            self.block(inner, section, items, depth)


def parse_rst(document_id: str, text: str, *, source: str | None = None) -> Document:
    """Parse reStructuredText into a Document (see the module docstring)."""
    require("docutils", "rst", "reStructuredText parsing")
    from docutils import frontend, utils
    from docutils.parsers.rst import Parser

    parser = Parser()
    settings = frontend.get_default_settings(Parser)
    settings.report_level = 5  # nothing printed; errors stay in the tree, where unknown directives are read
    settings.halt_level = 5
    settings.warning_stream = io.StringIO()
    settings.file_insertion_enabled = False
    settings.raw_enabled = False

    def parse(body: str) -> Any:
        doc = utils.new_document(source or document_id, settings)
        parser.parse(body, doc)
        return doc

    text = text.replace("\r\n", "\n").replace("\r", "\n")
    reader = _Reader(parse)
    try:
        reader.block(parse(text), 0, 0)
    except Exception as exc:
        from ragwright.parse.text import parse_text

        doc = parse_text(document_id, text, source=source)
        reason = f"reStructuredText not parsed ({type(exc).__name__}: {exc}); read as plain text"
        return Document(
            id=doc.id,
            elements=doc.elements,
            source=source,
            mime_type="text/x-rst",
            warnings=(reason,),
        )
    title = next((e.text for e in reader.elements if e.kind is ElementKind.HEADING and e.level == 1), None)
    return Document(id=document_id, elements=tuple(reader.elements), title=title, source=source, mime_type="text/x-rst")


def parse_rst_bytes(
    document_id: str, data: bytes, *, source: str | None, options: object = None, name_hint: str = ""
) -> Document:
    """The registry entry point: decode, then :func:`parse_rst`."""
    from ragwright.parse.detect import text_or_refuse

    return parse_rst(document_id, text_or_refuse(data), source=source)
