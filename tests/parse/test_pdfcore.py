"""The C PDF engine (``ragwright.parse.pdf._pdfcore``) against the Python path it mirrors.

Every PDF of the shared corpus is parsed twice, with the engine and with ``RAGWRIGHT_PDF_CORE=python``,
and the two documents (every element, every attribute, the metadata, the warnings) or the two errors
must be identical. The regular expressions the engine re-implements in C are checked against Python's
``re`` on generated strings.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pypdfium2")

from ragwright.model.document import Element, ElementKind
from ragwright.options import ParseOptions
from ragwright.parse.pdf import core as pdf_core
from ragwright.parse.pdf import parse_pdf
from ragwright.parse.pdf import parser as pdf_module
from ragwright.parse.pdf.elements import _NUMBERED
from ragwright.parse.pdf.layout import _BOLD_NAME
from ragwright.parse.pdf.order import _BULLET, _LEADER, _running_key

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
CORPUS = SHARED / "docs-corpus"
PDF_FILES = sorted(
    p for p in [*(CORPUS / "pdf").iterdir(), *(CORPUS / "hostile").iterdir()] if p.suffix.lower() == ".pdf"
)
FORCED_PYTHON = os.environ.get("RAGWRIGHT_PDF_CORE", "").strip().lower() in {"python", "off", "0", "false"}


def core() -> Any:
    if FORCED_PYTHON:
        pytest.fail("RAGWRIGHT_PDF_CORE=python is set: unset it to test the C engine against the Python path")
    import pypdfium2.raw as raw

    engine = pdf_core.get(raw)
    assert engine is not None, (
        "the C PDF engine is not built: install a C compiler (Debian: gcc) and reinstall ragwright "
        "(pip install -e .); RAGWRIGHT_PDF_CORE=python runs the suite on the Python path alone"
    )
    return engine


def outcome(path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, **options: Any) -> Any:
    monkeypatch.setenv("RAGWRIGHT_PDF_CORE", mode)
    try:
        doc = parse_pdf(path.name, path.read_bytes(), options=ParseOptions(**{"ocr": False, **options}))
    except Exception as exc:  # both paths must fail alike
        return ("error", type(exc).__name__, str(exc))
    return doc.to_dict()


def test_the_engine_is_built_and_matches_its_source() -> None:
    engine = core()
    assert pdf_core.available()
    assert pdf_core._stale(engine) == ""


def test_a_module_built_from_another_source_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = core()
    monkeypatch.setattr(engine, "SOURCE_HASH", "0000000000000000")
    assert "reinstall ragwright" in pdf_core._stale(engine)


def test_the_environment_switch_selects_the_python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import pypdfium2.raw as raw

    core()
    monkeypatch.setenv("RAGWRIGHT_PDF_CORE", "python")
    assert pdf_core.get(raw) is None
    monkeypatch.delenv("RAGWRIGHT_PDF_CORE")
    assert pdf_core.get(raw) is not None


@pytest.mark.parametrize("path", PDF_FILES, ids=[p.name for p in PDF_FILES])
def test_engine_and_python_path_give_identical_documents(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    core()
    assert outcome(path, monkeypatch, "c") == outcome(path, monkeypatch, "python")


def test_identical_with_a_password_and_with_ocr_routing(monkeypatch: pytest.MonkeyPatch) -> None:
    core()
    for name, options in (
        ("libreoffice-writer-password.pdf", {"pdf_password": "openpassword"}),
        ("loremipsum-flat.pdf", {"ocr": True}),
        ("pdf-with-ocr-text.pdf", {"ocr": True}),
        ("imagemagick-CCITTFaxDecode.pdf", {"ocr": True}),
    ):
        path = CORPUS / "pdf" / name
        result = outcome(path, monkeypatch, "c", **options)
        assert result == outcome(path, monkeypatch, "python", **options), name
        if name.startswith("libreoffice"):
            assert isinstance(result, dict) and result["elements"], "the password opens it: a document, not an error"


def test_the_engine_takes_the_text_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a silent fallback: on a text book nearly every page is read by the engine."""
    core()
    taken: list[bool] = []
    original = pdf_module.page_elements

    def spy(pages: list[Any]) -> Any:
        taken.extend(p.core is not None for p in pages)
        return original(pages)

    monkeypatch.setattr(pdf_module, "page_elements", spy)
    parse_pdf("geo", (CORPUS / "pdf" / "GeoTopo-komprimiert.pdf").read_bytes(), options=ParseOptions(ocr=False))
    assert len(taken) == 117
    assert sum(taken) >= 100


def test_engine_elements_are_ordinary_frozen_elements() -> None:
    core()
    doc = parse_pdf("min", (CORPUS / "pdf" / "minimal-document.pdf").read_bytes(), options=ParseOptions(ocr=False))
    first = doc.elements[0]
    assert type(first) is Element
    twin = Element(first.kind, first.text, first.level, first.page, dict(first.attributes))
    assert first == twin and hash(first.kind) == hash(twin.kind)
    assert isinstance(first.kind, ElementKind) and first.page == 1 and first.attributes == {}
    with pytest.raises(AttributeError):
        first.text = "changed"  # type: ignore[misc]


# --- the regular expressions ported to C, against Python's re --------------------------------------

_TEXT = st.text(
    alphabet=st.sampled_from(
        [
            *"abcivxlABZ019 .-)(*:;,\t\u00a0_'\"",
            *"\u2022\u25aa\u2013\u2014\u201c\u2018\u201e\u0663\u00e9\u4e2d",
        ]
    ),
    max_size=14,
)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_bullet_matches_python(text: str) -> None:
    assert core()._is_bullet(text) == bool(_BULLET.match(text))


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(". \t5aZ-\u00a0\u2003")), max_size=16))
def test_leader_matches_python(text: str) -> None:
    assert core()._has_leader(text) == bool(_LEADER.search(text))


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "bold",
                "Bd",
                "-bd",
                "MD",
                "-md",
                "Medi",
                "medium",
                "um",
                "bx",
                "BX",
                "cmbx",
                "sfbx",
                "Black",
                "Heavy",
                "Demi",
                "SemiBold",
                "x",
                "9",
                "_",
                "-",
                "+",
                " ",
                "\u00e9",
                "Arial",
                "\n",
            ]
        ),
        max_size=5,
    )
)
def test_bold_font_names_match_python(parts: list[str]) -> None:
    name = "".join(parts).encode("latin-1")
    assert core()._bold_name(name) == bool(_BOLD_NAME.search(name.decode("latin-1")))


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0123.  aB\t\u0663")), min_size=1, max_size=10))
def test_section_numbers_match_python(text: str) -> None:
    m = _NUMBERED.match(text)
    assert core()._numbered_dots(text) == (m.group(1).count(".") if m else -1)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("Page12 ofIV\t\u00a0-\u0130\u0663\u00c9")), max_size=16))
def test_running_keys_match_python(text: str) -> None:
    assert core()._running_key(text) == _running_key(text)


def test_regex_hooks_on_named_cases() -> None:
    engine = core()
    assert engine._is_bullet("(iv) item") and engine._is_bullet("12. Step") and not engine._is_bullet("1234. x")
    assert engine._has_leader("Introduction . . . . . 12") and not engine._has_leader("Introduction 12")
    assert engine._bold_name(b"ABCDEF+CMBX10") and not engine._bold_name(b"Times-Roman")
    assert engine._numbered_dots("2.3.1 Scope") == 2 and engine._numbered_dots("2.3.1") == -1
    assert engine._running_key("  Page 12  of 30 ") == "page # of #"
    assert re.fullmatch(r"[0-9a-f]{16}", engine.SOURCE_HASH)


def test_region_rows_agree_with_the_python_region_reader() -> None:
    """The engine's ``region_rows`` gives exactly what ``tables.region_rows`` gives, None included."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    from ragwright.parse.pdf import tables as pdf_tables
    from ragwright.parse.pdf.layout import Line, char_words

    engine = core()
    checked = found = 0
    for path in PDF_FILES:
        try:
            doc = pdfium.PdfDocument(path.read_bytes())
        except pdfium.PdfiumError:
            continue
        for index in range(len(doc)):
            page = raw.FPDF_LoadPage(doc.raw, index)
            textpage = raw.FPDFText_LoadPage(page)
            try:
                lines = engine.extract(pdf_core.address(textpage))
                if lines is None or not lines.count:
                    continue
                width, height = raw.FPDF_GetPageWidthF(page), raw.FPDF_GetPageHeightF(page)
                graphics = pdf_tables.graphics_from_core(engine.graphics(pdf_core.address(page), width, height))
                objects = lines.lines(Line)
                words = functools.partial(char_words, raw, textpage, lines.text())
                for region in graphics.regions:
                    ours = lines.region_rows(pdf_core.address(textpage), region, graphics.vrules)
                    assert ours == pdf_tables.region_rows(words, objects, region, graphics.vrules), (path.name, index)
                    checked += 1
                    found += ours is not None
            finally:
                raw.FPDFText_ClosePage(textpage)
                raw.FPDF_ClosePage(page)
        doc.close()
    assert checked >= 100 and 0 < found < checked  # both answers occur on the corpus


def test_identical_on_damaged_pdfs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeded byte mutations of real PDFs: whatever pdfium makes of them, both paths agree."""
    import random

    core()
    rng = random.Random(20261130)
    for name in ("multicolumn.pdf", "pdflatex-4-pages.pdf", "scotus-transcript-p1.pdf"):
        base = (CORPUS / "pdf" / name).read_bytes()
        for _ in range(12):
            data = bytearray(base)
            for _ in range(rng.randint(1, 20)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            results = []
            for mode in ("c", "python"):
                monkeypatch.setenv("RAGWRIGHT_PDF_CORE", mode)
                try:
                    results.append(parse_pdf(name, bytes(data), options=ParseOptions(ocr=False)).to_dict())
                except Exception as exc:
                    results.append((type(exc).__name__, str(exc)))
            assert results[0] == results[1], name


def test_identical_on_generated_layouts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Seeded reportlab layouts (columns, lists, ruled tables, CJK, leaders, rotated text) through both paths."""
    from tests.parse.pdf_layouts import write_layout

    core()
    kinds: set[str] = set()
    engine_pages = 0
    original = pdf_module.page_elements

    def spy(pages: list[Any]) -> Any:
        nonlocal engine_pages
        engine_pages += sum(p.core is not None for p in pages)
        return original(pages)

    for seed in range(24):
        path = tmp_path / f"layout-{seed}.pdf"
        write_layout(path, seed)
        monkeypatch.setattr(pdf_module, "page_elements", spy)
        ours = outcome(path, monkeypatch, "c")
        monkeypatch.setattr(pdf_module, "page_elements", original)
        assert ours == outcome(path, monkeypatch, "python"), f"layout seed {seed}"
        if isinstance(ours, dict):
            kinds.update(e["kind"] for e in ours["elements"])
    assert {"table", "heading", "list_item", "paragraph"} <= kinds  # the layouts reach every branch
    assert engine_pages >= 24


def _hidden_corpus(tmp_path: Path) -> list[Path]:
    from tests.parse.hidden_corpus import TECHNIQUES, write_corpus

    written = write_corpus(tmp_path, tuple(t for t in TECHNIQUES if t.fmt == "pdf"))
    return [tmp_path / t.file_name for t in written]


def test_hidden_text_objects_agree_with_the_python_reference(tmp_path: Path) -> None:
    """``_pdfcore.hidden`` and ``hidden.hidden_objects`` list the same objects on every page."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    from ragwright.parse.pdf.hidden import hidden_objects

    engine = core()
    found = 0
    for path in [*PDF_FILES, *_hidden_corpus(tmp_path)]:
        try:
            pdf = pdfium.PdfDocument(path.read_bytes())
        except pdfium.PdfiumError:
            continue
        try:
            for index in range(len(pdf)):
                handle = raw.FPDF_LoadPage(pdf.raw, index)
                if not handle:
                    continue
                try:
                    w, h = float(raw.FPDF_GetPageWidthF(handle)), float(raw.FPDF_GetPageHeightF(handle))
                    ours = engine.hidden(pdf_core.address(handle), w, h)
                    assert ours == hidden_objects(raw, handle, w, h), f"{path.name} page {index + 1}"
                    found += len(ours)
                finally:
                    raw.FPDF_ClosePage(handle)
        finally:
            pdf.close()
    assert found >= 6 + 5  # the hidden corpus's six, and the invisible text of the shared corpus


def test_identical_documents_on_the_hidden_text_corpus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    core()
    for path in _hidden_corpus(tmp_path):
        ours = outcome(path, monkeypatch, "c")
        assert ours == outcome(path, monkeypatch, "python"), path.name
        assert isinstance(ours, dict) and ours["metadata"]["hidden_elements"] == 1
