"""At what scale should a scanned PDF page be rendered for OCR? CER, facts found and seconds per scale.

The PDF parser renders a scanned page (or one with a garbage OCR text layer) for OCR at
``max(1.0, min(native, 3.0, 2000 / longest))`` (``_ocr_lines`` in ``ragwright/parse/pdf/parser.py``:
*native* is the page image's own pixels per point, else 200/72; rapidocr reads at most 2000 px a
side). This benchmark renders each such page at several scales exactly as ``_ocr_lines`` does
(pypdfium2, then ``deskew(expand=False)``), OCRs it with the default engine (rapidocr, one thread)
and scores the text, in one run:

    nice -n 5 python benchmarks/ocr_dpi.py [--pages N] [--repeats 2] [--dpis 150,200,300] [--seeds 1]
        [--no-corpus]

Pages: (a) the pages of ``../shared/docs-corpus/pdf`` that the parser itself routes to OCR (found by
parsing every corpus PDF with ``_ocr_lines`` replaced by a recorder), scored against a reference
transcribed by hand from the page image (below; the handwritten note and the seal are left out) and
against a few facts; (b) generated scans: sentences of known text drawn with PIL at 150, 200 and 300
dpi, rotated by 0.4°, speckled and blurred, saved as a one-image PDF page (A4 with 9 pt text, A6 with
7 pt text; ``--seeds`` pages of each, ``--dpis`` for other resolutions). ``--pages N`` keeps the
first N pages (corpus pages first). A last table sums each rule over the pages.

Scales tried: 1.0, 1.5, 2.0, 200/72, native (today's rule) and 3.0; every one capped at 2000 px on the
long side and raised to at least 1.0, as today; scales that come out equal are measured once.
The scales are taken in turn on each page and the whole round repeated (``--repeats``), so the load of
a shared machine falls on every scale alike; ``s`` is the best wall time of the repeats for render +
deskew + OCR, ``cpu`` the best process CPU time. CER = Levenshtein distance / reference length, after
NFKC and with all whitespace removed (the reading order of the OCR lines: rows by their centres in page
points, then left to right).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import io
import random
import sys
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pypdfium2
from PIL import Image, ImageDraw, ImageFilter, ImageFont

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ocr_preprocess import sentence

from ragwright.parse import ocr
from ragwright.parse.image import deskew
from ragwright.parse.options import ParseOptions
from ragwright.parse.pdf import parser as pdf_parser
from ragwright.parse.pdf.images import MIN_PIXELS

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "docs-corpus" / "pdf"
PASSWORDS = {"libreoffice-writer-password.pdf": "openpassword", "password-example.pdf": "test"}

LOREM = """Lorem ipsum dolor sit amet, consectetur adipiscing elit. Nunc sollicitudin molestie consequat.
Morbi efficitur, ipsum maximus tristique lobortis, arcu erat dignissim urna, in ultricies nibh est nec quam.
Curabitur eget lacus sollicitudin, accumsan metus id, dictum ipsum. Donec venenatis eu urna eu tempor. Proin
non diam a metus fringilla laoreet vitae ut mauris. Vivamus aliquam metus at nisl dapibus eleifend. Praesent in
pellentesque ex, sit amet dapibus justo. Sed posuere sit amet lacus sed pharetra. Cras justo augue, facilisis
id mi at, varius molestie dui. Quisque maximus lorem placerat nulla aliquam, et malesuada mauris pulvinar. Cras
non quam ut magna tincidunt consequat. Pellentesque in gravida ante, ullamcorper sodales elit. Mauris eget elit
sed tortor consequat pretium sit amet vel velit. Quisque quis sem lectus. Nulla vel lacus nisl. Nunc elementum
lacus posuere enim molestie finibus. Fusce dignissim urna nibh, at ultrices tellus consequat ac. Curabitur sed
urna imperdiet, rutrum mauris ut, convallis purus. Pellentesque a libero fringilla, lobortis nisi consequat,
lobortis eros. Ut dapibus ipsum non aliquet accumsan. Ut scelerisque massa et risus euismod consequat. Praesent
sed dignissim magna, sed pharetra nulla. Pellentesque aliquam auctor sapien, sed venenatis felis pellentesque
non. Quisque porta ante a vehicula convallis. Donec ut luctus nisi. Fusce ac molestie est. In hac habitasse
platea dictumst. Fusce commodo porta pharetra. Sed sit amet ante at magna molestie imperdiet nec nec turpis.
Nulla non felis placerat, commodo urna at, molestie enim. Nulla blandit dui vitae lectus faucibus consequat.
Pellentesque eleifend facilisis varius. Curabitur aliquet ex rhoncus lectus dignissim vulputate. Quisque
sodales iaculis mi sed facilisis. Integer convallis lorem nec enim fermentum, vitae varius lacus varius. Sed
mollis a elit ut fringilla. Etiam mollis augue in risus finibus, a sodales purus tempus. Quisque nibh felis,
efficitur dignissim est et, rhoncus malesuada nulla. Duis quis lacinia lacus. Aenean at sapien dignissim,
iaculis lectus in, euismod ipsum. Vivamus vehicula sem fringilla facilisis aliquet. Vivamus vel augue eget
lorem aliquet bibendum. Quisque ut nibh arcu. Fusce convallis turpis in volutpat placerat. Phasellus ornare
quis diam at vestibulum."""

MEMO = """SUGAR RESEARCH FOUNDATION, INC. TO: MESSRS. ABBOTT, BOSTOCK, BUNKER, GREENE, KELLY, NADLER, and
PLACE FROM: ODY H. LAMBORN Desiring to keep you posted on the progress of the Foundation you will be
interested to know that to date the Foundation has received the following: (a) A letter from The Amalgamated
Sugar Company accepting membership and enclosing their check, and executed contracts. (b) A letter from
California and Hawaiian Sugar Refining Corporation, Ltd. accepting membership and enclosing their check and
executed contracts. (c) A letter from Central Aguirre Associates accepting mem- bership and enclosing their
check and executed contracts. (d) A letter from Liquid Sugars, Inc. accepting membership and enclosing their
check and executed contracts. (e) A letter from The National Sugar Refining Company accepting membership and
enclosing their executed contracts. (f) A letter from the Savannah Sugar Refining Corporation accepting
membership and enclosing their executed contracts. Source: https://www.industrydocuments.ucsf.edu/docs/mjgl0226"""

SEAL_PAGE = (
    "重庆万州经济技术开发（集团）有限公司2021年度第二期债务融资工具定向募集说明书"
    "（本页为《重庆万州经济技术开发（集团）有限公司2021年度第二期债务融资工具定向募集说明书》之签字页，本页无正文）"
    "重庆万州经济技术开发（集团）有限公司（盖章）2021年3月31日"
)

# file -> (reference text, facts); a fact is found when its normalised text is in the normalised OCR text
REFERENCES: dict[str, tuple[str, list[str]]] = {
    "loremipsum-flat.pdf": (
        LOREM,
        ["Lorem ipsum dolor sit amet", "Phasellus ornare quis diam at vestibulum", "ullamcorper sodales elit"],
    ),
    "pdf-with-ocr-text.pdf": (
        MEMO,
        [
            "SUGAR RESEARCH FOUNDATION",
            "ODY H. LAMBORN",
            "Amalgamated Sugar Company",
            "Central Aguirre Associates",
            "Savannah Sugar Refining Corporation",
        ],
    ),
    "malformed-from-issue-932.pdf": (SEAL_PAGE, ["2021年3月31日", "签字页", "重庆万州经济技术开发"]),
}


@dataclass
class Page:
    name: str
    pdf: bytes
    number: int  # 1-based
    width: float
    height: float
    native: float  # the page image's pixels per point, 0 when unknown
    reference: str
    facts: list[str] = field(default_factory=list)


def norm(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def cer(reference: str, hypothesis: str) -> float:
    """Levenshtein distance / len(reference) (numpy, one row at a time)."""
    a = np.frombuffer(reference.encode("utf-32-le"), dtype=np.uint32)
    b = np.frombuffer(hypothesis.encode("utf-32-le"), dtype=np.uint32)
    steps = np.arange(len(b) + 1)
    prev = steps.copy()
    for i, ca in enumerate(a, start=1):
        cur = np.empty_like(prev)
        cur[0] = i
        cur[1:] = np.minimum(prev[1:] + 1, prev[:-1] + (b != ca))
        cur = np.minimum.accumulate(cur - steps) + steps  # insertions, left to right
        prev = cur
    return float(prev[-1]) / max(len(a), 1)


def reading(lines: list[ocr.OcrLine], scale: float) -> str:
    """The OCR lines as text: rows by their centres (a row takes a line whose centre lies within half
    its height of the row's), each row left to right."""
    rows: list[list[ocr.OcrLine]] = []
    for o in sorted(lines, key=lambda o: (o.y0 + o.y1) / 2):
        centre, half = (o.y0 + o.y1) / 2 / scale, (o.y1 - o.y0) / 4 / scale
        if rows and abs((rows[-1][0].y0 + rows[-1][0].y1) / 2 / scale - centre) <= half:
            rows[-1].append(o)
        else:
            rows.append([o])
    return " ".join(" ".join(o.text for o in sorted(row, key=lambda o: o.x0)) for row in rows)


def scale_for(page: Page, wanted: float) -> float:
    """*wanted* under the parser's limits: at most 2000 px on the long side, at least 1.0."""
    return max(1.0, min(wanted, 2000 / max(page.width, page.height, 1.0)))


def rules(page: Page) -> list[tuple[str, float]]:
    native = page.native if page.native > 0 else 200 / 72
    wanted = [("1.0", 1.0), ("1.5", 1.5), ("2.0", 2.0), ("200/72", 200 / 72), ("native", min(native, 3.0))]
    wanted.append(("3.0", 3.0))
    return [(name, scale_for(page, s)) for name, s in wanted]


def ocr_pages_of(name: str, data: bytes) -> list[tuple[int, float, float, float]]:
    """(page number, width, height, native px/pt) of each page the PDF parser sends to OCR."""
    found: list[tuple[int, float, float, float]] = []

    def record(pdf: Any, page: Any, graphics: Any, engine: Any) -> tuple[list[Any], float]:
        px = graphics.image_px if graphics is not None else 0.0
        found.append((page.number, page.width, page.height, px))
        return [], 0.0

    original = pdf_parser._ocr_lines
    pdf_parser._ocr_lines = record
    try:
        pdf_parser.parse_pdf(name, data, options=ParseOptions(pdf_password=PASSWORDS.get(name)))
    except Exception:  # image-only files fail with "no text" once OCR found nothing
        pass
    finally:
        pdf_parser._ocr_lines = original
    return found


def corpus_pages() -> list[Page]:
    pages = []
    for path in sorted(CORPUS.glob("*.pdf")):
        data = path.read_bytes()
        if not data:
            continue
        for number, width, height, native in ocr_pages_of(path.name, data):
            if min(width, height) * scale_for(Page("", b"", 0, width, height, native, ""), native) < MIN_PIXELS:
                print(f"skipped {path.name} p{number}: {width:.1f} x {height:.1f} pt, too small to OCR")
                continue
            reference, facts = REFERENCES.get(path.name, ("", []))
            pages.append(Page(path.name, data, number, width, height, native, reference, facts))
    return pages


def scan(dpi: int, size_in: tuple[float, float], font_pt: float, n_lines: int, seed: int) -> tuple[bytes, str]:
    """A one-page PDF holding a scan (JPEG) of *n_lines* sentences, and their text."""
    rnd = random.Random(seed)
    lines = [sentence(rnd) for _ in range(n_lines)]
    width, height = round(size_in[0] * dpi), round(size_in[1] * dpi)
    font_px = round(font_pt * dpi / 72)
    image = Image.new("L", (width, height), 246)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=font_px)
    y = round(0.8 * dpi)
    for line in lines:
        draw.text((round(0.7 * dpi), y), line, fill=30, font=font)
        y += round(font_px * 1.8)
    image = image.rotate(0.4, resample=Image.Resampling.BICUBIC, fillcolor=246)
    pixels = image.load()
    assert pixels is not None
    for _ in range(width * height // 50):
        pixels[rnd.randrange(width), rnd.randrange(height)] = rnd.choice((0, 128, 255))
    image = image.filter(ImageFilter.GaussianBlur(0.6 * dpi / 200))
    out = io.BytesIO()
    image.save(out, "PDF", resolution=float(dpi), quality=80)
    return out.getvalue(), " ".join(lines)


def generated_pages(dpis: list[int], seeds: int) -> list[Page]:
    pages = []
    for size_name, size_in, font_pt, n_lines in (("A4", (8.27, 11.69), 9.0, 24), ("A6", (4.13, 5.83), 7.0, 14)):
        for dpi in dpis:
            for seed in range(seeds):
                name = f"generated {size_name} {font_pt:g} pt @ {dpi} dpi" + (f" #{seed + 1}" if seeds > 1 else "")
                data, text = scan(dpi, size_in, font_pt, n_lines, seed=dpi + n_lines + 1000 * seed)
                found = ocr_pages_of(name, data)
                assert len(found) == 1, f"{name}: the parser did not route the scan to OCR"
                number, width, height, native = found[0]
                pages.append(Page(name, data, number, width, height, native, text))
    return pages


def measure(engine: ocr.OcrEngine, page: Page, scale: float) -> tuple[str, float, float]:
    """Render + deskew + OCR as ``_ocr_lines`` does: (text, wall s, cpu s)."""
    pdf = pypdfium2.PdfDocument(page.pdf, password=PASSWORDS.get(page.name))
    try:
        start, cpu = time.perf_counter(), time.process_time()
        handle = pdf[page.number - 1]
        try:
            image = deskew(handle.render(scale=scale).to_pil(), expand=False)
        finally:
            handle.close()
        lines = engine.recognize(image)
        return reading(lines, scale), time.perf_counter() - start, time.process_time() - cpu
    finally:
        pdf.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=0, help="only the first N pages (0: all)")
    parser.add_argument("--repeats", type=int, default=2, help="rounds over the scales; times are the best")
    parser.add_argument("--dpis", default="150,200,300", help="resolutions of the generated scans")
    parser.add_argument("--seeds", type=int, default=1, help="generated pages per size and resolution")
    parser.add_argument("--no-corpus", action="store_true", help="generated pages only")
    args = parser.parse_args()
    engine = ocr.RapidOcrEngine(threads=1)
    dpis = [int(d) for d in args.dpis.split(",")]
    pages = ([] if args.no_corpus else corpus_pages()) + generated_pages(dpis, args.seeds)
    if args.pages:
        pages = pages[: args.pages]
    engine.recognize(Image.new("RGB", (200, 100), "white"))  # load the models outside the timings
    print(f"engine: {engine.name}, 1 thread; best of {args.repeats}; CER lower is better\n")
    print("| page | pt | native px/pt | rule | scale | px (long side) | CER | facts | s | cpu s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    totals: dict[str, list[float]] = {}  # rule -> [CER sum, pages with a reference, facts, of, s, cpu s]
    for page in pages:
        named = rules(page)
        scales = sorted({s for _, s in named})
        best: dict[float, tuple[str, float, float]] = {}
        for _ in range(args.repeats):
            for s in scales:  # every scale in turn, then again
                text, wall, cpu = measure(engine, page, s)
                old = best.get(s)
                best[s] = (text, min(wall, old[1]) if old else wall, min(cpu, old[2]) if old else cpu)
        for rule, s in named:
            text, wall, cpu = best[s]
            error = cer(norm(page.reference), norm(text)) if page.reference else 0.0
            score = f"{error:.3f}" if page.reference else "-"
            hits = sum(norm(f) in norm(text) for f in page.facts)
            total = totals.setdefault(rule, [0.0] * 6)
            for k, v in enumerate((error, bool(page.reference), hits, len(page.facts), wall, cpu)):
                total[k] += v
            facts = f"{hits}/{len(page.facts)}" if page.facts else "-"
            size = f"{page.width:.0f}x{page.height:.0f}"
            px = round(max(page.width, page.height) * s)
            print(
                f"| {page.name} p{page.number} | {size} | {page.native:.2f} | {rule} | {s:.3f} | {px} | {score} | "
                f"{facts} | {wall:.2f} | {cpu:.2f} |",
                flush=True,
            )
    print(f"\n| rule | mean CER ({len(pages)} pages) | facts | s (sum) | cpu s (sum) |")
    print("| --- | --- | --- | --- | --- |")
    for rule, (errors, scored, hits, facts, wall, cpu) in totals.items():
        mean = f"{errors / scored:.4f}" if scored else "-"
        print(f"| {rule} | {mean} | {hits:.0f}/{facts:.0f} | {wall:.1f} | {cpu:.1f} |")


if __name__ == "__main__":
    main()
