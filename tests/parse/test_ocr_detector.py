"""rapidocr searches a large image for text at a capped long side (speed), small ones as before (slow)."""

from __future__ import annotations

import importlib.util

import pytest
from PIL import Image, ImageDraw, ImageFont

from ragwright.parse import ocr

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("rapidocr") is None, reason="rapidocr is not installed (pip install 'ragwright[ocr]')"
    ),
]


def page(size: tuple[int, int], lines: list[str], font_px: int) -> Image.Image:
    image = Image.new("RGB", size, (250, 250, 250))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=font_px)
    for i, line in enumerate(lines):
        draw.text((60, 80 + i * int(font_px * 1.8)), line, fill=(20, 20, 20), font=font)
    return image


LINES = ["Invoice 4471 for the valve delivery", "Pressure review meeting on Tuesday", "Warranty claim 2038 approved"]


def test_a_large_page_is_searched_at_the_capped_side_and_still_read() -> None:
    engine = ocr.RapidOcrEngine(threads=1)
    detector_of = engine._engine._load_det_model  # what the engine adjusts (rapidocr's lazily built detector)
    text = " ".join(o.text for o in engine.recognize(page((1500, 2100), LINES, 26)))
    detector = detector_of()
    assert (detector.limit_type, detector.limit_side_len) == ("max", ocr.DET_MAX_SIDE)
    for line in LINES:
        assert line.replace(" ", "") in text.replace(" ", "")

    small = " ".join(o.text for o in engine.recognize(page((900, 300), LINES[:1], 26)))
    assert (detector.limit_type, detector.limit_side_len) == ("min", 736)  # rapidocr's own rule for small images
    assert "4471" in small


def test_the_cap_can_be_lifted() -> None:
    engine = ocr.RapidOcrEngine(threads=1, det_max_side=None)
    engine.recognize(page((1500, 2100), LINES[:1], 26))
    detector = engine._engine._load_det_model()
    assert detector.limit_type == "min"
