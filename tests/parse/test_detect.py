"""Text decoding and detection: legacy 8-bit text is text, binary is not (issue 21 item 11)."""

import os

import pytest

from ragwright.parse import parse_bytes
from ragwright.parse.detect import decode_text, detect

CP1252 = (
    "The “quarterly” report — it’s final… Costs rose to €5,000 – see ‘Annex B’.\n\n"
    "Naïve café résumé: Œuvre, Š, Ž, ™, •, †.\n"
)


def test_cp1252_text_with_curly_quotes_and_dashes_is_read() -> None:
    data = CP1252.encode("cp1252")
    assert detect(data, "notes.txt") == "text" and decode_text(data) == CP1252
    doc = parse_bytes("n", data, name_hint="notes.txt")
    assert doc.elements[0].text.startswith("The “quarterly” report — it’s final…")
    assert detect(CP1252.encode("cp1252"), "notes.md") == "markdown"


@pytest.mark.parametrize("text", ["Grüße aus München", "Ça coûte 5 € — très cher", "“a” ‘b’ – —"])
def test_short_legacy_text_is_text(text: str) -> None:
    assert decode_text(text.encode("cp1252")) == text


def test_binary_stays_binary() -> None:
    assert detect(os.urandom(4096)) == "binary"
    assert detect(bytes(range(256)) * 16) == "binary"
    assert decode_text(b"\x01\x02\x03\x04\xff not utf-8, mostly controls \x05\x06\x07\x08\x0e\x0f") is None
