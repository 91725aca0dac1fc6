"""Cache keys: everything that changes the answer, and the caller's permissions.

A key holds the layer, the index version, the caller's ACL signature (tenant + sorted groups,
hashed: :meth:`Identity.acl_signature`) and a digest of the rest — models, prompt version, the
normalised query and every option (filters included). Two callers share an entry only when they
can see exactly the same documents; an ingestion, deletion or ACL change bumps the index version,
so every older key becomes unreachable.

Options that cannot be keyed faithfully (a :class:`~ragwright.model.specs.PredicateSpec` wraps
arbitrary code) make a call uncacheable rather than risk a wrong hit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from ragwright.model.identity import Identity

_SPACE = re.compile(r"\s+")
T = TypeVar("T")


class Uncacheable(Exception):
    """A value that cannot be part of a cache key (code, unknown objects)."""


def normalize_query(text: str) -> str:
    """Conservative normalisation: trim, collapse whitespace, lowercase (never drop words)."""
    return _SPACE.sub(" ", text.strip()).lower()


def canonical(value: Any, *, skip: frozenset[str] = frozenset()) -> Any:
    """A JSON-able, order-stable form of *value*; raises :class:`Uncacheable` for code or unknown objects.

    Dataclasses (options, filters, specifications, messages) become their type name and fields
    (minus *skip* at the top level).
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Enum):
        return [type(value).__name__, canonical(value.value)]
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, Mapping):
        return {str(k): canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name not in skip}
        return {"__type__": f"{type(value).__module__}.{type(value).__qualname__}", **fields}
    raise Uncacheable(f"{type(value).__name__} cannot be part of a cache key")


def digest(value: Any) -> str:
    """SHA-256 (hex, 32 chars) of the canonical JSON of *value*."""
    text = json.dumps(canonical(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def acl_signature(identity: Identity | None) -> str:
    """The caller's visibility (tenant + sorted groups, hashed); ``"-"`` when no identity applies."""
    return "-" if identity is None else identity.acl_signature()


def make_key(
    layer: str,
    *,
    namespace: str,
    index_version: int | None,
    identity: Identity | None,
    parts: Mapping[str, Any],
) -> str:
    """``namespace:layer:v<index version>:<acl signature>:<digest of parts>``."""
    version = "-" if index_version is None else str(index_version)
    return f"{namespace}:{layer}:v{version}:{acl_signature(identity)}:{digest(parts)}"


@dataclass(frozen=True, slots=True)
class CacheScope:
    """What the outer retrieval call knows, for the cached models below it (embeddings, reranks); it
    rides on the retrieval request (``RetrievalRequest.cache``) and binds them with :func:`bind_scope`."""

    index_version: int | None
    identity: Identity | None
    models: tuple[tuple[str, str], ...] = ()
    prompt_version: str = ""
    filters: str = ""


def bind_scope(model: T, scope: CacheScope | None, *, fresh: bool = False) -> T:
    """*model* (an embedder or reranker) as it should serve one retrieval call: a cached one keyed by
    *scope* (the caller's permissions, the index version …) and, with *fresh*, bypassing its cache;
    any other model unchanged. The scope travels on the request, never in module-level context."""
    bind = getattr(model, "scoped", None)
    if not callable(bind):
        return model
    bound: T = bind(scope, fresh=fresh)
    return bound
