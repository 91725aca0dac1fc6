"""The order a run parses its documents in: quick ones first, so the embedder starts at once.

Ingestion parses on one producer thread while the calling thread embeds (:mod:`ragwright.ingest.pipeline`);
the embedder can only start when the first chunks arrive. A folder walk that meets pictures, scans and
Office files first (OCR, a worker process to start) leaves the embedder idle for seconds — on the docs
corpus 7 of its 45 s, all before the first PDF. :func:`cheap_first` reorders each window of local files
by how costly their format usually is to parse — plain text, Markdown and code; then markup, e-mail and
Office files; then PDFs; then images (OCR) — keeping the listing order within a kind, so the cheap
documents give the embedder a backlog that covers the slow parses that follow. What is indexed, and how,
does not depend on the order; a run with a remote item keeps the source's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Final

from ragwright.parse.detect import CODE_SUFFIXES
from ragwright.sources.base import SourceItem

__all__ = ["WINDOW", "cheap_first", "parse_cost"]

#: How many listed items are reordered at a time (bounds what is held in memory; 0 keeps the order).
WINDOW: Final = 128

_TEXT: Final = (".md", ".markdown", ".txt", ".text", ".rst", ".csv", ".tsv", ".json", ".jsonl", ".log")
_IMAGES: Final = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif", ".webp")


def parse_cost(name: str) -> int:
    """0 for plain text, Markdown and code; 1 for markup, e-mail, Office and anything unknown; 2 for PDF;
    3 for images (OCR)."""
    lowered = name.lower()
    if lowered.endswith(_TEXT) or any(lowered.endswith(s) for s in CODE_SUFFIXES):
        return 0
    if lowered.endswith(".pdf"):
        return 2
    if lowered.endswith(_IMAGES):
        return 3
    return 1


def cheap_first(items: Iterable[SourceItem], window: int = WINDOW) -> Iterator[SourceItem]:
    """*items*, each run of *window* local files reordered by :func:`parse_cost` (stable)."""
    source = iter(items)
    while True:
        chunk = list(islice(source, max(window, 1)))
        if not chunk:
            return
        if window > 1 and all(item.uri.startswith("file:") for item in chunk):
            chunk.sort(key=lambda item: parse_cost(item.name_hint or item.uri))
        yield from chunk
