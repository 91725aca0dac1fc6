"""Typed metadata values and the reserved keys ragwright writes.

Matching is kind-sensitive: the number ``3`` never equals the string ``"3"``, and a boolean is not a
number (``True`` does not equal ``1``). Integers and floats compare numerically with each other.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any, Final, Literal, TypeAlias

from ragwright.errors import ConfigError

Scalar: TypeAlias = str | int | float | bool
MetadataValue: TypeAlias = Scalar | list[str] | list[int] | list[float] | None
Metadata: TypeAlias = dict[str, MetadataValue]
ValueKind = Literal["string", "number", "boolean", "list", "null"]

#: Keys ragwright itself writes on chunks; user metadata may not override them.
RESERVED_KEYS: Final = frozenset(
    {
        "page",
        "page_end",
        "heading",
        "heading_level",
        "heading_breadcrumb",
        "created_at",
        "updated_at",
        "created_at_source",
        "updated_at_source",
        "source",
        "title",
        "document_id",
        "overlap_chars",
        "parent_document_id",
    }
)

MAX_KEY_LENGTH: Final = 128


def kind_of(value: Any) -> ValueKind:
    """The kind of a metadata value; raises :class:`~ragwright.errors.ConfigError` for values metadata cannot hold."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "list"
    raise ConfigError(f"unsupported metadata value {value!r} of type {type(value).__name__}", value=value)


def values_equal(a: Any, b: Any) -> bool:
    """Kind-sensitive equality: same kind and same value (numbers compare numerically)."""
    ka, kb = kind_of(a), kind_of(b)
    if ka != kb:
        return False
    if ka == "number":
        return bool(float(a) == float(b))
    return bool(a == b)


def validate_key(key: Any) -> str:
    """Check a metadata key: a non-empty string of letters, digits, ``_``, ``-``, ``.`` or ``:``."""
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_LENGTH:
        raise ConfigError(
            f"metadata key {key!r} must be a non-empty string of at most {MAX_KEY_LENGTH} chars", field="key", value=key
        )
    if not all(ch.isalnum() or ch in "_-.:" for ch in key):
        raise ConfigError(
            f"metadata key {key!r} may only contain letters, digits and _ - . : (no spaces or quotes)",
            field="key",
            value=key,
        )
    return key


def normalize_value(value: Any) -> MetadataValue:
    """Coerce a value into a storable metadata value (dates become ISO-8601 strings)."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, tuple):
        value = list(value)
    kind = kind_of(value)
    if kind == "number" and not math.isfinite(float(value)):
        raise ConfigError(f"metadata numbers must be finite, got {value!r}", value=value)
    if kind == "list":
        items = list(value)
        kinds = {kind_of(v) for v in items}
        if len(kinds) > 1 or kinds & {"list", "null", "boolean"}:
            raise ConfigError(f"a metadata list must hold only strings or only numbers, got {value!r}", value=value)
        return items
    return value  # type: ignore[no-any-return]


def normalize_metadata(metadata: Mapping[str, Any] | None, *, strict: bool = True) -> Metadata:
    """Validate keys and values of a metadata mapping.

    ``strict=False`` (for what parsers extract from documents) drops entries metadata cannot hold
    instead of raising; user-supplied metadata is strict.
    """
    if not metadata:
        return {}
    if strict:
        return {validate_key(k): normalize_value(v) for k, v in metadata.items()}
    out: Metadata = {}
    for k, v in metadata.items():
        try:
            out[validate_key(k)] = normalize_value(v)
        except (TypeError, ValueError):
            continue
    return out
