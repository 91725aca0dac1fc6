"""Recover a PDF that pdfium refuses as corrupt, through a second, tolerant reader (pypdf).

pdfium gives up on a file whose page tree is broken (``unreadablemetadata.pdf`` in the docs corpus: the
catalogue's ``/Pages`` points to an object that does not exist, so pdfium says "data format error" and
pypdf's own page list fails with "Invalid object in /Pages"). The pages themselves are usually intact:
:func:`recover` reads the file with pypdf in non-strict mode (it rebuilds a damaged cross-reference
table by scanning the file), collects every object whose ``/Type`` is ``/Page``, and writes them into a
fresh, well-formed PDF that goes back through the normal pdfium path — so layout, tables, hidden-text
stripping and OCR apply to the recovered pages exactly as to any other.

Each page keeps only what drawing it needs (``/MediaBox``, ``/CropBox``, ``/Resources``, ``/Contents``,
``/Rotate``, ``/UserUnit``): its parent, annotations, thumbnails and piece info are where damaged
objects hide, and cloning them can fail the whole page. Page order: without a page tree it is unknown,
so the first page of a linearized file (its ``/O`` entry) comes first and the others follow in object
order — the caller says so in a warning.

Bounded: at most :data:`MAX_OBJECTS` objects are looked at and at most ``max_pages`` pages kept; the
parse worker's time and memory limits (:mod:`ragwright.parse.limits`) apply to this as to any parse.
"""

from __future__ import annotations

import io
import logging
import re
from typing import Any

from ragwright._deps import require

__all__ = ["MAX_OBJECTS", "Recovered", "recover"]

MAX_OBJECTS = 100_000
_KEEP = ("/MediaBox", "/CropBox", "/Resources", "/Contents", "/Rotate", "/UserUnit")
_LETTER = (0, 0, 612, 792)
_LINEARIZED = re.compile(rb"<<\s*/Linearized\b[^>]*?/O\s+(\d+)")


class Recovered:
    """The rebuilt PDF's bytes and how many page objects were found and kept."""

    __slots__ = ("data", "found", "kept")

    def __init__(self, data: bytes, found: int, kept: int) -> None:
        self.data = data
        self.found = found
        self.kept = kept


def recover(data: bytes, *, max_pages: int) -> Recovered | None:
    """A well-formed PDF holding the pages pypdf finds in *data*, or ``None`` when it finds none.

    Raises :class:`~ragwright.errors.MissingDependencyError` when pypdf is not installed.
    """
    pypdf = require("pypdf", "pdf", "recovering damaged PDFs")
    generic = require("pypdf.generic", "pdf", "recovering damaged PDFs")
    quiet = logging.getLogger("pypdf")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # pypdf logs every repair it makes: the caller writes one warning
    try:
        try:
            reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
        except Exception:
            return None
        refs = _page_refs(reader, data, generic)
        if not refs:
            return None
        writer = pypdf.PdfWriter()
        kept = 0
        for ref in refs[:max_pages]:
            try:
                _copy_page(reader, writer, ref, generic)
            except Exception:  # one page whose objects are damaged too: the others still count
                continue
            kept += 1
        if not kept:
            return None
        try:  # the document information (title, author, dates) when its object survived
            info = reader.metadata
            if info:
                writer.add_metadata({k: v for k, v in info.items() if isinstance(v, str)})
        except Exception:
            pass
        out = io.BytesIO()
        writer.write(out)
        return Recovered(out.getvalue(), len(refs), kept)
    finally:
        quiet.setLevel(level)


def _page_refs(reader: Any, data: bytes, generic: Any) -> list[Any]:
    """References to the objects whose ``/Type`` is ``/Page``: the linearized first page, then object order."""
    numbers = sorted({(num, gen) for gen, objs in reader.xref.items() for num in objs})
    numbers += sorted((num, 0) for num in getattr(reader, "xref_objStm", {}))
    first = _first_page(data)
    refs: list[Any] = []
    seen: set[int] = set()
    for num, gen in numbers[:MAX_OBJECTS]:
        if num in seen:
            continue
        seen.add(num)
        ref = generic.IndirectObject(num, gen, reader)
        try:
            obj = ref.get_object()
        except Exception:
            continue
        if isinstance(obj, generic.DictionaryObject) and obj.get("/Type") == "/Page":
            refs.append(ref)
    refs.sort(key=lambda r: 0 if r.idnum == first else 1)  # stable: object order otherwise
    return refs


def _first_page(data: bytes) -> int | None:
    """The object number of a linearized file's first page (``/O`` of the linearization dictionary)."""
    head = _LINEARIZED.search(data[:2048])
    return int(head.group(1)) if head else None


def _copy_page(reader: Any, writer: Any, ref: Any, generic: Any) -> None:
    """Add to *writer* a page with only the entries drawing it needs (see the module docstring)."""
    source = ref.get_object()
    page = generic.DictionaryObject()
    page[generic.NameObject("/Type")] = generic.NameObject("/Page")
    for key in _KEEP:
        if key in source:
            page[generic.NameObject(key)] = source.raw_get(key)
    if "/MediaBox" not in page:  # inherited from the lost page tree: assume US Letter
        page[generic.NameObject("/MediaBox")] = generic.ArrayObject(generic.NumberObject(v) for v in _LETTER)
    if "/Resources" not in page:
        page[generic.NameObject("/Resources")] = generic.DictionaryObject()
    holder = require("pypdf", "pdf").PageObject(reader, None)
    holder.update(page)
    writer.add_page(holder)
