"""The scale a scanned PDF page is rendered at for OCR: its scan's own resolution, never under 200 dpi,
at most 3× and 2000 pixels on the longest side."""

import pytest

from ragwright.parse.pdf.parser import MIN_RENDER_SCALE, render_scale

A4 = (595.0, 842.0)
A6 = (298.0, 420.0)


@pytest.mark.parametrize(
    ("dpi", "expected"),
    [
        (100, 200 / 72),  # a low-resolution scan is read at 200 dpi, not at its own 100
        (150, 200 / 72),
        (200, 200 / 72),
        (None, 200 / 72),  # unknown resolution: 200 dpi
        (210, 210 / 72),  # at or above 200 dpi: the scan's own resolution
    ],
)
def test_a_scan_is_read_at_its_resolution_but_never_under_200_dpi(dpi: int | None, expected: float) -> None:
    native = dpi / 72 if dpi is not None else None
    assert render_scale(native, *A6) == pytest.approx(expected)


def test_the_scale_is_capped_at_3x_and_2000_pixels() -> None:
    assert render_scale(600 / 72, 200.0, 200.0) == 3.0
    assert render_scale(300 / 72, *A4) == pytest.approx(2000 / 842)  # 300 dpi A4 would be 3508 px high
    huge = (3000.0, 3000.0)
    assert render_scale(None, *huge) == 1.0  # never under one pixel a point
    assert render_scale(100 / 72, *A4) == pytest.approx(2000 / 842)  # an A4 page: the 2000-pixel cap rules
    assert pytest.approx(200 / 72) == MIN_RENDER_SCALE
