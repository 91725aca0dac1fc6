"""Which chunks hold text read by OCR: the "from a scanned page" flag citations show.

OCR text can be wrong in ways a text layer never is (a 5 read as an S, a line skipped under a stamp),
so a reader of an answer should know when a cited passage came from a scan. The parsers mark every
element they produced by OCR (``attributes["ocr"]``: scanned PDF pages, image files); a chunk is
flagged ``scanned: True`` in its metadata, with the lowest OCR ``ocr_confidence`` of the elements it
holds, when it holds such an element's text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ragwright.model.chunk import Chunk
from ragwright.model.document import Document

__all__ = ["mark_scanned"]

_PROBE = 60  # characters of an element's text looked for in a chunk (chunks may cut elements apart)


def mark_scanned(document: Document, chunks: Sequence[Chunk]) -> list[Chunk]:
    """*chunks* with ``scanned``/``ocr_confidence`` set on those that hold OCR text of *document*."""
    ocr = [e for e in document.elements if e.attributes.get("ocr") is True]
    if not ocr:
        return list(chunks)
    every = len(ocr) == len(document.elements)
    probes = [(" ".join(e.text.split())[:_PROBE], float(e.attributes.get("confidence", 0.0))) for e in ocr]
    out: list[Chunk] = []
    for c in chunks:
        text = " ".join(c.text.split())
        found = [conf for probe, conf in probes if probe and (probe in text or text[:_PROBE] in probe)]
        if not found and not every:
            out.append(c)
            continue
        confidence = min(found) if found else min(conf for _, conf in probes)
        meta = {**c.metadata, "scanned": True, "ocr_confidence": round(confidence, 3)}
        out.append(dataclasses.replace(c, metadata=meta))
    return out
