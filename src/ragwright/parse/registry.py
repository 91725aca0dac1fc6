"""Format → parser, with safety limits and process isolation for binary formats.

:func:`parse_bytes` detects the format by content, refuses what no parser handles (with the reason),
and runs the format's parser — in the isolated worker (:mod:`ragwright.parse.limits`) for binary
formats unless ``ParseOptions.isolate`` is off. The libraries a format's parser needs are checked in
this process before the file goes to the worker (:func:`missing_dependency`), so a missing one is a
clear error naming the extra that brings it, never a crash of the worker.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
from typing import Any, Final

from ragwright.errors import LimitExceeded, MissingDependencyError, ParseError
from ragwright.model.document import Document
from ragwright.parse.detect import CODE_SUFFIXES, Format, decode_text, detect
from ragwright.parse.options import ParseOptions

# format → (module, function, version attribute is the module's VERSION)
_PARSERS: Final[dict[str, tuple[str, str]]] = {
    "markdown": ("ragwright.parse.markdown", "parse_markdown_bytes"),
    "rst": ("ragwright.parse.rst", "parse_rst_bytes"),
    "text": ("ragwright.parse.text", "parse_text_bytes"),
    "pdf": ("ragwright.parse.pdf.parser", "parse_pdf"),
    "docx": ("ragwright.parse.office.docx", "parse_docx"),
    "xlsx": ("ragwright.parse.office.xlsx", "parse_xlsx"),
    "csv": ("ragwright.parse.office.xlsx", "parse_csv"),
    "pptx": ("ragwright.parse.office.pptx", "parse_pptx"),
    "html": ("ragwright.parse.html.parser", "parse_html"),
    "eml": ("ragwright.parse.email", "parse_eml"),
    "msg": ("ragwright.parse.email", "parse_msg"),
    "code": ("ragwright.parse.code", "parse_code"),
    "image": ("ragwright.parse.image", "parse_image"),
}
_IN_PROCESS: Final = frozenset({"markdown", "rst", "text", "csv", "code"})
# format → the importable modules its parser needs: (module, the pip extra that brings it, purpose). The
# document parsers are base dependencies; their extras remain (listing the same packages), so
# ``pip install 'ragwright[office]'`` repairs an install that lacks them.
_NEEDS: Final[dict[str, tuple[tuple[str, str, str], ...]]] = {
    "pdf": (("pypdfium2", "pdf", "PDF parsing"),),
    "docx": (("docx", "office", "DOCX parsing"),),
    "xlsx": (("openpyxl", "office", "XLSX parsing"),),
    "pptx": (("pptx", "office", "PPTX parsing"),),
    "html": (
        ("lxml", "html", "HTML parsing"),
        ("lxml_html_clean", "html", "HTML cleaning used by trafilatura"),
        ("trafilatura", "html", "HTML main-content extraction"),
    ),
    "msg": (("extract_msg", "office", "Outlook .msg parsing"),),
    "rst": (("docutils", "rst", "reStructuredText parsing"),),
}  # images need OCR, an extra: parse_image says which when it is missing
_REFUSED: Final[dict[str, str]] = {
    "encrypted_ooxml": "encrypted: the Office document is password-protected",
    "zip": "unsupported format: a ZIP archive that is not a DOCX, XLSX or PPTX document",
    "xls": "unsupported format: legacy Excel 97-2003 (.xls); save it as .xlsx",
    "doc": "unsupported format: legacy Word 97-2003 (.doc); save it as .docx",
    "ole": "unsupported format: an OLE/CFB container that is not an Outlook message",
    "binary": "unsupported format: binary content that is not a known document type",
}


def _module(fmt: str) -> Any:
    module, _ = _PARSERS[fmt]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise ParseError(f"unsupported format: no {fmt} parser in this installation ({exc.name})") from exc


def missing_dependency(fmt: str) -> MissingDependencyError | None:
    """The error naming the first library the parser of *fmt* needs and this installation lacks (checked
    without importing it), or ``None``."""
    for module, extra, purpose in _NEEDS.get(fmt, ()):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return MissingDependencyError(module, extra, purpose)
    return None


def parser_version_for(data: bytes, name_hint: str = "") -> str:
    """The version of the parser that would handle *data* (recorded in the registry)."""
    fmt = detect(data, name_hint)
    if fmt not in _PARSERS:
        return f"{fmt}/none"
    try:
        module = _module(fmt)
    except ParseError:
        return f"{fmt}/none"
    return str(getattr(module, "CSV_VERSION" if fmt == "csv" else "VERSION"))


def _run(
    fmt: str, document_id: str, data: bytes, name_hint: str, source: str | None, options: ParseOptions
) -> Document:
    """Import and run the parser of *fmt* (module-level so the isolated worker can call it)."""
    module = _module(fmt)
    fn = getattr(module, _PARSERS[fmt][1])
    kwargs: dict[str, Any] = {"source": source, "options": options}
    if fmt == "code":
        kwargs["language"] = next(
            (lang for suf, lang in CODE_SUFFIXES.items() if name_hint.lower().endswith(suf)), None
        )
    if fmt in ("markdown", "rst", "text"):
        kwargs["name_hint"] = name_hint
    doc: Document = fn(document_id, data, **kwargs)
    return doc


def parse_bytes(
    document_id: str,
    data: bytes,
    *,
    name_hint: str = "",
    source: str | None = None,
    options: ParseOptions | None = None,
) -> Document:
    """Parse *data* into a Document, or raise :class:`ParseError` / :class:`LimitExceeded` saying why not."""
    options = options or ParseOptions()
    if len(data) > options.max_file_bytes:
        raise LimitExceeded(
            f"file is {len(data):,} bytes, over max_file_bytes ({options.max_file_bytes:,}); "
            "raise the limit to accept it"
        )
    if not data.strip():
        raise ParseError("the file is empty")
    fmt: Format = detect(data, name_hint)
    if fmt in _REFUSED:
        raise ParseError(_REFUSED[fmt])
    if fmt not in _PARSERS:  # pragma: no cover - every detected format is mapped or refused
        raise ParseError(f"unsupported format: {fmt}")
    missing = missing_dependency(fmt)
    if missing is not None:  # before the worker: its import error would otherwise be all we learn
        raise ParseError(str(missing)) from missing
    if fmt == "pdf" and options.pdf_passwords:
        password = options.password_for(source or document_id, name_hint)
        options = dataclasses.replace(options, pdf_password=password, pdf_passwords=())
    try:
        if options.isolate and fmt not in _IN_PROCESS:
            doc = _isolated(fmt, document_id, data, name_hint, source, options)
        else:
            doc = _run(fmt, document_id, data, name_hint, source, options)
    except MissingDependencyError as exc:
        raise ParseError(str(exc)) from exc
    if not doc.elements and not doc.children:
        raise ParseError("no text could be extracted" + (" (probably scanned)" if fmt == "pdf" else ""))
    return doc


def _isolated(
    fmt: str, document_id: str, data: bytes, name_hint: str, source: str | None, options: ParseOptions
) -> Document:
    from ragwright.parse.limits import run_isolated

    return run_isolated(
        _run,
        fmt,
        document_id,
        data,
        name_hint,
        source,
        options,
        timeout_s=options.timeout_s,
        max_memory_mb=options.max_memory_mb,
        what=document_id,
    )


__all__ = ["decode_text", "missing_dependency", "parse_bytes", "parser_version_for"]
