"""The error tree: every error pickles whole (the isolated parser process sends its errors back)."""

import pickle

import pytest

from ragwright.errors import (
    ConfigError,
    LimitExceeded,
    MissingDependencyError,
    ParseError,
    RagwrightError,
    StoreBusyError,
    StoreError,
)


@pytest.mark.parametrize(
    "error",
    [
        MissingDependencyError("rapidocr", "ocr", "OCR of scanned pages"),
        MissingDependencyError("docx", "", "DOCX parsing"),
        ConfigError.invalid("top_k", 0, "an integer >= 1"),
        ParseError("corrupt PDF"),
        LimitExceeded("too big"),
        StoreError("locked"),
        StoreBusyError("busy, retry", path="s.db"),
    ],
)
def test_every_error_survives_pickling(error: RagwrightError) -> None:
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and str(back) == str(error) and back.args == error.args
    assert vars(back) == vars(error)


def test_missing_dependency_keeps_module_extra_and_purpose() -> None:
    back = pickle.loads(pickle.dumps(MissingDependencyError("rapidocr", "ocr", "OCR of scanned pages")))
    assert (back.module, back.extra, back.purpose) == ("rapidocr", "ocr", "OCR of scanned pages")
    assert "install it with: pip install 'ragwright[ocr]'" in str(back)


def test_a_base_dependency_says_to_repair_the_install() -> None:
    for extra in ("", "base"):  # "base" is no extra: never `pip install 'ragwright[base]'`
        message = str(MissingDependencyError("py3langid", extra, "language detection"))
        assert "ragwright[" not in message and "repair the install" in message
