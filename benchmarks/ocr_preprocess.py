"""Does OCR preprocessing help? Character error rate of the OCR engine on generated scans and photos
of text, with and without each step of :func:`ragwright.parse.image.prepare`, in one run.

Pages are rendered with PIL (known text), rotated, speckled and blurred like a scan or a phone photo;
each condition is OCRed as is ("raw": only converted to RGB), after ``prepare`` without its enlarging
step (EXIF orientation, transparency flattened, text skewed by 3° or more levelled by the
projection-profile deskew), after the whole ``prepare`` (small images enlarged too), and with the
rotation undone exactly before ``prepare`` (the upper bound for any deskew estimator).

    python benchmarks/ocr_preprocess.py [--engine rapidocr|tesseract] [--pages 3]

CER = Levenshtein distance / reference length over the page's lines joined by spaces (lower is better).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ragwright.parse import image as image_module
from ragwright.parse import ocr
from ragwright.parse.image import prepare

WORDS = [
    "the",
    "invoice",
    "delivery",
    "valve",
    "pressure",
    "warranty",
    "meeting",
    "budget",
    "review",
    "thursday",
    "room",
    "north",
    "dock",
    "serial",
    "claim",
    "approved",
    "loaves",
    "bakery",
    "harbor",
    "lights",
    "service",
    "pump",
    "november",
    "schedule",
    "contract",
    "signed",
    "payment",
    "account",
    "balance",
    "due",
    "march",
    "april",
    "june",
    "report",
    "figure",
    "table",
    "total",
    "amount",
    "customer",
    "order",
    "number",
]


def sentence(rnd: random.Random) -> str:
    words = [rnd.choice(WORDS) for _ in range(rnd.randint(5, 8))]
    words.insert(rnd.randrange(len(words)), str(rnd.randint(10, 9999)))
    return " ".join(words).capitalize()


def render(lines: list[str], *, angle: float, size: tuple[int, int], font_px: int, seed: int) -> Image.Image:
    rnd = random.Random(seed)
    image = Image.new("L", size, 248)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=font_px)
    y = font_px * 2
    for line in lines:
        draw.text((font_px * 2, y), line, fill=25, font=font)
        y += int(font_px * 1.7)
    image = image.rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=248)
    pixels = image.load()
    assert pixels is not None
    for _ in range(int(size[0] * size[1] * 0.04)):
        pixels[rnd.randrange(size[0]), rnd.randrange(size[1])] = rnd.choice((0, 128, 255))
    return image.filter(ImageFilter.GaussianBlur(0.7)).convert("RGB")


def cer(reference: str, hypothesis: str) -> float:
    a, b = reference, hypothesis
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        cur = [i]
        for j, cb in enumerate(b, start=1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1] / max(len(a), 1)


def read(engine: ocr.OcrEngine, image: Image.Image) -> str:
    lines = sorted(engine.recognize(image), key=lambda o: (round(o.y0 / 10), o.x0))
    return " ".join(o.text for o in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine", choices=("rapidocr", "tesseract"), default="rapidocr")
    parser.add_argument("--pages", type=int, default=3, help="pages per condition")
    args = parser.parse_args()
    engine: ocr.OcrEngine = ocr.RapidOcrEngine() if args.engine == "rapidocr" else ocr.TesseractEngine()
    conditions = [
        ("A4 scan, straight", 0.0, (1240, 900), 30),
        ("A4 scan, 3° skew", 3.0, (1240, 900), 30),
        ("A4 scan, 7° skew", 7.0, (1240, 900), 30),
        ("small photo, 10 px text", 1.5, (440, 200), 10),
        ("small photo, 12 px text", 2.0, (520, 240), 12),
        ("small photo, 14 px text", -1.0, (580, 260), 14),
        ("small photo, 16 px text", -2.0, (640, 280), 16),
        ("small photo, 20 px text", 0.0, (800, 340), 20),
    ]
    print(f"engine: {engine.name}; {args.pages} page(s) per condition; mean CER (lower is better)\n")
    print("| condition | raw | prepare() without enlarging | prepare() | exact deskew + prepare() | s raw / prepared |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, angle, size, font_px in conditions:
        sums = [0.0, 0.0, 0.0, 0.0]
        secs = [0.0, 0.0]
        for p in range(args.pages):
            rnd = random.Random(p * 31 + font_px)
            lines = [sentence(rnd) for _ in range(4)]
            reference = " ".join(lines)
            image = render(lines, angle=angle, size=size, font_px=font_px, seed=p)
            start = time.perf_counter()
            sums[0] += cer(reference, read(engine, image))
            secs[0] += time.perf_counter() - start
            start = time.perf_counter()
            sums[1] += cer(reference, read(engine, prepare(image)))
            secs[1] += time.perf_counter() - start
            straight = image.rotate(-angle, resample=Image.Resampling.BICUBIC, fillcolor=(248, 248, 248))
            sums[3] += cer(reference, read(engine, prepare(straight)))
            enlarge, image_module.UPSCALE_BELOW = image_module.UPSCALE_BELOW, 0  # type: ignore[misc]
            try:
                sums[2] += cer(reference, read(engine, prepare(image)))
            finally:
                image_module.UPSCALE_BELOW = enlarge  # type: ignore[misc]
        n = args.pages
        print(
            f"| {name} | {sums[0] / n:.3f} | {sums[2] / n:.3f} | {sums[1] / n:.3f} | {sums[3] / n:.3f} | "
            f"{secs[0] / n:.2f} / {secs[1] / n:.2f} |"
        )


if __name__ == "__main__":
    main()
