"""How large must the OCR text detector's input be? CER and CPU seconds on generated full pages.

rapidocr's detector by default never shrinks its input (its short side is raised to at least 736 px),
so a 2000 px page — a scan rendered near its own resolution — is searched for text at full size, which
costs more than recognising the text found. :class:`ragwright.parse.ocr.RapidOcrEngine` searches large
images at a long side of ``DET_MAX_SIDE`` px instead (recognition still reads crops of the full image).
This benchmark renders pages of known text at a scan's size (1414 × 2000 px, A4 at ~170 dpi) in several
font sizes, speckled and blurred, and OCRs each with the detector's long side capped at each size (and
uncapped, rapidocr's own rule), in one run:

    python benchmarks/ocr_detector_size.py [--pages 2] [--sides 0,1600,1280,960]

CER = Levenshtein distance / reference length (lower is better); ``cpu s`` = process CPU seconds.
The pages are generated: they are not the docs corpus that ingestion throughput is reported on.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ocr_preprocess import cer, read, render, sentence

from ragwright.parse import ocr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=2, help="pages per font size")
    parser.add_argument("--sides", default="0,1600,1280,960", help="detector long sides to try (0: uncapped)")
    parser.add_argument("--fonts", default="14,18,24", help="font heights in px (8-14 pt at ~170 dpi)")
    args = parser.parse_args()
    sides = [int(s) for s in args.sides.split(",")]
    fonts = [int(f) for f in args.fonts.split(",")]
    pages = []
    for font_px in fonts:
        for p in range(args.pages):
            rnd = random.Random(1000 * font_px + p)
            count = int(2000 / (font_px * 1.7)) - 4
            lines = [sentence(rnd) for _ in range(count)]
            pages.append(
                (font_px, " ".join(lines), render(lines, angle=0.0, size=(1414, 2000), font_px=font_px, seed=p))
            )
    engine = ocr.RapidOcrEngine(threads=1)
    engine.recognize(pages[0][2].resize((300, 400)))  # models loaded before timing
    print(f"{'detector long side':<20}" + "".join(f"{f'{f}px CER':>11}" for f in fonts) + f"{'cpu s':>9}")
    for side in sides:
        engine.det_max_side = side or None
        errors: dict[int, list[float]] = {f: [] for f in fonts}
        start = time.process_time()
        for font_px, text, image in pages:
            errors[font_px].append(cer(text, read(engine, image)))
        spent = time.process_time() - start
        label = str(side) if side else "uncapped"
        print(
            f"{label:<20}" + "".join(f"{sum(e) / len(e):>11.3f}" for e in errors.values()) + f"{spent:>9.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
