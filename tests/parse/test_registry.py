"""The format registry: dependencies checked before the worker, per-file PDF passwords."""

import sys
from pathlib import Path

import pytest

from ragwright.errors import ConfigError, ParseError
from ragwright.options import ParseOptions
from ragwright.parse import parse_bytes, registry


def test_a_missing_parser_library_is_reported_before_the_worker(shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22: the worker's import error was lost ("the parser process died"); now the parent sees the
    library is absent and says which extra brings it, without sending the file anywhere."""
    from ragwright.parse import limits

    docx = shared / "docs-corpus" / "docx" / "word_sample.docx"
    monkeypatch.setitem(sys.modules, "docx", None)  # python-docx "not installed" in this process

    def no_worker(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file went to the parser process")

    monkeypatch.setattr(limits, "run_isolated", no_worker)
    with pytest.raises(ParseError, match=r"'docx' is not installed .*pip install 'ragwright\[office\]'"):
        parse_bytes("d", docx.read_bytes(), name_hint=docx.name)
    missing = registry.missing_dependency("docx")
    assert missing is not None and missing.extra == "office"
    assert registry.missing_dependency("markdown") is None


def test_every_parser_library_is_a_base_dependency() -> None:
    """Issue 22: the default install (`pip install .`) reads PDF, DOCX, XLSX, PPTX, HTML and e-mail."""
    import tomllib

    from tests.conftest import REPO

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def names(requirements: list[str]) -> set[str]:
        import re

        return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}

    base = names(project["dependencies"])
    extras = project["optional-dependencies"]
    for fmt, needs in registry._NEEDS.items():
        for _module, extra, _purpose in needs:
            assert names(extras[extra]) <= base, (fmt, extra)
    assert not names(extras["ocr"]) <= base  # OCR stays an extra


def test_per_file_pdf_passwords(shared: Path) -> None:
    folder = shared / "docs-corpus" / "pdf"
    options = ParseOptions(pdf_passwords={"libreoffice-*.pdf": "openpassword", "password-example.pdf": "test"})
    for name, start in (("libreoffice-writer-password.pdf", "Lorem ipsum"), ("password-example.pdf", "Backup4all")):
        path = folder / name
        doc = parse_bytes(str(path), path.read_bytes(), name_hint=name, source=path.as_uri(), options=options)
        assert doc.text.startswith(start), name
    assert options.password_for("/data/x/password-example.pdf") == "test"
    assert options.password_for("/data/other.pdf") is None
    assert ParseOptions(pdf_password="p", pdf_passwords=[("a.pdf", "q")]).password_for("/b.pdf") == "p"
    assert "openpassword" not in repr(options)
    with pytest.raises(ConfigError, match="pdf_passwords"):
        ParseOptions(pdf_passwords={"a.pdf": 3})  # type: ignore[dict-item]
