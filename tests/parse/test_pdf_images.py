"""OCR of images on PDF pages that have a text layer (parse/pdf/images.py): generated PDFs, a fake engine
for the logic on both paths (the C engine and Python), rapidocr end to end through ingestion (slow)."""

from __future__ import annotations

import importlib.util
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pypdfium2")
pytest.importorskip("reportlab")

from PIL import Image, ImageDraw, ImageFont
from reportlab.lib.utils import ImageReader  # type: ignore[import-untyped]
from reportlab.pdfgen import canvas  # type: ignore[import-untyped]

from ragwright.errors import ConfigError
from ragwright.model.document import Document
from ragwright.options import IngestOptions, ParseOptions
from ragwright.parse import ocr
from ragwright.parse.ocr import OcrLine
from ragwright.parse.pdf import core as pdf_core
from ragwright.parse.pdf import images as images_module
from ragwright.parse.pdf import parse_pdf
from ragwright.parse.pdf.images import MAX_FORM_DEPTH, looks_like_text
from ragwright.parse.pictures import OCR_BUDGET_PIXELS

HAS_RAPIDOCR = importlib.util.find_spec("rapidocr") is not None
FIGURE = ["Turbine output rose", "to 42 megawatts in March"]


class FakeEngine:
    """Reads the given lines in any image it is handed (boxes in the image's pixels) and keeps the images."""

    name = "fake"

    def __init__(self, lines: list[str], confidence: float = 0.93) -> None:
        self.lines = lines
        self.confidence = confidence
        self.images: list[Any] = []

    def recognize(self, image: Any) -> list[OcrLine]:
        self.images.append(image)
        width, _ = image.size
        return [
            OcrLine(text, 0.05 * width, 20.0 + 70 * i, 0.6 * width, 70.0 + 70 * i, self.confidence)
            for i, text in enumerate(self.lines)
        ]


@pytest.fixture(params=["engine", "python"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Both PDF paths: the C engine (where it is built) and the Python reference."""
    if request.param == "engine" and not pdf_core.available():
        pytest.skip("the C engine is not built")
    monkeypatch.setenv("RAGWRIGHT_PDF_CORE", "" if request.param == "engine" else "python")
    yield request.param
    ocr.configure(threads=1)  # engine discovery again after the fake


def text_image(lines: list[str], size: tuple[int, int] = (900, 300)) -> Image.Image:
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    try:
        font: Any = ImageFont.truetype("DejaVuSans.ttf", 40)
    except OSError:
        font = ImageFont.load_default(size=40)
    for i, text in enumerate(lines):
        draw.text((20, 20 + 70 * i), text, fill="black", font=font)
    return image


def photo(size: tuple[int, int] = (400, 300)) -> Image.Image:
    """Broad areas of colour (a stand-in for a photo or a logo): no thin strokes."""
    image = Image.new("RGB", size, (200, 220, 240))
    draw = ImageDraw.Draw(image)
    draw.ellipse((40, 40, 260, 260), fill=(30, 60, 160))
    draw.rectangle((250, 100, 380, 280), fill=(180, 40, 40))
    return image


def report_pdf(pages: int = 1, *, icon: bool = True, figure: Image.Image | None = None, label: bool = False) -> bytes:
    """A text page with a heading, body text, a figure holding text (an image), a caption and an icon."""
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=(612, 792))
    art = ImageReader(figure if figure is not None else text_image(FIGURE))
    for n in range(pages):
        pdf.setFont("Helvetica-Bold", 18)
        pdf.drawString(72, 720, f"Plant report part {n + 1}")
        pdf.setFont("Helvetica", 11)
        for i in range(6):
            pdf.drawString(72, 690 - 14 * i, f"Body text about the plant on page {n + 1}, sentence {i}.")
        pdf.drawImage(art, 72, 420, width=360, height=120)
        if label:  # a label drawn as text over the figure, where the engine reads its first line
            pdf.drawString(80, 531, FIGURE[0])
        pdf.drawString(72, 400, "Figure 1: output after the upgrade.")
        if icon:
            pdf.drawImage(ImageReader(text_image(["OK"], (48, 48))), 520, 720, width=20, height=20)
        pdf.showPage()
    pdf.save()
    return buf.getvalue()


def parse(data: bytes, **options: Any) -> Document:
    return parse_pdf("r.pdf", data, source="r.pdf", options=ParseOptions(**options))


def test_an_image_on_a_text_page_is_read_in_place(path: str) -> None:
    fake = FakeEngine(FIGURE)
    ocr.set_engine(fake)
    doc = parse(report_pdf())
    assert len(fake.images) == 1  # the icon (20 pt, 48 px) never reaches the engine
    texts = [e.text for e in doc.elements]
    read = next(i for i, t in enumerate(texts) if "42 megawatts" in t)
    assert texts[read] == "Turbine output rose to 42 megawatts in March"
    assert "sentence 5" in texts[read - 1] and texts[read + 1].startswith("Figure 1")  # where the image sits
    attrs = doc.elements[read].attributes
    assert attrs["ocr"] is True and attrs["engine"] == "fake" and attrs["confidence"] == 0.93
    assert attrs["image"].startswith("page 1 image") and doc.elements[read].page == 1
    assert all("ocr" not in e.attributes for i, e in enumerate(doc.elements) if i != read)
    assert doc.metadata["ocr_pictures"] == 1 and "ocr_pages" not in doc.metadata


def test_the_option_off_reads_no_image(path: str) -> None:
    fake = FakeEngine(FIGURE)
    ocr.set_engine(fake)
    for options in ({"ocr_images": False}, {"ocr": False}):
        doc = parse(report_pdf(), **options)
        assert fake.images == []
        assert "megawatts" not in doc.text and "ocr_pictures" not in doc.metadata
        assert "Figure 1: output after the upgrade." in doc.text  # the text layer as before


def test_an_image_repeated_on_every_page_is_read_once(path: str) -> None:
    fake = FakeEngine(FIGURE)
    ocr.set_engine(fake)
    doc = parse(report_pdf(pages=3))
    assert len(fake.images) == 1
    assert doc.text.count("42 megawatts") == 1 and doc.metadata["ocr_pictures"] == 1


def test_an_image_off_the_page_is_not_read(path: str) -> None:
    fake = FakeEngine(FIGURE)
    ocr.set_engine(fake)
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=(612, 792))
    pdf.setFont("Helvetica", 11)
    pdf.drawString(72, 700, "A page whose figure was pushed off the page.")
    pdf.drawImage(ImageReader(text_image(FIGURE)), 640, 420, 360, 120)  # right of the page's edge
    pdf.showPage()
    pdf.save()
    doc = parse(buf.getvalue())
    assert fake.images == [] and "megawatts" not in doc.text


def test_the_work_is_capped_by_the_pixel_budget(path: str) -> None:
    fake = FakeEngine(FIGURE)
    ocr.set_engine(fake)
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=(612, 792))
    for n in range(8):  # eight different figures, one a page
        pdf.setFont("Helvetica", 11)
        pdf.drawString(72, 700, f"Page {n + 1} of the appendix, with one figure below.")
        pdf.drawImage(ImageReader(text_image([f"Figure number {n + 1}", "of the appendix"])), 72, 420, 360, 120)
        pdf.showPage()
    pdf.save()
    doc = parse(buf.getvalue())
    read = -(-OCR_BUDGET_PIXELS // (2700 * 900))  # each 900x300 figure is enlarged 3x before OCR
    assert len(fake.images) == read < 8
    assert doc.metadata["ocr_pictures"] == read
    assert any(f"budget of {OCR_BUDGET_PIXELS:,} pixels" in w for w in doc.warnings)


def test_pictures_without_text_and_noise_are_not_kept(path: str) -> None:
    fake = FakeEngine(FIGURE)
    ocr.set_engine(fake)
    parse(report_pdf(figure=photo()))
    assert fake.images == []  # broad areas of colour: no OCR run
    ocr.set_engine(FakeEngine(["8"]))  # a stray glyph of a drawing
    doc = parse(report_pdf())
    assert "ocr_pictures" not in doc.metadata and all("image" not in e.attributes for e in doc.elements)
    ocr.set_engine(FakeEngine(FIGURE, confidence=0.3))  # under ocr_min_confidence
    assert "megawatts" not in parse(report_pdf()).text


def test_what_the_text_layer_reads_over_an_image_is_not_read_twice(path: str) -> None:
    ocr.set_engine(FakeEngine(FIGURE))
    doc = parse(report_pdf(label=True))
    assert doc.text.count(FIGURE[0]) == 1  # the label, from the text layer
    assert "to 42 megawatts in March" in doc.text  # the line only the image holds


def test_looks_like_text_tells_text_from_shapes() -> None:
    assert looks_like_text(text_image(FIGURE))
    assert not looks_like_text(photo())
    assert not looks_like_text(Image.new("RGB", (300, 200), "white"))


def test_ocr_images_is_validated() -> None:
    with pytest.raises(ConfigError, match="ocr_images"):
        ParseOptions(ocr_images="yes")  # type: ignore[arg-type]


def test_figure_text_is_found_after_ingestion_and_flagged(tmp_path: Path) -> None:
    from ragwright.rag import Rag
    from ragwright.stores.sqlite import SqliteStore
    from ragwright.testing.doubles import HashingEmbedder

    ocr.set_engine(FakeEngine(FIGURE))
    try:
        folder = tmp_path / "docs"
        folder.mkdir()
        (folder / "report.pdf").write_bytes(report_pdf())
        options = IngestOptions(parse=ParseOptions(isolate=False))  # the fake engine lives in this process
        rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder(), ingest_options=options)
        assert rag.ingest(folder).failed == []
        hits = [r for r in rag.search("turbine megawatts March", top_k=5) if "megawatts" in r.chunk.text]
        assert hits and hits[0].chunk.metadata["scanned"] is True
        assert hits[0].chunk.metadata["ocr_confidence"] == 0.93
    finally:
        ocr.configure(threads=1)


@pytest.mark.slow
@pytest.mark.skipif(not HAS_RAPIDOCR, reason="rapidocr is not installed (pip install 'ragwright[ocr]')")
def test_rapidocr_reads_a_figure_on_a_text_page_and_ingestion_finds_it(tmp_path: Path) -> None:
    from ragwright.rag import Rag
    from ragwright.stores.sqlite import SqliteStore
    from ragwright.testing.doubles import HashingEmbedder

    ocr.configure(threads=1)
    doc = parse(report_pdf(), isolate=False)
    assert "Turbine output rose" in doc.text and "42 megawatts" in doc.text
    assert doc.metadata["ocr_pictures"] == 1
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "report.pdf").write_bytes(report_pdf())
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())  # parsed in the isolated worker
    assert rag.ingest(folder).failed == []
    hits = rag.search("turbine megawatts", top_k=3)
    assert hits and "megawatts" in hits[0].chunk.text and hits[0].chunk.metadata["scanned"] is True


def form_pdf(depth: int, pages: int = 1, figure: Image.Image | None = None, fill: int = 0) -> bytes:
    """A text page whose figure sits inside *depth* form XObjects nested in one another (none: the page's
    own image), each form drawn moved and scaled, as Word, InDesign and LaTeX exports wrap figures;
    *fill* paths drawn in the outer form before it."""
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=(612, 792))
    art = ImageReader(figure if figure is not None else text_image(FIGURE))
    for n in range(pages):
        pdf.setFont("Helvetica", 11)
        for i in range(6):
            pdf.drawString(72, 690 - 14 * i, f"Body text about the plant on page {n + 1}, sentence {i}.")
        pdf.drawString(72, 400, "Figure 1: output after the upgrade.")
        if depth == 0:
            pdf.drawImage(art, 72, 420, width=360, height=120)
        elif n == 0:
            pdf.beginForm("f1")  # the figure drawn at twice its size in the form's space, halved on the page
            pdf.drawImage(art, 0, 0, width=720, height=240)
            pdf.endForm()
            for k in range(2, depth + 1):  # each form draws the one before it
                pdf.beginForm(f"f{k}")
                if k == depth:
                    for j in range(fill):
                        pdf.line(0, 0.1 * j, 1, 0.1 * j)
                pdf.doForm(f"f{k - 1}")
                pdf.endForm()
        if depth:
            pdf.saveState()
            pdf.translate(72, 420)
            pdf.scale(0.5, 0.5)
            pdf.doForm(f"f{depth}")
            pdf.restoreState()
        pdf.showPage()
    pdf.save()
    return buf.getvalue()


@pytest.mark.parametrize("depth", [0, 1, 3])
def test_an_image_inside_a_form_is_read_in_place(path: str, depth: int) -> None:
    fake = FakeEngine(FIGURE)
    ocr.set_engine(fake)
    doc = parse(form_pdf(depth))
    assert len(fake.images) == 1 and fake.images[0].size == (2700, 900)  # its own pixels, not the form's scale
    texts = [e.text for e in doc.elements]
    read = next(i for i, t in enumerate(texts) if "42 megawatts" in t)
    assert texts[read] == "Turbine output rose to 42 megawatts in March"
    # placed where the forms' matrices put it on the page: under the body text, above the caption
    assert "sentence 5" in texts[read - 1] and texts[read + 1].startswith("Figure 1")
    attrs = doc.elements[read].attributes
    assert attrs["ocr"] is True and attrs["engine"] == "fake" and attrs["confidence"] == 0.93
    assert attrs["image"] == "page 1 image 8" if depth == 0 else attrs["image"].endswith(".1" * depth)
    assert doc.metadata["ocr_pictures"] == 1


def test_a_form_drawn_on_every_page_is_read_once(path: str) -> None:
    fake = FakeEngine(FIGURE)
    ocr.set_engine(fake)
    doc = parse(form_pdf(1, pages=3))
    assert len(fake.images) == 1 and doc.text.count("42 megawatts") == 1


def test_forms_beyond_the_depth_cap_are_not_followed(path: str) -> None:
    fake = FakeEngine(FIGURE)
    ocr.set_engine(fake)
    assert "42 megawatts" in parse(form_pdf(MAX_FORM_DEPTH)).text
    for depth in (MAX_FORM_DEPTH + 1, 60):  # past the cap (and past pdfium's own nesting limit)
        fake.images.clear()
        doc = parse(form_pdf(depth))
        assert fake.images == [] and "megawatts" not in doc.text
        assert "Figure 1: output after the upgrade." in doc.text  # the text layer as before


def test_the_objects_looked_at_are_capped(path: str) -> None:
    fake = FakeEngine(FIGURE)
    ocr.set_engine(fake)
    assert "42 megawatts" in parse(form_pdf(2, fill=100)).text
    doc = parse(form_pdf(2, fill=images_module._MAX_OBJECTS))  # the budget is spent before the figure
    assert fake.images[1:] == [] and "megawatts" not in doc.text


def test_a_form_drawing_itself_does_not_loop(path: str) -> None:
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import DictionaryObject, NameObject, StreamObject

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(form_pdf(2))))
    xobjects = writer.pages[0]["/Resources"]["/XObject"]
    ref = xobjects.raw_get(next(k for k in xobjects if k.endswith("f2")))  # the form the page draws
    form = ref.get_object()
    resources = form.setdefault(NameObject("/Resources"), DictionaryObject())
    resources.setdefault(NameObject("/XObject"), DictionaryObject())[NameObject("/Self")] = ref
    content = form.get_data() + b"\nq 0.5 0 0 0.5 0 0 cm /Self Do Q\n"  # and draws itself, smaller
    del form["/Filter"]
    StreamObject.set_data(form, content)  # stored as it is, no filter
    out = io.BytesIO()
    writer.write(out)
    fake = FakeEngine(FIGURE)
    ocr.set_engine(fake)
    doc = parse(out.getvalue())
    assert len(fake.images) == 1 and doc.text.count("42 megawatts") == 1  # the figure once, no endless descent


def test_words_of_a_figure_inside_a_form_are_cited_from_a_scanned_page(tmp_path: Path) -> None:
    from ragwright.cli.output import scanned_note
    from ragwright.rag import Rag
    from ragwright.stores.sqlite import SqliteStore
    from ragwright.testing.doubles import HashingEmbedder

    ocr.set_engine(FakeEngine(FIGURE))
    try:
        folder = tmp_path / "docs"
        folder.mkdir()
        (folder / "report.pdf").write_bytes(form_pdf(2))
        options = IngestOptions(parse=ParseOptions(isolate=False))  # the fake engine lives in this process
        rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder(), ingest_options=options)
        assert rag.ingest(folder).failed == []
        hits = [r for r in rag.search("turbine megawatts March", top_k=5) if "megawatts" in r.chunk.text]
        assert hits and scanned_note(hits[0]) == " — from a scanned page (OCR, confidence 0.93)"
    finally:
        ocr.configure(threads=1)
