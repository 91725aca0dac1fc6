"""The compiled PDF engine (``_pdfcore``), bound to the pdfium that pypdfium2 loaded.

``_pdfcore.c`` does per page, in C, what :mod:`~ragwright.parse.pdf.layout` (lines, geometry, bold),
:mod:`~ragwright.parse.pdf.order` (reading order, paragraphs, de-hyphenation, running lines),
:mod:`~ragwright.parse.pdf.tables` (rules, images, a table region's rows of words) and
:mod:`~ragwright.parse.pdf.elements` (headings, elements) and :mod:`~ragwright.parse.pdf.hidden` (hidden
text objects) do in Python, with the same arithmetic and
the same stable orderings; the Python modules stay the reference and the path for every page the
engine declines (right-to-left text) or hands back (a page bound for OCR). Table cells are assembled
by the same Python code on both paths. ``tests/parse/test_pdfcore.py`` checks that both paths give
identical documents.

The extension is compiled when ragwright is installed with a C compiler at hand (``hatch_build.py``);
without one, or with ``RAGWRIGHT_PDF_CORE=python`` in the environment, every page takes the Python
path (about half the speed on text-heavy PDFs, same output).
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["EngineTableLines", "address", "available", "get", "source_hash"]

_log = logging.getLogger(__name__)
_FUNCTIONS = (
    "FPDFText_CountChars",
    "FPDFText_GetText",
    "FPDFText_GetLooseCharBox",
    "FPDFText_GetFontWeight",
    "FPDFText_GetCharAngle",
    "FPDFText_GetUnicode",
    "FPDFText_GetFontInfo",
    "FPDFPage_CountObjects",
    "FPDFPage_GetObject",
    "FPDFPageObj_GetType",
    "FPDFPageObj_GetBounds",
    "FPDFPath_CountSegments",
    "FPDFImageObj_GetImagePixelSize",
    "FPDFPage_GetCropBox",
    "FPDFPage_GetMediaBox",
    "FPDFPageObj_GetFillColor",
    "FPDFPageObj_GetStrokeColor",
    "FPDFPageObj_HasTransparency",
    "FPDFPath_GetDrawMode",
    "FPDFPath_GetPathSegment",
    "FPDFPathSegment_GetPoint",
    "FPDFPathSegment_GetType",
    "FPDFPageObj_GetMatrix",
    "FPDFTextObj_GetTextRenderMode",
    "FPDFTextObj_GetFontSize",
)
_state: dict[str, Any] = {}


def address(handle: Any) -> int:
    """The address a pdfium handle (a ctypes pointer) points to, for the C engine."""
    return int(ctypes.cast(handle, ctypes.c_void_p).value or 0)


def available() -> bool:
    """Whether the compiled engine is installed (whatever ``RAGWRIGHT_PDF_CORE`` says)."""
    return _load() is not None


def _load() -> ModuleType | None:
    if "module" not in _state:
        try:
            from ragwright.parse.pdf import _pdfcore
        except ImportError as exc:
            _log.info("pdfcore_unavailable", extra={"reason": repr(exc), "fallback": "python"})
            _state["module"] = None
        else:
            stale = _stale(_pdfcore)
            if stale:
                _log.warning("pdfcore_stale", extra={"reason": stale, "fallback": "python"})
            _state["module"] = None if stale else _pdfcore
    module: ModuleType | None = _state["module"]
    return module


def source_hash(directory: Path) -> str:
    """SHA-256 (16 hex digits) of the engine's C sources in *directory*: ``_pdfcore.c`` and ``pdfcore/*``.

    ``hatch_build.py`` compiles it into the module; :func:`get` refuses a module whose hash differs
    from the sources installed beside it (an editable install whose C was edited but not rebuilt).
    """
    digest = hashlib.sha256()
    for path in [directory / "_pdfcore.c", *sorted((directory / "pdfcore").glob("*.[ch]"))]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _stale(module: ModuleType) -> str:
    """Why a compiled module does not match the C source beside it ("" when it does, or no source ships)."""
    directory = Path(__file__).parent
    if not (directory / "_pdfcore.c").exists():
        return ""
    want = source_hash(directory)
    have = getattr(module, "SOURCE_HASH", "")
    if have != want:
        return f"built from another _pdfcore.c ({have or 'no hash'} != {want}): reinstall ragwright to rebuild it"
    return ""


def get(raw: Any) -> ModuleType | None:
    """The engine bound to *raw* (``pypdfium2.raw``), or None when the Python path must be used."""
    if os.environ.get("RAGWRIGHT_PDF_CORE", "").strip().lower() in {"python", "off", "0", "false"}:
        return None
    module = _load()
    if module is None:
        return None
    if _state.get("bound") is not raw:
        module.bind({name: address(getattr(raw, name)) for name in _FUNCTIONS})
        _state["bound"] = raw
    return module


class EngineTableLines:
    """:class:`~ragwright.parse.pdf.tables.TableLines` over a page the engine holds (``LineSet``)."""

    def __init__(self, lines: Any, textpage: int, vrules: list[tuple[float, float, float]]) -> None:
        self.lines = lines
        self.textpage = textpage
        self.vrules = vrules

    def rows(self, region: tuple[float, float, float, float]) -> Any:
        return self.lines.region_rows(self.textpage, region, self.vrules)

    def remove(self, table: Any) -> None:
        self.lines.drop_inside((table.x0, table.y0, table.x1, table.y1))
