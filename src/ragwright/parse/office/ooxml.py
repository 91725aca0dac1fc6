"""Guards and helpers shared by the OOXML parsers (DOCX, XLSX, PPTX).

:func:`open_package` is the one door every OOXML parser goes through, before any third-party
library sees the bytes:

1. an OLE/CFB container (``D0 CF 11 E0 …``) is either encrypted OOXML (an ``EncryptionInfo`` /
   ``EncryptedPackage`` stream: ``ParseError("encrypted: …")``) or a legacy binary Office file;
2. :func:`~ragwright.parse.safexml.check_zip` checks the declared sizes (zip bombs);
3. the package must hold its main part (``word/document.xml`` …), else ``"not a DOCX: …"``;
4. every XML member is scanned up to its root element and refused when it declares a DTD
   (``<!DOCTYPE``, the only place ``<!ENTITY`` may live), so billion-laughs and XXE payloads never
   reach python-docx, openpyxl or python-pptx, whatever XML parser they use.

It also reads the core properties (``docProps/core.xml``) into the metadata contract, renders Markdown
tables, and pre-checks workbooks (:func:`check_workbook_limits`) from their raw XML.
"""

from __future__ import annotations

import codecs
import io
import posixpath
import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Final

from ragwright._deps import require
from ragwright.errors import LimitExceeded, ParseError, RagwrightError
from ragwright.parse.options import ParseOptions
from ragwright.parse.safexml import check_zip, parse_xml

CFB_MAGIC: Final = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: How far into a member the prolog (XML declaration, comments, PIs, DOCTYPE) may reach.
MAX_PROLOG_BYTES: Final = 1024 * 1024
_CHUNK: Final = 16 * 1024
_CORE_NS: Final = {
    "cp": "http://schemas.openxmlformats.org/package/2006/metadata/core-properties",
    "dc": "http://purl.org/dc/elements/1.1/",
    "dcterms": "http://purl.org/dc/terms/",
}
#: Merged ranges materialise one object per cell in openpyxl: cap their total area per workbook.
MAX_MERGED_CELLS: Final = 1_000_000
_MAIN: Final = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_RELS: Final = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_ROW_TAG: Final = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?row[\s/>]")
_MERGE_TAG: Final = re.compile(rb"<(?:[\w.-]+:)?mergeCell\s[^>]*?ref=\"\$?([A-Z]+)\$?(\d+)(?::\$?([A-Z]+)\$?(\d+))?\"")


def _cfb_streams(data: bytes) -> set[str]:
    olefile = require("olefile", "office", "detecting encrypted Office files")
    try:
        ole = olefile.OleFileIO(io.BytesIO(data))
        try:
            return {"/".join(entry) for entry in ole.listdir(streams=True, storages=True)}
        finally:
            ole.close()
    except Exception:  # a damaged container: no streams we can name
        return set()


def _article(kind: str) -> str:
    return f"an {kind}" if kind[:1] in "AEIOX" else f"a {kind}"


def refuse_cfb(data: bytes, kind: str, noun: str) -> None:
    """Raise for an OLE/CFB container: encrypted OOXML, or a legacy binary Office file."""
    if not data.startswith(CFB_MAGIC):
        return
    streams = _cfb_streams(data)
    if {"EncryptionInfo", "EncryptedPackage"} & streams:
        raise ParseError(f"encrypted: the {noun} is password-protected (an encrypted OLE container, not a zip)")
    raise ParseError(f"not {_article(kind)}: a legacy binary Office (OLE/CFB) file, not an OOXML package")


def _prolog_declares_dtd(stream: Any) -> bool:
    """Read a member's prolog up to its root element; True when it declares a DTD.

    Raises :class:`ParseError` when the prolog is longer than :data:`MAX_PROLOG_BYTES` (a way to hide
    a DOCTYPE past a naive scan window).
    """
    head = stream.read(4)
    encoding = "utf-8"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    elif head[:2] in (b"<\x00", b"\x00<"):
        encoding = "utf-16-le" if head[:1] == b"<" else "utf-16-be"
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    text = decoder.decode(head).lstrip("\ufeff")
    read = len(head)
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        rest = text[pos:]
        if rest.startswith("<?") and "?>" in rest:
            pos += rest.index("?>") + 2
            continue
        if rest.startswith("<!--") and "-->" in rest[4:]:
            pos += rest.index("-->", 4) + 3
            continue
        if rest.startswith("<!") and len(rest) >= 4 and not rest.startswith("<!--"):
            return True  # a markup declaration before the root can only be a DOCTYPE
        if rest[:1] == "<" and len(rest) >= 2 and rest[1] not in "?!":
            return False  # the root element: no DTD can follow
        if rest and rest[0] != "<":
            return False  # not XML at all (binary media): nothing to refuse
        chunk = stream.read(_CHUNK)
        if not chunk:
            return rest.startswith("<!") and not rest.startswith("<!--")
        read += len(chunk)
        if read > MAX_PROLOG_BYTES:
            raise ParseError(f"unsafe XML refused: a prolog longer than {MAX_PROLOG_BYTES:,} bytes")
        text = text[pos:] + decoder.decode(chunk)
        pos = 0


def refuse_dtds(archive: zipfile.ZipFile) -> None:
    """Refuse the package when any member declares a DTD (entity expansion, XXE)."""
    for info in archive.infolist():
        if info.is_dir() or info.file_size == 0:
            continue
        try:
            with archive.open(info) as stream:
                unsafe = _prolog_declares_dtd(stream)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError, EOFError) as exc:
            raise ParseError(f"corrupt: member {info.filename!r} cannot be read ({exc})") from exc
        except RuntimeError as exc:  # an encrypted zip member
            raise ParseError(f"encrypted: member {info.filename!r} is password-protected") from exc
        if unsafe:
            raise ParseError(
                f"unsafe XML refused: member {info.filename!r} declares a DTD (<!DOCTYPE>/<!ENTITY>); "
                "entity expansion and external entities are never processed"
            )


def open_package(data: bytes, options: ParseOptions, *, kind: str, main_part: str, noun: str) -> zipfile.ZipFile:
    """Check *data* as an OOXML package of *kind* and return the open zip (see the module docstring)."""
    if len(data) > options.max_file_bytes:
        raise LimitExceeded(f"the file has {len(data):,} bytes, over max_file_bytes ({options.max_file_bytes:,})")
    refuse_cfb(data, kind, noun)
    if not data.startswith(b"PK"):
        raise ParseError(f"not {_article(kind)}: the content is not a zip package")
    archive = check_zip(data, options)
    names = set(archive.namelist())
    if main_part not in names:
        raise ParseError(f"not {_article(kind)}: the package has no {main_part}")
    refuse_dtds(archive)
    return archive


@contextmanager
def library_errors(kind: str) -> Iterator[None]:
    """Turn a third-party library's failure into ``ParseError("corrupt: …")``; ours pass through."""
    try:
        yield
    except RagwrightError:
        raise
    except MemoryError:
        raise
    except zipfile.BadZipFile as exc:
        raise ParseError(f"corrupt: the {kind} package is damaged ({exc})") from exc
    except Exception as exc:  # the libraries raise many types (KeyError, lxml errors, their own OpcError …)
        raise ParseError(f"corrupt: the {kind} could not be read ({type(exc).__name__}: {exc})") from exc


def core_properties(archive: zipfile.ZipFile) -> dict[str, Any]:
    """``docProps/core.xml`` as metadata: title, author, created_at, updated_at, language, …

    Dates stay the ISO-8601 strings the package holds (W3CDTF). Missing or unreadable properties
    give an empty mapping: metadata is never a reason to fail a document.
    """
    try:
        raw = archive.read("docProps/core.xml")
    except KeyError:
        return {}
    try:
        root = parse_xml(raw)
    except ParseError:
        return {}
    fields = {
        "title": "dc:title",
        "author": "dc:creator",
        "subject": "dc:subject",
        "description": "dc:description",
        "keywords": "cp:keywords",
        "last_modified_by": "cp:lastModifiedBy",
        "language": "dc:language",
        "created_at": "dcterms:created",
        "updated_at": "dcterms:modified",
    }
    meta: dict[str, Any] = {}
    for key, path in fields.items():
        node = root.find(path, _CORE_NS)
        value = (node.text or "").strip() if node is not None else ""
        if value:
            meta[key] = iso_datetime(value) if key.endswith("_at") else value
    return meta


def iso_datetime(value: str) -> str:
    """A W3CDTF date as ISO-8601 (``2024-09-26T08:01:00Z`` → ``2024-09-26T08:01:00+00:00``)."""
    try:
        return datetime.fromisoformat(value).isoformat()
    except ValueError:
        return value


def md_cell(text: str) -> str:
    """A table cell for Markdown: newlines flattened, pipes escaped, whitespace collapsed."""
    return " ".join(text.split()).replace("|", "\\|")


def markdown_table(rows: list[list[str]]) -> str:
    """Rows as a Markdown table: the first row is the header; short rows are padded."""
    width = max((len(r) for r in rows), default=0)
    if width == 0:
        return ""
    lines: list[str] = []
    for n, row in enumerate(rows):
        cells = [md_cell(c) for c in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if n == 0:
            lines.append("|" + "|".join(" --- " for _ in range(width)) + "|")
    return "\n".join(lines)


def _col_index(letters: bytes) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ch - 64
    return n


def _worksheet_parts(archive: zipfile.ZipFile) -> dict[str, str]:
    """Sheet name → worksheet part path, for every sheet the workbook lists; refuses too many sheets."""
    book = parse_xml(archive.read("xl/workbook.xml"))
    targets: dict[str, str] = {}
    try:
        for rel in parse_xml(archive.read("xl/_rels/workbook.xml.rels")).iter(_RELS + "Relationship"):
            target = rel.get("Target", "")
            path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(f"xl/{target}")
            targets[rel.get("Id", "")] = path
    except KeyError:
        pass
    rid = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
    return {s.get("name", ""): targets.get(s.get(rid, ""), "") for s in book.iter(_MAIN + "sheet")}


def _count_rows_and_merges(archive: zipfile.ZipFile, part: str) -> tuple[int, int]:
    """``<row>`` elements and merged-cell area of one worksheet part, streamed from the raw XML."""
    rows = merged = 0
    carry = b""
    with archive.open(part) as stream:
        while True:
            chunk = stream.read(1 << 20)
            buf = carry + chunk
            cut = buf.rfind(b"<") if chunk else len(buf)
            body, carry = buf[:cut], buf[cut:]
            rows += len(_ROW_TAG.findall(body))
            for m in _MERGE_TAG.finditer(body):
                c0, r0 = _col_index(m.group(1)), int(m.group(2))
                c1, r1 = (_col_index(m.group(3)), int(m.group(4))) if m.group(3) else (c0, r0)
                merged += (abs(c1 - c0) + 1) * (abs(r1 - r0) + 1)
            if not chunk:
                return rows, merged


def check_workbook_limits(archive: zipfile.ZipFile, options: ParseOptions) -> None:
    """Refuse workbooks over ``max_sheets``/``max_rows``/:data:`MAX_MERGED_CELLS` before loading."""
    parts = _worksheet_parts(archive)
    if len(parts) > options.max_sheets:
        raise LimitExceeded(f"the workbook has {len(parts):,} sheets, over max_sheets ({options.max_sheets:,})")
    names = set(archive.namelist())
    rows = merged = 0
    for part in parts.values():
        if part in names:
            r, m = _count_rows_and_merges(archive, part)
            rows, merged = rows + r, merged + m
    if rows > options.max_rows:
        raise LimitExceeded(f"the workbook has {rows:,} rows, over max_rows ({options.max_rows:,})")
    if merged > MAX_MERGED_CELLS:
        raise LimitExceeded(f"merged ranges cover {merged:,} cells, over the limit of {MAX_MERGED_CELLS:,}")
