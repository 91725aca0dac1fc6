"""Format detection by content: magic bytes and container inspection, never the extension alone.

* PDF by ``%PDF-`` (within the first KB, as readers accept leading junk);
* zip containers by their parts: ``word/document.xml`` → DOCX, ``xl/workbook.xml`` → XLSX,
  ``ppt/presentation.xml`` → PPTX, otherwise a plain zip (unsupported);
* OLE/CFB containers by their streams: ``EncryptionInfo`` → encrypted OOXML, ``__substg1.0_`` → MSG,
  ``Workbook``/``Book`` → legacy XLS, ``WordDocument`` → legacy DOC;
* images (PNG, JPEG, TIFF, WebP, BMP, GIF) by their signatures, read through OCR;
* RFC 822 email by its header block; HTML by its opening tags;
* text formats carry no magic: once the bytes are known to be text, the file name is a *hint* that
  separates Markdown, CSV and source code from plain text.
"""

from __future__ import annotations

import codecs
import io
import re
import zipfile
from typing import Final, Literal

Format = Literal[
    "pdf",
    "docx",
    "xlsx",
    "pptx",
    "zip",
    "encrypted_ooxml",
    "msg",
    "xls",
    "doc",
    "ole",
    "eml",
    "html",
    "markdown",
    "rst",
    "csv",
    "code",
    "text",
    "image",
    "binary",
]

OLE_MAGIC: Final = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_MARKDOWN_SUFFIXES: Final = (".md", ".markdown", ".mdown", ".mkd")
_RST_SUFFIXES: Final = (".rst", ".rest")
_CSV_SUFFIXES: Final = (".csv", ".tsv")
CODE_SUFFIXES: Final = {
    ".py": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".java": "java",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".sh": "shell",
    ".bash": "shell",
    ".sql": "sql",
    ".kt": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
    ".r": "r",
    ".jl": "julia",
}
_BOMS: Final = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_HEADER_LINE = re.compile(rb"^[A-Za-z][A-Za-z0-9-]{1,40}:[ \t]?\S")
_EMAIL_KEYS = (
    b"from:",
    b"to:",
    b"subject:",
    b"date:",
    b"message-id:",
    b"mime-version:",
    b"received:",
    b"return-path:",
    b"content-type:",
    b"delivered-to:",
)


#: Bytes that are text in Windows-1252 (cp1252): tab, newlines, form feed, printable ASCII, and every
#: byte from 0x80 up but the five cp1252 leaves undefined (0x80–0x9F hold its curly quotes, dashes, €, …).
_CP1252_TEXT: Final = (
    frozenset(b"\t\n\r\x0c")
    | frozenset(range(32, 127))
    | (frozenset(range(128, 256)) - frozenset(b"\x81\x8d\x8f\x90\x9d"))
)


def text_or_refuse(data: bytes) -> str:
    """:func:`decode_text`, or a :class:`~ragwright.errors.ParseError` when *data* is not text (the text
    parsers' entry points)."""
    from ragwright.errors import ParseError

    text = decode_text(data)
    if text is None:
        raise ParseError("the file is not decodable text")
    return text


def decode_text(data: bytes) -> str | None:
    """Decode bytes that are text (BOM-aware UTF-8/16, then UTF-8, then Windows-1252); ``None`` when
    they are not text.

    Text that is not UTF-8 is read as Windows-1252 (a superset of Latin-1's printable range, and what
    legacy Western files almost always are) when nearly every byte is a cp1252 text character.
    Statistical detectors guess cp1250 or cp720 for short cp1252 English, so none is used.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding)
            except UnicodeDecodeError:
                return None
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    sample = data[:8192]
    printable = sum(1 for b in sample if b in _CP1252_TEXT)  # legacy 8-bit text: almost every byte is text
    if sample and printable / len(sample) > 0.97:
        return data.decode("cp1252", errors="replace")
    return None


def _zip_format(data: bytes) -> Format:
    try:
        names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())  # reads the directory only
    except (zipfile.BadZipFile, ValueError, OSError):
        return "zip"
    if "word/document.xml" in names:
        return "docx"
    if "xl/workbook.xml" in names:
        return "xlsx"
    if "ppt/presentation.xml" in names:
        return "pptx"
    return "zip"


def _ole_format(data: bytes) -> Format:
    try:
        import olefile

        ole = olefile.OleFileIO(io.BytesIO(data))
        streams = {"/".join(e) for e in ole.listdir(streams=True, storages=True)}
    except Exception:  # a damaged container is still an OLE file
        return "ole"
    if "EncryptionInfo" in streams or "EncryptedPackage" in streams:
        return "encrypted_ooxml"
    if any("__substg1.0_" in s for s in streams):
        return "msg"
    if "Workbook" in streams or "Book" in streams:
        return "xls"
    if "WordDocument" in streams:
        return "doc"
    return "ole"


def _looks_like_email(data: bytes) -> bool:
    lines = data[:4096].replace(b"\r\n", b"\n").split(b"\n")
    headers, known = 0, 0
    for line in lines[:40]:
        if not line.strip():
            break
        if line[:1] in (b" ", b"\t"):
            continue  # folded header continuation
        if not _HEADER_LINE.match(line):
            return False
        headers += 1
        known += line.lower().startswith(_EMAIL_KEYS)
    return headers >= 2 and known >= 2


_IMAGE_MAGIC: Final = (
    b"\x89PNG\r\n\x1a\n",  # PNG
    b"\xff\xd8\xff",  # JPEG
    b"II*\x00",  # TIFF, little-endian
    b"MM\x00*",  # TIFF, big-endian
    b"GIF87a",
    b"GIF89a",
    b"BM",  # BMP (checked with its header size below)
)


def _is_image(data: bytes) -> bool:
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return True
    if data.startswith(b"BM"):  # BMP: the header size field is one of the known sizes
        return len(data) > 18 and int.from_bytes(data[14:18], "little") in (12, 40, 52, 56, 108, 124)
    return data.startswith(_IMAGE_MAGIC)


def detect(data: bytes, name_hint: str = "") -> Format:
    """The format of *data*; *name_hint* (a file name) only separates text formats."""
    if data.startswith(b"%PDF-") or b"%PDF-" in data[:1024]:
        return "pdf"
    if _is_image(data):
        return "image"
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        return _zip_format(data)
    if data.startswith(OLE_MAGIC):
        return _ole_format(data)
    head = data[:2048].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    markdown_hint = name_hint.lower().endswith(_MARKDOWN_SUFFIXES)
    if head.startswith((b"<!doctype html", b"<html")) or (
        not markdown_hint and b"<html" in head[:512] and b"<body" in data[:65536].lower()
    ):
        return "html"
    if _looks_like_email(data.lstrip(b"\xef\xbb\xbf")):
        return "eml"
    text = decode_text(data)
    if text is None:
        return "binary"
    name = name_hint.lower()
    if name.endswith(_MARKDOWN_SUFFIXES):
        return "markdown"
    if name.endswith(_RST_SUFFIXES):
        return "rst"
    if name.endswith(_CSV_SUFFIXES):
        return "csv"
    if any(name.endswith(suffix) for suffix in CODE_SUFFIXES):
        return "code"
    if name.endswith((".htm", ".html", ".xhtml")) and "<" in text[:4096]:
        return "html"
    return "text"
