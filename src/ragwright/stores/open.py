"""Open a store from a URI: the one place that knows which scheme means which backend.

The facade (``Rag.open``), the CLI (``--store``), the HTTP server, ``ragwright eval`` and the
distributed worker all open stores here, so ``--store postgresql://…`` means PostgreSQL everywhere.

=========================================  ==============================================
``postgresql://user@host:port/db``          the PostgreSQL store (``pip install 'ragwright[postgres]'``)
``postgres://…``                           the same
``sqlite:///abs/path.db``, ``sqlite:rel.db``  a SQLite file
``memory:``                                a new in-process :class:`MemoryStore` (lost at exit)
anything else without a ``scheme://``      a SQLite file at that path (created when absent)
=========================================  ==============================================

An unknown ``scheme://`` is refused (it would otherwise become a folder named ``scheme:``).

A store records the embedder it was built with (``bind_embedder(..., spec=)``);
:func:`embedder_spec_of` reads it back, so whoever opens the store loads the same model.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Literal, NamedTuple

from ragwright.errors import ConfigError
from ragwright.stores.base import EmbeddingInfo, Store

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(//)?")
# A URI that went through pathlib (click.Path, Path(...)) lost one slash: "postgresql:/u@h/db".
_COLLAPSED = re.compile(r"^(postgres(?:ql)?):/(?!/)")


def _sqlite(target: str, collection: str | None, keyword_analyzer: str, options: Any) -> Store:
    from ragwright.stores.sqlite import SqliteStore

    return SqliteStore(target, collection=collection, keyword_analyzer=keyword_analyzer)


def _postgres(target: str, collection: str | None, keyword_analyzer: str, options: Any) -> Store:
    from ragwright.stores.postgres import PostgresStore

    return PostgresStore(target, collection=collection, keyword_analyzer=keyword_analyzer, options=options)


def _memory(target: str, collection: str | None, keyword_analyzer: str, options: Any) -> Store:
    from ragwright.stores.memory import MemoryStore

    if target.strip("/"):
        raise ConfigError.invalid("store", f"memory:{target}", "memory: (an in-process store has no path)")
    return MemoryStore(keyword_analyzer=keyword_analyzer)


Opener = Callable[[str, str | None, str, Any], Store]


class Scheme(NamedTuple):
    """How a URI scheme opens: *opener* gets the whole URI (a server) or the rest after the scheme."""

    opener: Opener
    #: where the data lives: ``server`` (the opener takes the whole URI), ``file`` or ``process``
    kind: Literal["server", "file", "process"]


SCHEMES: Final[dict[str, Scheme]] = {
    "postgresql": Scheme(_postgres, "server"),
    "postgres": Scheme(_postgres, "server"),
    "sqlite": Scheme(_sqlite, "file"),
    "memory": Scheme(_memory, "process"),
}


def store_uri(uri: str | Path) -> str:
    """*uri* as text, with the slash pathlib removes from ``postgresql://`` put back."""
    return _COLLAPSED.sub(r"\1://", str(uri))


def _split(text: str) -> tuple[str | None, str]:
    """``(scheme, rest)`` of a store URI; ``(None, text)`` for a plain path (a drive letter, or a colon in a
    file name without ``//``, is no scheme). An unknown ``scheme://`` is refused."""
    match = _SCHEME.match(text)
    if match is None or len(match.group(1)) == 1:
        return None, text
    scheme = match.group(1).lower()
    if scheme in SCHEMES:
        return scheme, text[match.end() :]
    if match.group(2) is not None:
        raise ConfigError.invalid(
            "store", text, "a file path, sqlite:///PATH, postgresql://user@host:port/database or memory:"
        )
    return None, text


def is_remote(uri: str | Path) -> bool:
    """Whether *uri* names a database server rather than a file (no file to check or create)."""
    scheme, _ = _split(store_uri(uri))
    return scheme is not None and SCHEMES[scheme].kind == "server"


def sqlite_path(uri: str | Path) -> Path | None:
    """The file a SQLite store URI names; ``None`` for a server or an in-process store."""
    scheme, rest = _split(store_uri(uri))
    if scheme is None:
        return Path(rest)
    return Path(rest) if SCHEMES[scheme].kind == "file" else None


def open_store(
    uri: str | Path,
    *,
    collection: str | None = None,
    keyword_analyzer: str = "auto",
    must_exist: bool = False,
    postgres_options: Any = None,
) -> Store:
    """Open the store *uri* names (see the module docstring for the schemes).

    *must_exist*: refuse a SQLite file that does not exist yet instead of creating it (commands that only
    read); *postgres_options*: a :class:`~ragwright.stores.postgres.PostgresOptions`.
    """
    text = store_uri(uri)
    scheme, rest = _split(text)
    if scheme is not None:
        opener, kind = SCHEMES[scheme]
        if kind == "server":
            return opener(text, collection, keyword_analyzer, postgres_options)
        if kind == "process":
            return opener(rest, collection, keyword_analyzer, None)
    path = Path(rest)
    if must_exist and not path.exists():
        raise ConfigError(f"no store at {path}; ingest something first (ragwright ingest PATH)")
    return _sqlite(str(path), collection, keyword_analyzer, None)


#: Stores written before the spec was recorded: the spec their model's name implies (exact prefixes of
#: the names ``load_embedder`` builds; any other model needs ``--embedder``).
_LEGACY_SPECS: Final = (("wordllama/l2_supercat-256", "wordllama"),)


def embedder_spec_of(store: EmbeddingInfo, default: str = "default") -> str:
    """The embedder spec to open *store* with: the one recorded when it was built; for a store that
    predates recorded specs, the spec its model's name implies; for an empty store, *default*."""
    recorded = store.embedder_spec
    if recorded:
        return recorded
    bound = store.embedding_model
    if bound is not None:
        for name, spec in _LEGACY_SPECS:
            if bound[0] == name:
                return spec
    return default
