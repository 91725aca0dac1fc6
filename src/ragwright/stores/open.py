"""Open a store from a URI: the one place that knows which scheme means which backend.

The facade (``Rag.open``), the CLI (``--store``), the HTTP server, ``ragwright eval`` and the
distributed worker all open stores here, so ``--store postgresql://…`` means PostgreSQL everywhere.

=========================================  ==============================================
``postgresql://user@host:port/db``          the PostgreSQL store (``pip install 'ragwright[postgres]'``)
``postgres://…``                           the same
``sqlite:///abs/path.db``, ``sqlite:rel.db``  a SQLite file
anything else without a ``scheme://``      a SQLite file at that path (created when absent)
=========================================  ==============================================

An unknown ``scheme://`` is refused (it would otherwise become a folder named ``scheme:``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from ragwright.errors import ConfigError
from ragwright.stores.base import Store

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(//)?")
# A URI that went through pathlib (click.Path, Path(...)) lost one slash: "postgresql:/u@h/db".
_COLLAPSED = re.compile(r"^(postgres(?:ql)?):/(?!/)")


def _sqlite(target: str, collection: str | None, keyword_analyzer: str, options: Any) -> Store:
    from ragwright.stores.sqlite import SqliteStore

    return SqliteStore(target, collection=collection, keyword_analyzer=keyword_analyzer)


def _postgres(target: str, collection: str | None, keyword_analyzer: str, options: Any) -> Store:
    from ragwright.stores.postgres import PostgresStore

    return PostgresStore(target, collection=collection, keyword_analyzer=keyword_analyzer, options=options)


#: scheme → (opener, whether the opener takes the whole URI rather than the path after the scheme)
SCHEMES: Final[dict[str, tuple[Callable[[str, str | None, str, Any], Store], bool]]] = {
    "postgresql": (_postgres, True),
    "postgres": (_postgres, True),
    "sqlite": (_sqlite, False),
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
        raise ConfigError.invalid("store", text, "a file path, sqlite:///PATH or postgresql://user@host:port/database")
    return None, text


def is_remote(uri: str | Path) -> bool:
    """Whether *uri* names a database server rather than a file (no file to check or create)."""
    scheme, _ = _split(store_uri(uri))
    return scheme is not None and SCHEMES[scheme][1]


def sqlite_path(uri: str | Path) -> Path | None:
    """The file a SQLite store URI names; ``None`` for a server."""
    scheme, rest = _split(store_uri(uri))
    if scheme is None:
        return Path(rest)
    return None if SCHEMES[scheme][1] else Path(rest)


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
        opener, whole = SCHEMES[scheme]
        if whole:
            return opener(text, collection, keyword_analyzer, postgres_options)
    path = Path(rest)
    if must_exist and not path.exists():
        raise ConfigError(f"no store at {path}; ingest something first (ragwright ingest PATH)")
    return _sqlite(str(path), collection, keyword_analyzer, None)
