"""Which sources a federated search covers, how much each is trusted, and how results merge.

A *source* is named: a physical collection of the main store (``main``, ``g2`` … as
:class:`~ragwright.stores.base.Collections` names them; ``live`` is the collection the store's alias
names, i.e. the main store as it is), or another store opened from a URI (``postgresql://…``, a SQLite
path) under a name of the caller's choosing. Each source has a *trust weight* (> 0) that scales its
contribution to the weighted reciprocal rank fusion of the merged list.

The one text syntax (CLI, configuration file, HTTP server)::

    collections = "live,g2=0.5"            # NAME[=WEIGHT], comma-separated (weight 1 when left out)
    stores      = "pg=postgresql://u@h/db"  # NAME=URI, comma-separated: another store, named

A store named in ``stores`` but not in ``collections`` joins with weight 1; ``stores`` without any
``collections`` federates the main store (``live``) with them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ragwright._validate import check_float, check_int
from ragwright.errors import ConfigError

#: The source name meaning the main store as it is (the collection its ``live`` alias names).
LIVE: Final = "live"
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_NAME_RULE: Final = "letters, digits, '_', '.' or '-' (at most 64, not starting with '.' or '-')"


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError.invalid("federation source name", name, _NAME_RULE)
    return name


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """One federated source: *name*, trust *weight* (> 0) and, for another store, its *uri*
    (``None``: a collection of the main store, or ``live``)."""

    name: str
    weight: float = 1.0
    uri: str | None = None

    def __post_init__(self) -> None:
        _check_name(self.name)
        if isinstance(self.weight, int) and not isinstance(self.weight, bool):
            object.__setattr__(self, "weight", float(self.weight))
        check_float(f"federation weight of {self.name!r}", self.weight, lo=0.0, lo_open=True)
        if self.uri is not None and (not isinstance(self.uri, str) or not self.uri.strip()):
            raise ConfigError.invalid(f"federation store {self.name!r}", self.uri, "a store URI or path")


@dataclass(frozen=True, slots=True)
class FederationOptions:
    """A federated search: the *sources* (at least one, unique names), the RRF constant *rrf_k*
    (``score = Σ weight / (rrf_k + rank)``) and, optionally, *source_timeout_s*: a source slower than
    that is reported failed and the others answer (``None``: wait for every source)."""

    sources: tuple[SourceSpec, ...] = field(default=())
    rrf_k: int = 60
    source_timeout_s: float | None = None

    def __post_init__(self) -> None:
        sources = tuple(self.sources)
        if not sources or not all(isinstance(s, SourceSpec) for s in sources):
            raise ConfigError.invalid(
                "federation sources", self.sources, "one or more sources, e.g. collections = 'live,g2=0.5'"
            )
        seen: set[str] = set()
        for spec in sources:
            if spec.name in seen:
                raise ConfigError.invalid("federation sources", spec.name, "each source named once")
            seen.add(spec.name)
        object.__setattr__(self, "sources", sources)
        check_int("federation rrf_k", self.rrf_k, minimum=1)
        check_float("federation source_timeout_s", self.source_timeout_s, lo=0.0, lo_open=True, optional=True)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.sources)

    @property
    def weights(self) -> dict[str, float]:
        return {s.name: s.weight for s in self.sources}

    @classmethod
    def parse(
        cls,
        collections: str | Sequence[str] | Mapping[str, float] | None = None,
        stores: str | Mapping[str, str] | None = None,
        *,
        rrf_k: int = 60,
        source_timeout_s: float | None = None,
    ) -> FederationOptions:
        """Options from the text syntax (module docstring), a list of ``NAME[=WEIGHT]`` or a mapping
        ``{name: weight}``; *stores* as ``NAME=URI,…`` or ``{name: uri}``."""
        weights = parse_weights(collections)
        uris = parse_stores(stores)
        if not weights and uris:
            weights[LIVE] = 1.0
        for name in uris:
            weights.setdefault(name, 1.0)
        specs = tuple(SourceSpec(name, weight, uris.get(name)) for name, weight in weights.items())
        return cls(specs, rrf_k=rrf_k, source_timeout_s=source_timeout_s)

    @classmethod
    def from_table(cls, table: Any) -> FederationOptions | None:
        """The ``[federation]`` table of ``ragwright.toml`` (``collections``, ``stores``, ``rrf_k``,
        ``source_timeout_s``); ``None`` when it names no source (federation off)."""
        if table is None or table is False:
            return None
        if not isinstance(table, Mapping):
            raise ConfigError(f"[federation] must be a table, not {table!r}", field="federation")
        unknown = sorted(set(table) - {"collections", "stores", "rrf_k", "source_timeout_s"})
        if unknown:
            raise ConfigError(
                f"[federation] unknown key {unknown[0]!r} (accepted: collections, stores, rrf_k, source_timeout_s)",
                field=f"federation.{unknown[0]}",
            )
        if not table.get("collections") and not table.get("stores"):
            return None
        return cls.parse(
            table.get("collections"),
            table.get("stores"),
            rrf_k=table.get("rrf_k", 60),
            source_timeout_s=table.get("source_timeout_s"),
        )

    def to_table(self) -> dict[str, Any]:
        """The ``[federation]`` table these options come from (``config show``); URIs with a password masked."""
        return {
            "collections": [s.name if s.weight == 1.0 else f"{s.name}={s.weight:g}" for s in self.sources],
            "stores": {s.name: _mask(s.uri) for s in self.sources if s.uri is not None},
            "rrf_k": self.rrf_k,
            "source_timeout_s": self.source_timeout_s,
        }


def parse_weights(value: str | Sequence[str] | Mapping[str, float] | None) -> dict[str, float]:
    """``"a=1.0,b=0.5"`` (or ``["a", "b=0.5"]``, or ``{"a": 1.0}``) → ``{name: weight}``, in order."""
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        out: dict[str, float] = {}
        for key, number in value.items():
            spec = SourceSpec(_check_name(key), number)
            out[spec.name] = spec.weight
        return out
    items = value.split(",") if isinstance(value, str) else list(value)
    out = {}
    for item in items:
        if not isinstance(item, str):
            raise ConfigError.invalid("federation collections", value, "NAME[=WEIGHT] entries, e.g. 'live,g2=0.5'")
        text = item.strip()
        if not text:
            continue
        name, sep, raw = text.partition("=")
        name = _check_name(name.strip())
        given: Any = _number(raw) if sep else 1.0
        if name in out:
            raise ConfigError.invalid("federation collections", text, "each source named once")
        out[name] = SourceSpec(name, given).weight
    return out


def _number(text: str) -> Any:
    """*text* as a finite float, else the text itself (which the weight check then refuses by name)."""
    try:
        value = float(text)
    except ValueError:
        return text.strip()
    return value if math.isfinite(value) else text.strip()


def parse_stores(value: str | Mapping[str, str] | None) -> dict[str, str]:
    """``"pg=postgresql://u@h/db,b=/data/b.db"`` (or ``{name: uri}``) → ``{name: uri}``."""
    if value is None or value == "":
        return {}
    pairs: list[tuple[Any, Any]]
    if isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, str):
        pairs = []
        for item in value.split(","):
            if not item.strip():
                continue
            name, sep, uri = item.strip().partition("=")
            if not sep or not uri.strip():
                raise ConfigError.invalid("federation store", item.strip(), "NAME=URI, e.g. pg=postgresql://u@h/db")
            pairs.append((name.strip(), uri.strip()))
    else:
        raise ConfigError.invalid("federation stores", value, "NAME=URI entries or a table {name = uri}")
    out: dict[str, str] = {}
    for name, uri in pairs:
        spec = SourceSpec(_check_name(name), 1.0, uri)
        if spec.name == LIVE:
            raise ConfigError.invalid("federation store", spec.name, f"a name other than {LIVE!r} (the main store)")
        if spec.name in out:
            raise ConfigError.invalid("federation stores", spec.name, "each store named once")
        out[spec.name] = uri
    return out


def _mask(uri: str | None) -> str | None:
    """A URI with its password replaced by ``***``."""
    if not uri or "://" not in uri or "@" not in uri:
        return uri
    scheme, _, rest = uri.partition("://")
    auth, _, host = rest.rpartition("@")
    if ":" not in auth:
        return uri
    return f"{scheme}://{auth.split(':', 1)[0]}:***@{host}"
