"""OCR routing of scanned PDF pages: fake engines for the logic, rapidocr for the real thing (slow)."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pypdfium2")

from ragwright.errors import ParseError
from ragwright.model.document import Document, ElementKind
from ragwright.options import ParseOptions
from ragwright.parse import ocr
from ragwright.parse.ocr import OcrLine, text_quality
from ragwright.parse.pdf import parse_pdf

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
PDFS = SHARED / "docs-corpus" / "pdf"
HAS_RAPIDOCR = importlib.util.find_spec("rapidocr") is not None


class FakeEngine:
    """Returns fixed lines (in pixels of whatever image it is given) with a fixed confidence."""

    name = "fake"

    def __init__(self, lines: list[str], confidence: float = 0.95, fail: bool = False) -> None:
        self.lines = lines
        self.confidence = confidence
        self.fail = fail
        self.images: list[Any] = []

    def recognize(self, image: Any) -> list[OcrLine]:
        self.images.append(image)
        if self.fail:
            raise RuntimeError("engine crashed")
        width, _ = image.size
        return [
            OcrLine(text, 0.1 * width, 40.0 + 30 * i, 0.9 * width, 62.0 + 30 * i, self.confidence)
            for i, text in enumerate(self.lines)
        ]


@pytest.fixture
def engine_slot() -> Iterator[None]:
    """Restore engine discovery after a test that injected an engine."""
    yield
    ocr.configure(threads=1)


def parse(name: str, **options: object) -> Document:
    return parse_pdf(name, (PDFS / name).read_bytes(), source=name, options=ParseOptions(**options))  # type: ignore[arg-type]


def test_text_quality_separates_clean_text_from_garbage() -> None:
    clean = "Desiring to keep you posted on the progress of the Foundation, you will be interested to know."
    garbage = "«POAH «3E*»CM tanntxim. inc. /^ . ^ toi n»Bfl. iseorty ttsrootj saifii, s*r;tiiR» FRG&t"
    assert text_quality(clean) > 0.9
    assert text_quality(garbage) < 0.5
    assert text_quality("") == 0.0
    assert text_quality("Die Kugeloberfläche lässt sich verformen, 2013/2014.") > 0.9
    assert text_quality("重庆万州经济技术开发 有限公司") > 0.9


def test_scanned_page_goes_to_the_engine(engine_slot: None) -> None:
    fake = FakeEngine(["Lorem ipsum dolor sit amet,", "consectetur adipiscing elit."])
    ocr.set_engine(fake)
    doc = parse("loremipsum-flat.pdf")
    assert len(fake.images) == 1 and max(fake.images[0].size) <= 2000
    assert [e.text for e in doc.elements] == ["Lorem ipsum dolor sit amet, consectetur adipiscing elit."]
    attrs = doc.elements[0].attributes
    assert attrs["ocr"] is True and attrs["engine"] == "fake" and attrs["confidence"] == pytest.approx(0.95)
    assert doc.elements[0].page == 1 and doc.elements[0].kind is ElementKind.PARAGRAPH
    assert doc.warnings == ()
    assert doc.metadata["ocr_pages"] == 1


def test_low_confidence_ocr_is_flagged_not_indexed(engine_slot: None) -> None:
    ocr.set_engine(FakeEngine(["l0rem ipsvm"], confidence=0.3))
    with pytest.raises(ParseError, match=r"OCR confidence 0.30 is below ocr_min_confidence=0.6"):
        parse("loremipsum-flat.pdf")
    doc = parse("loremipsum-flat.pdf", ocr_min_confidence=0.2)
    assert doc.text == "l0rem ipsvm"


def test_engine_failure_degrades_to_a_warning(engine_slot: None) -> None:
    ocr.set_engine(FakeEngine([], fail=True))
    with pytest.raises(ParseError, match=r"^no text: probably scanned .*OCR with fake failed"):
        parse("loremipsum-flat.pdf")
    doc = parse("malformed-from-issue-932.pdf")  # a scan with a few characters of text layer
    assert doc.text == "2021 3 31"
    assert any("failed" in w and "text layer was kept" in w for w in doc.warnings)


def test_no_engine_or_ocr_off_warns_with_the_extra(engine_slot: None) -> None:
    ocr.set_engine(None)
    with pytest.raises(ParseError, match=r"page 1 has no text layer \(probably scanned\); enable OCR with pip install"):
        parse("loremipsum-flat.pdf")
    fake = FakeEngine(["never used"])
    ocr.set_engine(fake)
    with pytest.raises(ParseError, match=r"OCR is off"):
        parse("loremipsum-flat.pdf", ocr=False)
    assert fake.images == []


def test_garbage_text_layer_is_replaced_by_ocr(engine_slot: None) -> None:
    ocr.set_engine(FakeEngine(["Desiring to keep you posted on the progress of the Foundation"]))
    doc = parse("pdf-with-ocr-text.pdf")
    assert doc.text == "Desiring to keep you posted on the progress of the Foundation"
    assert doc.elements[0].attributes["engine"] == "fake"


def test_a_text_layer_over_a_scan_is_kept_beside_the_ocr(engine_slot: None) -> None:
    """Issue 26 item 5: malformed-from-issue-932.pdf is a scan with a real text layer "2021 3 31" (the date
    typed into the form); OCR reads the rest of the page but not the date under the seal."""
    ocr.set_engine(FakeEngine(["Signature page of the placement memorandum"]))
    doc = parse("malformed-from-issue-932.pdf")
    texts = [e.text for e in doc.elements]
    assert "2021 3 31" in texts and "Signature page of the placement memorandum" in texts
    assert all(e.attributes["ocr"] is True and e.attributes["text_layer_kept"] is True for e in doc.elements)
    assert doc.metadata["ocr_pages"] == 1


def test_where_the_layer_has_text_it_wins_over_ocr() -> None:
    from ragwright.parse.pdf import merge_text_layer
    from ragwright.parse.pdf.layout import Line

    layer = [Line("2021 3 31", 100, 100, 300, 112, 10)]
    over_the_date = Line("31 日", 260, 99, 320, 113, 14)  # half of it on the layer's line
    elsewhere = Line("Signature page", 100, 500, 400, 514, 14)
    grazing = Line("a seal", 90, 80, 400, 102, 22)  # touches the layer line by a sliver
    merged = merge_text_layer(layer, [over_the_date, elsewhere, grazing])
    assert [ln.text for ln in merged] == ["2021 3 31", "Signature page", "a seal"]


def test_text_pages_never_reach_the_engine(engine_slot: None) -> None:
    fake = FakeEngine(["never used"])
    ocr.set_engine(fake)
    parse("multicolumn.pdf")
    parse("amt_handbook_sample.pdf")  # images and a good text layer
    assert fake.images == []


def test_configure_validates_threads() -> None:
    with pytest.raises(ValueError, match="threads"):
        ocr.configure(threads=0)


@pytest.mark.slow
@pytest.mark.skipif(not HAS_RAPIDOCR, reason="rapidocr is not installed (pip install 'ragwright[ocr]')")
def test_rapidocr_reads_the_flattened_lorem_ipsum(engine_slot: None) -> None:
    engine = ocr.get_engine()
    assert engine is not None and engine.name == "rapidocr"
    doc = parse("loremipsum-flat.pdf")
    text = doc.text
    for word in ("Lorem", "ipsum", "dolor", "consectetur", "adipiscing", "sollicitudin", "Curabitur"):
        assert word in text
    assert all(e.attributes["ocr"] is True and e.attributes["engine"] == "rapidocr" for e in doc.elements)
    assert min(e.attributes["confidence"] for e in doc.elements) > 0.8


@pytest.mark.slow
@pytest.mark.skipif(not HAS_RAPIDOCR, reason="rapidocr is not installed (pip install 'ragwright[ocr]')")
def test_rapidocr_replaces_a_garbage_layer_and_reads_cjk(engine_slot: None) -> None:
    doc = parse("pdf-with-ocr-text.pdf")
    assert "Desiring to keep you posted on the progress of the Foundation" in doc.text
    assert "«POAH" not in doc.text
    doc = parse("malformed-from-issue-932.pdf")
    assert "有限公司" in doc.text and doc.elements[0].attributes["engine"] == "rapidocr"
    assert "2021 3 31" in [e.text for e in doc.elements]  # the text layer's date, which OCR misreads
    with pytest.raises(ParseError, match="OCR \\(rapidocr\\) found no text"):
        parse("imagemagick-CCITTFaxDecode.pdf")  # a 16x16 pixel fax image


def test_a_page_too_small_to_hold_a_line_is_not_sent_to_ocr(engine_slot: None) -> None:
    engine = FakeEngine(["Anything at all"])
    ocr.set_engine(engine)
    with pytest.raises(ParseError, match="OCR \\(fake\\) found no text"):
        parse("imagemagick-CCITTFaxDecode.pdf")  # a 12 by 12 point page, its fax image 12 pixels a side
    assert engine.images == []
    doc = parse("loremipsum-flat.pdf")  # a full page is still read
    assert doc.text == "Anything at all" and len(engine.images) == 1


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("pytesseract") is None or shutil.which("tesseract") is None,
    reason="pytesseract or the tesseract binary (apt install tesseract-ocr) is missing",
)
def test_tesseract_fallback_reads_the_flattened_lorem_ipsum(engine_slot: None) -> None:
    ocr.set_engine(ocr.TesseractEngine())
    doc = parse("loremipsum-flat.pdf")
    assert "Lorem ipsum dolor sit amet" in doc.text
    assert all(e.attributes["engine"] == "tesseract" for e in doc.elements)


@pytest.mark.skipif(
    importlib.util.find_spec("pytesseract") is None or shutil.which("tesseract") is None,
    reason="pytesseract or the tesseract binary (apt install tesseract-ocr) is missing",
)
def test_tesseract_is_held_to_the_ocr_thread_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26 item 6: OpenMP would start a thread per core beside the embedder."""
    import os

    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)
    ocr.TesseractEngine(threads=2)
    assert os.environ["OMP_THREAD_LIMIT"] == "2"
    monkeypatch.setenv("OMP_THREAD_LIMIT", "4")  # the user's own setting wins
    ocr.TesseractEngine()
    assert os.environ["OMP_THREAD_LIMIT"] == "4"
