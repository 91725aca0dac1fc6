"""PDF parsing, one package: the parser (:mod:`~ragwright.parse.pdf.parser`: open, per-page steps,
OCR routing, metadata) over hidden-text removal (:mod:`~ragwright.parse.pdf.hidden`), lines with
geometry (:mod:`~ragwright.parse.pdf.layout`), ruled tables (:mod:`~ragwright.parse.pdf.tables`), OCR of
images on text pages (:mod:`~ragwright.parse.pdf.images`), reading order
(:mod:`~ragwright.parse.pdf.order`), elements (:mod:`~ragwright.parse.pdf.elements`), document metadata
and forms (:mod:`~ragwright.parse.pdf.meta`), the repair of corrupt files
(:mod:`~ragwright.parse.pdf.repair`) and the compiled engine (:mod:`~ragwright.parse.pdf.core`, C
sources ``_pdfcore.c`` and ``pdfcore/`` here, built by ``hatch_build.py``).

``from ragwright.parse.pdf import parse_pdf`` is the entry point (the parser registry's ``pdf``). The
names are loaded on first use: :mod:`~ragwright.parse.image` uses this package's ``elements`` and
``layout`` while the parser imports it, so importing the parser here would be an import cycle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragwright.parse.pdf.parser import VERSION, merge_text_layer, parse_pdf

__all__ = ["VERSION", "merge_text_layer", "parse_pdf"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("ragwright.parse.pdf.parser"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
