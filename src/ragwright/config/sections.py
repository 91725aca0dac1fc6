"""Option classes from configuration tables and back: one builder for every ``[section]`` of ``ragwright.toml``.

A table maps onto an option class field by field (:meth:`~ragwright.options._OptionsBase.from_dict`
refuses an unknown key with a suggestion). A field that holds another option class (``ensemble``,
``feedback``, ``hyde``, ``tags`` …) takes a table of that class's fields, ``true`` for its defaults or
``false`` for none. :func:`to_plain` writes the effective options back as plain data (``config show``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from ragwright.cache.options import CacheOptions
from ragwright.errors import ConfigError
from ragwright.memory.options import MemoryOptions, PersistentMemoryOptions
from ragwright.model.filters import And, Eq, Filter, In
from ragwright.options import (
    ChunkingOptions,
    EnsembleOptions,
    FeedbackOptions,
    IngestOptions,
    ParentOptions,
    ParseOptions,
    RagOptions,
    RetrievalOptions,
)
from ragwright.retrieve.strategies.options import (
    AdaptiveOptions,
    CragOptions,
    DeepResearchOptions,
    StrategyOptions,
    TagRetrievalOptions,
    TimeWeightedOptions,
)
from ragwright.retrieve.transforms.options import (
    AllowedField,
    HydeOptions,
    MultiQueryOptions,
    RewriteOptions,
    SelfQueryOptions,
    TransformOptions,
)

#: The fields of each option class that hold another option class (``true`` / ``false`` / a table).
NESTED: Final[dict[type, dict[str, type]]] = {
    RetrievalOptions: {"ensemble": EnsembleOptions, "feedback": FeedbackOptions},
    RagOptions: {"feedback": FeedbackOptions},
    TransformOptions: {
        "rewrite": RewriteOptions,
        "multi_query": MultiQueryOptions,
        "hyde": HydeOptions,
        "self_query": SelfQueryOptions,
    },
    StrategyOptions: {
        "tags": TagRetrievalOptions,
        "time_weighting": TimeWeightedOptions,
        "deep_research": DeepResearchOptions,
        "adaptive": AdaptiveOptions,
        "crag": CragOptions,
    },
    IngestOptions: {"parse": ParseOptions},
    MemoryOptions: {"persistent": PersistentMemoryOptions},
}
#: Fields a configuration file cannot set (Python objects, or per-call data).
NOT_CONFIGURABLE: Final[dict[type, frozenset[str]]] = {
    RetrievalOptions: frozenset({"filter"}),
    RagOptions: frozenset({"conversation_history", "retrieval"}),
}
#: Fields never printed by ``config show`` (secrets).
SECRET: Final[frozenset[str]] = frozenset({"pdf_password", "pdf_passwords"})

__all__ = [
    "NESTED",
    "CacheOptions",
    "ChunkingOptions",
    "ParentOptions",
    "build",
    "filter_to_plain",
    "nested",
    "to_plain",
]


def _where(section: str, key: str) -> str:
    return f"{section}.{key}" if section else key


def nested(cls: type, value: Any, section: str, *, optional: bool = True) -> Any:
    """An option object from ``true`` (defaults), ``false`` (``None``, when *optional*), a table or an object."""
    if value is True:
        return build(cls, {}, section)
    if (value is False or value is None) and optional:
        return None
    if isinstance(value, cls):
        return value
    if isinstance(value, Mapping):
        return build(cls, value, section)
    accepted = "true (the defaults), false (off) or a table of its options" if optional else "a table of options"
    raise ConfigError(f"[{section}] must be {accepted}, not {value!r}", field=section, value=value)


def build(cls: type, table: Mapping[str, Any], section: str) -> Any:
    """An instance of the option class *cls* from *table*: unknown keys refused with a suggestion, nested
    option classes built from their own tables, every value validated by the class; errors name *section*."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"[{section}] must be a table of {cls.__name__} options, not {table!r}", field=section)
    refused = NOT_CONFIGURABLE.get(cls, frozenset()) & set(table)
    if refused:
        key = sorted(refused)[0]
        raise ConfigError(f"[{section}] {key} cannot be set in a configuration file", field=_where(section, key))
    values = dict(table)
    try:
        cls.check_keys(list(values))  # type: ignore[attr-defined]
    except ConfigError as exc:
        raise ConfigError(f"[{section}] {exc}", field=_where(section, exc.field or "")) from None
    for key, sub in NESTED.get(cls, {}).items():
        if key in values:
            values[key] = nested(sub, values[key], _where(section, key))
    if cls is SelfQueryOptions and not values.get("fields"):
        raise ConfigError(
            f"[{section}] self-query needs the fields the model may filter on: add a [{section}.fields.NAME] "
            'table per field (kind = "string", values = [...]) to ragwright.toml',
            field=_where(section, "fields"),
        )
    if cls is SelfQueryOptions and isinstance(values.get("fields"), Mapping):
        values["fields"] = {
            name: nested(AllowedField, spec, _where(section, f"fields.{name}"), optional=False)
            for name, spec in values["fields"].items()
        }
    try:
        return cls(**values)
    except ConfigError as exc:
        raise ConfigError(f"[{section}] {exc}", field=_where(section, exc.field or ""), value=exc.value) from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"[{section}] {exc}", field=section) from None


def filter_to_plain(flt: Filter | None) -> Any:
    """A metadata filter as the mapping a configuration file writes (AND of equalities and lists)."""
    if flt is None:
        return None
    clauses = flt.clauses if isinstance(flt, And) else (flt,)
    out: dict[str, Any] = {}
    for clause in clauses:
        if isinstance(clause, Eq):
            out[clause.key] = clause.value
        elif isinstance(clause, In):
            out[clause.key] = list(clause.values)
        else:
            return repr(flt)  # set in Python (Or, Not, Compare …): shown, not writable as a table
    return out


def to_plain(value: Any) -> Any:
    """Option objects as nested dicts of plain values (tuples as lists, filters as mappings), secrets left
    out; a nested option class that is ``None`` is ``False`` (how a file switches it off)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        out: dict[str, Any] = {}
        # a composed class (RetrievalOptions) is written under its flat names, as the file sets them
        flat = getattr(cls, "flat_names", None)
        names = flat() if callable(flat) else [f.name for f in dataclasses.fields(value)]
        for name in names:
            if name in SECRET or name in NOT_CONFIGURABLE.get(cls, frozenset()):
                continue
            item = getattr(value, name)
            if name == "metadata_filter":
                out[name] = filter_to_plain(item)
            elif item is None and name in NESTED.get(cls, {}):
                out[name] = False
            elif cls is SelfQueryOptions and name == "fields":
                out[name] = {n: to_plain(spec) for n, spec in item}
            elif cls is RewriteOptions and name == "glossary":
                out[name] = dict(item)
            else:
                out[name] = to_plain(item)
        return out
    if isinstance(value, tuple | list):
        return [to_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    return value
