"""Source code: one ``CODE`` element per top-level definition, so retrieval returns whole functions.

The language comes from the ``language`` argument or the file name's extension; it is recorded in each
element's ``attributes["language"]`` and in ``metadata["language"]``.

* **Python** is split with :mod:`ast`: the module docstring becomes a ``PARAGRAPH``; each top-level
  function and class a ``CODE`` element with ``symbol``, ``kind`` (``function``/``class``),
  ``start_line`` and ``end_line`` (decorators and the comment lines directly above included). A class
  longer than :data:`MAX_CLASS_LINES` is split into its header and one element per method
  (``symbol="Class.method"``, ``kind="method"``). Statements between definitions (imports, constants,
  the ``__main__`` block) form ``kind="statements"`` elements. A syntax error falls back to the block
  splitter below, with a warning.
* **Other languages** are split by a small scanner, not a grammar: a top-level block ends at a blank
  line when brackets are balanced (strings and comments skipped) and the next line starts in column 0.
  Each block's symbol and kind are read from its first lines with regular expressions (``function``,
  ``class``, ``struct``, ``interface``, ``enum``, ``trait``, ``impl``, SQL ``table``/``view``/…);
  adjacent blocks without a symbol are merged up to :data:`MAX_MERGED_LINES` lines.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from ragwright.errors import LimitExceeded, ParseError
from ragwright.model.document import Document, Element, ElementKind
from ragwright.parse.options import ParseOptions

VERSION = "code/1"
MAX_CLASS_LINES = 80
MAX_MERGED_LINES = 40

LANGUAGES: dict[str, str] = {
    "py": "python", "pyi": "python", "js": "javascript", "mjs": "javascript", "cjs": "javascript",
    "jsx": "javascript", "ts": "typescript", "tsx": "typescript", "java": "java", "go": "go", "rs": "rust",
    "c": "c", "h": "c", "cpp": "cpp", "cc": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp", "cs": "csharp",
    "rb": "ruby", "php": "php", "sh": "shell", "bash": "shell", "zsh": "shell", "sql": "sql", "kt": "kotlin",
    "kts": "kotlin", "swift": "swift", "scala": "scala", "r": "r", "jl": "julia", "lua": "lua", "pl": "perl",
}  # fmt: skip
_HASH_COMMENT = frozenset({"python", "ruby", "shell", "r", "julia", "perl"})
_SKIP_LINE = re.compile(r"^\s*(//|#(?!include|define|!)|/\*|\*|--|@|\[[A-Za-z])")
_SYMBOLS: tuple[tuple[re.Pattern[str], str | None], ...] = tuple(
    (re.compile(p, re.I if k == "sql" else 0), k)
    for p, k in (
        (r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?(FUNCTION|PROCEDURE|TABLE|VIEW|INDEX|TRIGGER|"
         r"TYPE|SCHEMA)\s+(?:IF\s+NOT\s+EXISTS\s+)?([\w.\"`\[\]]+)", "sql"),
        (r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)", "function"),
        (r"^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s*)?"
         r"(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=]+)?=>", "function"),
        (r"^\s*func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)", "function"),
        (r"^\s*(?:pub(?:\([\w:]+\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"\w+\"\s+)?fn\s+"
         r"([A-Za-z_]\w*)", "function"),
        (r"^\s*def\s+(?:self\.)?([A-Za-z_]\w*[?!=]?)", "function"),
        (r"^\s*(?:(?:public|private|protected|static|final|abstract|export|default|declare|sealed|partial|"
         r"internal|data|pub(?:\([\w:]+\))?)\s+)*(class|interface|struct|enum|trait|impl|module|namespace|"
         r"object|record|union|type)\b\s*(?:<[^>]*>)?\s*([A-Za-z_]\w*)", None),
        (r"^\s*(?:(?:public|private|protected|static|final|abstract|async|override|virtual|function)\s+)*"
         r"function\s+&?([A-Za-z_]\w*)", "function"),
        (r"^\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\s*\)\s*\{?\s*$", "function"),
        (r"^(?!\s*(?:if|for|while|switch|catch|return|else|do|try|using|lock|new|throw|sizeof)\b)"
         r"\s*[\w\*&:<>,\[\]~]+(?:\s+[\w\*&:<>,\[\]~]+)*[\s\*&]+([A-Za-z_~][\w:~]*)\s*\([^;{}]*\)\s*(?:const\s*)?(?:noexcept\s*)?"
         r"(?:throws\s+[\w., ]+)?\s*(?:->\s*[\w:<>&*]+\s*)?\{?\s*$", "function"),
    )
)  # fmt: skip


def language_for(name: str | None) -> str | None:
    """The language of a file name by its extension (``"src/app.ts"`` → ``"typescript"``), else ``None``."""
    if not name:
        return None
    suffix = PurePosixPath(name.replace("\\", "/")).suffix.lower().lstrip(".")
    return LANGUAGES.get(suffix)


def _decode(data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise ParseError("binary content, not source code (NUL bytes)")
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8", errors="replace")  # pragma: no cover - cp1252 rejects only 5 byte values


def _code(lines: list[str], start: int, end: int, language: str | None, **attrs: Any) -> Element:
    """A CODE element for 1-based lines ``start..end`` (inclusive)."""
    base: dict[str, Any] = {"language": language} if language else {}
    base.update({k: v for k, v in attrs.items() if v is not None}, start_line=start, end_line=end)
    return Element(ElementKind.CODE, "\n".join(lines[start - 1 : end]).rstrip(), attributes=base)


# ------------------------------------------------------------------------------------------- python
def _with_comments(lines: list[str], start: int, floor: int) -> int:
    """Move *start* up over the comment lines directly above it (not past *floor*)."""
    while start - 1 > floor and lines[start - 2].lstrip().startswith("#"):
        start -= 1
    return start


def _span(node: ast.stmt) -> tuple[int, int]:
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    return start, node.end_lineno or node.lineno


def _statements(lines: list[str], start: int, end: int, out: list[Element]) -> None:
    while start <= end and not lines[start - 1].strip():
        start += 1
    while end >= start and not lines[end - 1].strip():
        end -= 1
    if start <= end:
        out.append(_code(lines, start, end, "python", kind="statements"))


def _python(text: str, lines: list[str]) -> tuple[list[Element], list[str]]:
    tree = ast.parse(text)
    out: list[Element] = []
    symbols: list[str] = []
    doc = ast.get_docstring(tree, clean=True)
    done = 0  # last line consumed
    body = tree.body
    if doc and body and isinstance(body[0], ast.Expr):
        out.append(Element(ElementKind.PARAGRAPH, doc, attributes={"language": "python", "kind": "docstring"}))
        done = body[0].end_lineno or body[0].lineno
        body = body[1:]
    for node in body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        start, end = _span(node)
        start = _with_comments(lines, start, done)
        _statements(lines, done + 1, start - 1, out)
        kind = "class" if isinstance(node, ast.ClassDef) else "function"
        symbols.append(node.name)
        if isinstance(node, ast.ClassDef) and end - start + 1 > MAX_CLASS_LINES:
            _split_class(node, lines, start, end, out, symbols)
        else:
            out.append(_code(lines, start, end, "python", symbol=node.name, kind=kind))
        done = end
    _statements(lines, done + 1, len(lines), out)
    return out, symbols


def _split_class(
    node: ast.ClassDef, lines: list[str], start: int, end: int, out: list[Element], symbols: list[str]
) -> None:
    """A long class as its header (up to the first method) and one element per method."""
    methods = [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    first = _with_comments(lines, _span(methods[0])[0], start) if methods else end + 1
    out.append(_code(lines, start, first - 1, "python", symbol=node.name, kind="class"))
    for i, method in enumerate(methods):
        m_start = _with_comments(lines, _span(method)[0], start)
        nxt = _with_comments(lines, _span(methods[i + 1])[0], start) - 1 if i + 1 < len(methods) else end
        name = f"{node.name}.{method.name}"
        symbols.append(name)
        out.append(_code(lines, m_start, nxt, "python", symbol=name, kind="method", parent=node.name))


# ------------------------------------------------------------------------------------------- blocks
def _depths(lines: list[str], language: str | None) -> Iterable[int]:
    """Bracket depth after each line, skipping string literals and comments (a heuristic scanner)."""
    depth = 0
    in_block = False
    hash_comments = language in _HASH_COMMENT
    for line in lines:
        i, quote = 0, ""
        while i < len(line):
            ch = line[i]
            if in_block:
                if line.startswith("*/", i):
                    in_block, i = False, i + 1
            elif quote:
                if ch == "\\":
                    i += 1
                elif ch == quote:
                    quote = ""
            elif line.startswith("/*", i) and not hash_comments:
                in_block, i = True, i + 1
            elif (
                (line.startswith("//", i) and not hash_comments)
                or (ch == "#" and hash_comments)
                or (line.startswith("--", i) and language == "sql")
            ):
                break
            elif ch in "\"'`":
                quote = ch
            elif ch in "{([":
                depth += 1
            elif ch in "})]":
                depth = max(depth - 1, 0)
            i += 1
        yield depth + (1 if in_block else 0)


def _symbol(block: list[str]) -> tuple[str | None, str]:
    """(symbol, kind) read from the first meaningful lines of a block."""
    meaningful = [ln for ln in block if ln.strip() and not _SKIP_LINE.match(ln)]
    indent = len(meaningful[0]) - len(meaningful[0].lstrip()) if meaningful else 0
    meaningful = [ln for ln in meaningful if len(ln) - len(ln.lstrip()) == indent][:3]
    for line in meaningful:
        for pattern, kind in _SYMBOLS:
            match = pattern.match(line)
            if not match:
                continue
            if kind == "sql":
                return match.group(2).strip('"`[]'), match.group(1).lower()
            if kind is None:
                keyword = match.group(1)
                return match.group(2).strip(), "class" if keyword in ("class", "record", "object") else keyword
            return match.group(1), kind
    return None, "block"


def _blocks(lines: list[str], language: str | None) -> tuple[list[Element], list[str]]:
    spans: list[tuple[int, int]] = []
    start = None
    depths = list(_depths(lines, language))
    for n, line in enumerate(lines, 1):
        if line.strip():
            if start is None:
                start = n
            continue
        nxt = next((ln for ln in lines[n:] if ln.strip()), "")
        if start is not None and depths[n - 1] == 0 and not nxt[:1].isspace() and not nxt.startswith((")", "}", "]")):
            spans.append((start, n - 1))
            start = None
    if start is not None:
        end = len(lines)
        while not lines[end - 1].strip():
            end -= 1
        spans.append((start, end))
    out: list[Element] = []
    symbols: list[str] = []
    pending: tuple[int, int] | None = None
    for s, e in spans:
        symbol, kind = _symbol(lines[s - 1 : e])
        if symbol is None:
            if pending and e - pending[0] < MAX_MERGED_LINES:
                pending = (pending[0], e)
                continue
            if pending:
                out.append(_code(lines, *pending, language, kind="statements"))
            pending = (s, e)
            continue
        if pending:
            out.append(_code(lines, *pending, language, kind="statements"))
            pending = None
        symbols.append(symbol)
        out.append(_code(lines, s, e, language, symbol=symbol, kind=kind))
    if pending:
        out.append(_code(lines, *pending, language, kind="statements"))
    return out, symbols


def parse_code(
    document_id: str,
    data: bytes,
    *,
    source: str | None = None,
    options: ParseOptions | None = None,
    language: str | None = None,
    name_hint: str = "",
) -> Document:
    """Parse a source file into definition-sized ``CODE`` elements (see the module docstring)."""
    options = options or ParseOptions()
    if len(data) > options.max_file_bytes:
        raise LimitExceeded(f"source file of {len(data):,} bytes is over max_file_bytes ({options.max_file_bytes:,})")
    text = _decode(data).replace("\r\n", "\n").replace("\r", "\n").expandtabs(4)
    if not text.strip():
        raise ParseError("the source file is empty")
    language = (language or language_for(name_hint) or language_for(source) or "").lower() or None
    lines = text.split("\n")
    warnings: list[str] = []
    if language == "python":
        try:
            elements, symbols = _python(text, lines)
        except (SyntaxError, ValueError, RecursionError) as exc:  # ValueError: NUL bytes; deep nesting
            where = f" at line {exc.lineno}" if isinstance(exc, SyntaxError) and exc.lineno else ""
            reason = exc.msg if isinstance(exc, SyntaxError) else type(exc).__name__
            warnings.append(f"Python syntax error{where} ({reason}): split into blank-line blocks instead")
            elements, symbols = _blocks(lines, language)
    else:
        elements, symbols = _blocks(lines, language)
    name = name_hint or source or ""
    meta: dict[str, Any] = {"language": language, "lines": len(lines), "symbols": symbols or None}
    return Document(
        id=document_id,
        elements=tuple(elements),
        title=PurePosixPath(name.replace("\\", "/")).name or None,
        source=source,
        mime_type="text/x-source",
        metadata={k: v for k, v in meta.items() if v is not None},
        warnings=tuple(warnings),
    )
