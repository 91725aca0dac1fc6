"""rapidocr searches a large image for text at a capped long side (speed), small ones as before, and only the
part of an image that is not blank paper, at the whole image's scale (slow)."""

from __future__ import annotations

import importlib.util

import numpy as np
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
    engine = ocr.RapidOcrEngine(threads=1, crop=False)
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
    engine = ocr.RapidOcrEngine(threads=1, det_max_side=None, crop=False)
    engine.recognize(page((1500, 2100), LINES[:1], 26))
    detector = engine._engine._load_det_model()
    assert detector.limit_type == "min"


def test_content_box_is_the_ink_with_a_margin_of_paper() -> None:
    blank = np.full((400, 600, 3), 250, dtype=np.uint8)
    assert ocr.content_box(blank) is None
    faint = blank.copy()
    faint[100:110, 200:260] = 250 - ocr.CROP_TOLERANCE  # within the tolerance: still paper
    assert ocr.content_box(faint) is None
    inked = blank.copy()
    inked[100:120, 200:300] = (20, 20, 200)
    pad = ocr.CROP_MARGIN + round(ocr.CROP_MARGIN_SHARE * 600)
    assert ocr.content_box(inked) == (200 - pad, 100 - pad, 300 + pad, 120 + pad)
    inked[390:, 590:] = 0  # ink at the corner: the box stops at the image's edges
    assert ocr.content_box(inked) == (200 - pad, 100 - pad, 600, 400)


def test_detector_ratio_follows_rapidocrs_rules() -> None:
    assert ocr.detector_ratio("max", 1600, 2000, 1000) == pytest.approx(0.8)
    assert ocr.detector_ratio("max", 1600, 1200, 900) == 1.0
    assert ocr.detector_ratio("min", 736, 368, 500) == pytest.approx(2.0)
    assert ocr.detector_ratio("min", 736, 900, 1000) == 1.0


def lines_of(engine: ocr.RapidOcrEngine, image: Image.Image) -> list[tuple[str, float, float, float, float]]:
    return [(o.text, o.x0, o.y0, o.x1, o.y1) for o in engine.recognize(image)]


@pytest.mark.parametrize("size", [(1500, 2100), (2600, 1400), (500, 600)])
def test_blank_margins_are_not_searched_and_the_same_lines_come_back_in_place(size: tuple[int, int]) -> None:
    """A page with text in its top left quarter: a large one (capped search), one over rapidocr's own
    2000-pixel limit (shrunk first) and a small one (enlarged for the search)."""
    image = page(size, LINES if size[0] > 600 else ["Invoice 4471", "valve 2038"], 26 if size[0] > 600 else 20)
    whole, cropped = ocr.RapidOcrEngine(threads=1, crop=False), ocr.RapidOcrEngine(threads=1)
    expected, found = lines_of(whole, image), lines_of(cropped, image)
    assert whole.searched == size
    assert cropped.searched is not None and cropped.searched[0] * cropped.searched[1] < 0.6 * size[0] * size[1]
    assert [t for t, *_ in found] == [t for t, *_ in expected] and found
    tolerance = 0.02 * max(size)  # the same boxes, in the whole image's pixels
    for (_, *box), (_, *want) in zip(found, expected, strict=True):
        assert all(abs(a - b) <= tolerance for a, b in zip(box, want, strict=True))
    # searched at the scale the whole image would have been
    detector = cropped._engine._load_det_model()
    part = cropped.searched
    scale = detector.limit_side_len / (max(part) if detector.limit_type == "max" else min(part))
    whole_side = min(max(size), 2000)  # rapidocr shrinks an image over 2000 pixels first
    assert scale == pytest.approx(
        ocr.DET_MAX_SIDE / whole_side if whole_side > ocr.DET_MAX_SIDE else max(1.0, 736 / min(size)), rel=0.01
    )


def test_a_blank_image_is_searched_whole() -> None:
    engine = ocr.RapidOcrEngine(threads=1)
    assert engine.recognize(Image.new("RGB", (800, 900), (255, 255, 255))) == []
    assert engine.searched == (800, 900)


def test_opencv_runs_on_the_ocr_threads() -> None:
    cv2 = pytest.importorskip("cv2")
    before = cv2.getNumThreads()
    try:
        cv2.setNumThreads(4)
        ocr.RapidOcrEngine(threads=2)
        assert cv2.getNumThreads() == 2
        cv2.setNumThreads(1)
        ocr.RapidOcrEngine(threads=2)  # lowered, never raised
        assert cv2.getNumThreads() == 1
    finally:
        cv2.setNumThreads(before)
