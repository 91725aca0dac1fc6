"""PDF parsing speed and text quality: ragwright ``parse_pdf`` against plain pypdfium2 and pdfplumber.

Same run, same files, one process, one thread. For every PDF of the shared corpus that has reference
text (``GeoTopo-komprimiert.pdf`` against py-pdf/benchmarks' ground truth, and the docling samples
against docling's Markdown output):

* **pages/s** (best of ``--repeat`` runs, bytes already in memory):
  (a) ``ragwright.parse.pdf.parse_pdf`` with OCR off (structure: reading order, paragraphs,
  headings, tables, header/footer removal), with the compiled engine (``_pdfcore``);
  (a') the same on the pure-Python path (``RAGWRIGHT_PDF_CORE=python``: an install without a compiler);
  (b) plain pypdfium2: ``PdfDocument(data)``, then ``page.get_textpage().get_text_range()`` per page;
  (c) pdfplumber: ``page.extract_text()`` per page (pdfminer layout analysis);
* **text similarity** to the reference: ``difflib.SequenceMatcher(...).ratio()`` on the normalised
  word sequences (NFKC, lowercase, runs of letters/digits; Markdown table pipes and heading marks
  disappear with the punctuation). It is order sensitive, so reading order and duplicated or
  missing text both count.

Target: ragwright >= 0.9x the pages/s of plain pypdfium2. ``--breakdown`` times each stage of
``parse_pdf`` on the first file (best of ``--repeat``) to show where the time above plain extraction goes.
Timing is process CPU time (``time.process_time``), which drifts less than wall time when other jobs
share the cores; ``--wall`` times wall-clock instead.

Usage::

    python benchmarks/parse_speed.py [--repeat 3] [--files GeoTopo-komprimiert.pdf ...] [--breakdown]
"""

from __future__ import annotations

import argparse
import difflib
import io
import os
import re
import sys
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

from ragwright.options import ParseOptions  # noqa: E402
from ragwright.parse.pdf import parse_pdf  # noqa: E402

CORPUS = SHARED / "docs-corpus"
REFERENCES = {
    "GeoTopo-komprimiert.pdf": "py-pdf-benchmarks__GeoTopo-book.txt",
    "redp5110_sampled.pdf": "docling-v2__redp5110_sampled.md",
    "amt_handbook_sample.pdf": "docling-v2__amt_handbook_sample.md",
    "2305.03393v1-pg9.pdf": "docling-v2__2305.03393v1-pg9.md",
}
_WORD = re.compile(r"\w+")
_MD_NOISE = re.compile(r"<!--.*?-->|!\[[^\]]*\]\([^)]*\)", re.S)


def words(text: str) -> list[str]:
    """Normalised word sequence: NFKC, lowercase, letters/digits only."""
    return _WORD.findall(unicodedata.normalize("NFKC", _MD_NOISE.sub(" ", text)).lower())


def similarity(text: str, reference: str) -> float:
    return difflib.SequenceMatcher(None, words(text), words(reference), autojunk=False).ratio()


def run_ragwright(data: bytes) -> tuple[int, str]:
    doc = parse_pdf("bench", data, options=ParseOptions(ocr=False))
    return int(doc.metadata["page_count"]), doc.text


def run_ragwright_python(data: bytes) -> tuple[int, str]:
    os.environ["RAGWRIGHT_PDF_CORE"] = "python"
    try:
        return run_ragwright(data)
    finally:
        del os.environ["RAGWRIGHT_PDF_CORE"]


def run_pypdfium2(data: bytes) -> tuple[int, str]:
    import pypdfium2 as pdfium  # type: ignore[import-untyped]

    pdf = pdfium.PdfDocument(data)
    parts = []
    for page in pdf:
        textpage = page.get_textpage()
        parts.append(textpage.get_text_range())
        textpage.close()
        page.close()
    n = len(pdf)
    pdf.close()
    return n, "\n".join(parts)


def run_pdfplumber(data: bytes) -> tuple[int, str]:
    import pdfplumber

    with pdfplumber.open(io.BytesIO(data)) as pdf:
        parts = [page.extract_text() or "" for page in pdf.pages]
        return len(pdf.pages), "\n".join(parts)


def breakdown(data: bytes, repeat: int, clock: Callable[[], float]) -> None:
    """Milliseconds per stage of ``parse_pdf`` (stages wrapped with timers), against plain pypdfium2."""
    import ragwright.parse.pdf.core as core_module
    import ragwright.parse.pdf.parser as pdf_module

    stages = {
        "extract": "engine: page text, lines, geometry, bold (C)",
        "graphics": "engine: page-object scan for rules, images, table regions (C)",
        "read_text": "Python path: page text",
        "extract_lines": "Python path: line geometry + merging",
        "scan_graphics": "Python path: page-object scan",
        "read_tables": "tables: engine rows of words, cells assembled in Python",
        "find_tables": "Python path: tables",
        "_strip_running_lines": "running header/footer removal",
        "page_elements": "reading order, paragraphs, headings, elements",
        "document_metadata": "metadata, attachments",
    }
    spent: dict[str, float] = {}

    def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + clock() - start

        return wrapper

    class TimedEngine:  # the C module's entry points, timed; the others (hidden, ...) passed through
        def __init__(self, engine: Any) -> None:
            self.engine = engine
            self.extract = timed("extract", engine.extract)
            self.graphics = timed("graphics", engine.graphics)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.engine, name)

    originals = {name: getattr(pdf_module, name) for name in stages if hasattr(pdf_module, name)}
    original_get = core_module.get
    for name, fn in originals.items():
        setattr(pdf_module, name, timed(name, fn))
    core_module.get = lambda raw: (lambda e: TimedEngine(e) if e is not None else None)(original_get(raw))  # type: ignore[assignment]
    best_total = float("inf")
    best: dict[str, float] = {}
    base = float("inf")
    try:
        for _ in range(repeat):
            spent.clear()
            start = clock()
            run_ragwright(data)
            total = clock() - start
            if total < best_total:
                best_total, best = total, dict(spent)
            start = clock()
            run_pypdfium2(data)
            base = min(base, clock() - start)
    finally:
        for name, fn in originals.items():
            setattr(pdf_module, name, fn)
        core_module.get = original_get  # type: ignore[assignment]
    print(f"{'stage':<62} {'ms':>8} {'x plain':>8}")
    for name, label in stages.items():
        if name in best:
            print(f"{label:<62} {1000 * best[name]:>8.1f} {best[name] / base:>8.2f}")
    rest = best_total - sum(best.values())
    label = "page loading (FPDF_LoadPage, FPDFText_LoadPage) + rest"
    print(f"{label:<62} {1000 * rest:>8.1f} {rest / base:>8.2f}")
    print(f"{'ragwright parse_pdf total':<62} {1000 * best_total:>8.1f} {best_total / base:>8.2f}")
    print(f"{'plain pypdfium2 get_text_range':<62} {1000 * base:>8.1f} {1.0:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool and file; the best time counts")
    parser.add_argument("--files", nargs="*", default=list(REFERENCES), help="PDFs of docs-corpus/pdf to use")
    parser.add_argument("--no-pdfplumber", action="store_true", help="skip the slow pdfplumber peer")
    parser.add_argument("--breakdown", action="store_true", help="time the stages of parse_pdf on the first file")
    parser.add_argument("--wall", action="store_true", help="wall-clock time instead of process CPU time")
    args = parser.parse_args()
    clock = time.perf_counter if args.wall else time.process_time
    if args.breakdown:
        breakdown((CORPUS / "pdf" / args.files[0]).read_bytes(), args.repeat, clock)
        return
    tools: list[tuple[str, Callable[[bytes], tuple[int, str]]]] = [
        ("ragwright", run_ragwright),
        ("ragwright-py", run_ragwright_python),
        ("pypdfium2", run_pypdfium2),
    ]
    if not args.no_pdfplumber:
        tools.append(("pdfplumber", run_pdfplumber))
    totals = {name: [0, 0.0] for name, _ in tools}
    header = f"{'file':<28} {'pages':>5}  " + "  ".join(f"{name + ' p/s':>15} {'sim':>5}" for name, _ in tools)
    print(header + f"  {'vs pdfium':>10} {'py vs pdfium':>13}")
    for name in args.files:
        data = (CORPUS / "pdf" / name).read_bytes()
        reference = (CORPUS / "reference-outputs" / REFERENCES[name]).read_text(encoding="utf-8")
        cells = []
        rates: dict[str, float] = {}
        best = {tool: float("inf") for tool, _ in tools}
        outputs: dict[str, tuple[int, str]] = {}
        # interleaved repetitions, so drifting load on shared cores hits every tool alike;
        # pdfplumber is ~50x slower: one run is enough to rank it
        for rep in range(args.repeat):
            for tool, fn in tools:
                if tool == "pdfplumber" and rep:
                    continue
                start = clock()
                outputs[tool] = fn(data)
                best[tool] = min(best[tool], clock() - start)
        pages = outputs["pypdfium2"][0]
        for tool, _ in tools:
            rates[tool] = outputs[tool][0] / best[tool]
            totals[tool][0] += outputs[tool][0]
            totals[tool][1] += best[tool]
            cells.append(f"{rates[tool]:>15.1f} {similarity(outputs[tool][1], reference):>5.3f}")
        ratio = rates["ragwright"] / rates["pypdfium2"]
        py_ratio = rates["ragwright-py"] / rates["pypdfium2"]
        print(f"{name:<28} {pages:>5}  " + "  ".join(cells) + f"  {ratio:>9.2f}x {py_ratio:>12.2f}x")
    overall = {tool: p / s for tool, (p, s) in totals.items()}
    cells = [f"{overall[tool]:>15.1f} {'':>5}" for tool, _ in tools]
    print(
        f"{'all (pages / total s)':<28} {totals['ragwright'][0]:>5}  "
        + "  ".join(cells)
        + f"  {overall['ragwright'] / overall['pypdfium2']:>9.2f}x"
        + f" {overall['ragwright-py'] / overall['pypdfium2']:>12.2f}x"
    )


if __name__ == "__main__":
    main()
