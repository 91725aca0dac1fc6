"""``model/`` refuses bad input with :class:`ConfigError` (still a ``ValueError``), naming the field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ragwright.errors import ConfigError
from ragwright.model.document import Document, Element, ElementKind
from ragwright.model.filters import Compare, Eq, In, as_filter
from ragwright.model.identity import Identity
from ragwright.model.ids import chunk_id
from ragwright.model.metadata import kind_of, normalize_metadata, validate_key

CASES: list[tuple[str, Callable[[], Any], str | None]] = [
    ("negative position", lambda: chunk_id("d", "h", -1), "position"),
    ("Eq with a list", lambda: Eq("k", [1]), "k"),
    ("In with nothing", lambda: In("k", ()), "k"),
    ("Compare op", lambda: Compare("k", "eq", 1), "op"),  # type: ignore[arg-type]
    ("Compare with a bool", lambda: Compare("k", "gt", True), "k"),
    ("filter of the wrong type", lambda: as_filter(42), "filter"),  # type: ignore[arg-type]
    ("heading without level", lambda: Element(ElementKind.HEADING, "Title"), "level"),
    ("page 0", lambda: Element(ElementKind.PARAGRAPH, "x", page=0), "page"),
    ("empty document id", lambda: Document("", ()), "id"),
    ("unsupported metadata value", lambda: kind_of(object()), None),
    ("key with a space", lambda: validate_key("bad key"), "key"),
    ("empty key", lambda: validate_key(""), "key"),
    ("infinite number", lambda: normalize_metadata({"n": float("inf")}), None),
    ("mixed list", lambda: normalize_metadata({"n": [1, "a"]}), None),
    ("blank tenant", lambda: Identity(tenant=" "), "tenant"),
]


@pytest.mark.parametrize(("label", "build", "field"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_config_error(label: str, build: Callable[[], Any], field: str | None) -> None:
    with pytest.raises(ConfigError) as info:
        build()
    assert isinstance(info.value, ValueError)  # callers catching ValueError keep working
    assert info.value.field == field
    assert str(info.value)


def test_lenient_metadata_still_drops_what_it_cannot_hold() -> None:
    assert normalize_metadata({"ok": 1, "bad key": 2, "obj": object()}, strict=False) == {"ok": 1}
