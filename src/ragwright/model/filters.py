"""A typed filter AST over chunk metadata, and its reference matcher.

One AST, translated per backend (the SQLite store compiles it to SQL; the memory store and the
in-process indexes use :func:`matches`). A filter is applied inside every search arm *before* top-k.

A plain mapping ``{"department": "finance", "page": 3}`` is the AND of equalities;
:func:`as_filter` turns it into the AST.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ragwright.errors import ConfigError
from ragwright.model.metadata import kind_of, normalize_value, validate_key, values_equal

CompareOp = Literal["gt", "gte", "lt", "lte"]


@dataclass(frozen=True, slots=True)
class Eq:
    """``key == value`` (kind-sensitive); on a list-valued field, membership."""

    key: str
    value: Any

    def __post_init__(self) -> None:
        validate_key(self.key)
        object.__setattr__(self, "value", normalize_value(self.value))
        if kind_of(self.value) in ("list", "null"):
            raise ConfigError(
                f"Eq({self.key!r}) needs a string, number or boolean, got {self.value!r}",
                field=self.key,
                value=self.value,
            )


@dataclass(frozen=True, slots=True)
class In:
    """``key`` equals any of ``values``."""

    key: str
    values: tuple[Any, ...]

    def __post_init__(self) -> None:
        validate_key(self.key)
        vals = tuple(normalize_value(v) for v in self.values)
        if not vals or any(kind_of(v) in ("list", "null") for v in vals):
            raise ConfigError(
                f"In({self.key!r}) needs a non-empty list of scalars, got {self.values!r}",
                field=self.key,
                value=self.values,
            )
        object.__setattr__(self, "values", vals)


@dataclass(frozen=True, slots=True)
class Compare:
    """Numeric or string ordering: ``key <op> value``, only against values of the same kind."""

    key: str
    op: CompareOp
    value: Any

    def __post_init__(self) -> None:
        validate_key(self.key)
        if self.op not in ("gt", "gte", "lt", "lte"):
            raise ConfigError(f"Compare op must be gt, gte, lt or lte, got {self.op!r}", field="op", value=self.op)
        if kind_of(self.value) not in ("number", "string"):
            raise ConfigError(
                f"Compare({self.key!r}) needs a number or string, got {self.value!r}", field=self.key, value=self.value
            )


@dataclass(frozen=True, slots=True)
class Exists:
    """The chunk has metadata ``key`` (with a non-null value)."""

    key: str

    def __post_init__(self) -> None:
        validate_key(self.key)


@dataclass(frozen=True, slots=True)
class And:
    clauses: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class Or:
    clauses: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class Not:
    clause: Filter


Filter: TypeAlias = Eq | In | Compare | Exists | And | Or | Not
FilterLike: TypeAlias = Filter | Mapping[str, Any] | None


def all_of(filters: Iterable[FilterLike]) -> Filter | None:
    """AND of the given filters, ignoring ``None``; ``None`` when nothing remains."""
    parts = [f for f in (as_filter(x) for x in filters) if f is not None]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else And(tuple(parts))


def as_filter(value: FilterLike) -> Filter | None:
    """Normalise a mapping (AND of equalities) or a filter into the AST."""
    if value is None:
        return None
    if isinstance(value, Eq | In | Compare | Exists | And | Or | Not):
        return value
    if isinstance(value, Mapping):
        clauses: list[Filter] = []
        for key, val in value.items():
            if isinstance(val, list | tuple | set | frozenset):
                clauses.append(In(key, tuple(val)))
            else:
                clauses.append(Eq(key, val))
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else And(tuple(clauses))
    raise ConfigError(
        f"a metadata filter must be a mapping or a filter, got {type(value).__name__}", field="filter", value=value
    )


def filter_keys(flt: Filter | None) -> set[str]:
    """Every metadata key *flt* reads."""
    if flt is None:
        return set()
    if isinstance(flt, And | Or):
        return set().union(*(filter_keys(c) for c in flt.clauses))
    if isinstance(flt, Not):
        return filter_keys(flt.clause)
    return {flt.key}


def filter_size(flt: Filter | None) -> int:
    """The number of leaf comparisons in *flt* (an ``In`` counts one per value): what a backend's
    translation grows with (SQLite refuses an expression tree deeper than 1000)."""
    if flt is None:
        return 0
    if isinstance(flt, In):
        return len(flt.values)
    if isinstance(flt, And | Or):
        return sum(filter_size(c) for c in flt.clauses)
    if isinstance(flt, Not):
        return filter_size(flt.clause)
    return 1


def _compare(stored: Any, op: CompareOp, value: Any) -> bool:
    if kind_of(stored) != kind_of(value):
        return False
    if op == "gt":
        return bool(stored > value)
    if op == "gte":
        return bool(stored >= value)
    if op == "lt":
        return bool(stored < value)
    return bool(stored <= value)


def _eq(stored: Any, value: Any) -> bool:
    if isinstance(stored, list):
        return any(values_equal(item, value) for item in stored)
    return values_equal(stored, value)


def matches(flt: Filter | None, metadata: Mapping[str, Any]) -> bool:
    """The reference semantics every backend's translation must agree with."""
    if flt is None:
        return True
    if isinstance(flt, Eq):
        return flt.key in metadata and _eq(metadata[flt.key], flt.value)
    if isinstance(flt, In):
        return flt.key in metadata and any(_eq(metadata[flt.key], v) for v in flt.values)
    if isinstance(flt, Compare):
        stored = metadata.get(flt.key)
        return stored is not None and not isinstance(stored, list) and _compare(stored, flt.op, flt.value)
    if isinstance(flt, Exists):
        return metadata.get(flt.key) is not None
    if isinstance(flt, And):
        return all(matches(c, metadata) for c in flt.clauses)
    if isinstance(flt, Or):
        return any(matches(c, metadata) for c in flt.clauses)
    if isinstance(flt, Not):
        return not matches(flt.clause, metadata)
    raise TypeError(f"unknown filter node {flt!r}")
