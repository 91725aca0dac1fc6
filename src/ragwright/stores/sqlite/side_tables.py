"""The side tables of an SQLite store file: the tables features keep beside the store's own.

A feature (the graph's ``graph_*``, the hierarchy's ``hier_*``, conversation memory's ``memory_*``)
creates its tables in the store's file on first use, through a second connection
(:func:`~ragwright.stores.side_tables.open_sql_side`). Unlike PostgreSQL, where each collection's schema
holds its own, every physical collection of a file shares them: when a store object follows its alias
to another collection, the feature brings their rows in step with that collection's chunks.

They are every table of the file the store's schema did not create (:func:`side_tables`): the global
tables, each collection's ``documents``/``chunks``/``parents`` and ``sparse_vectors`` (with their
``__<collection>`` names), the tag tables, and SQLite's own ``sqlite_*``. Wiping the store (the
``collection`` guard, :func:`~ragwright.stores.sqlite.opening.init_schema`) empties them
(:func:`empty_side_tables`) — their definitions stay, so a feature holding them open keeps working.
Dropping a collection that is not live leaves them: they hold the rows of the collections still there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ragwright.stores.sqlite.schema import GLOBAL_SCHEMA, MAIN_COLLECTION, Tables, collection_schema, created_names
from ragwright.stores.sqlite.sparse import sparse_table
from ragwright.stores.sqlite.tags import TAG_SCHEMA

if TYPE_CHECKING:
    import sqlite3

__all__ = ["empty_side_tables", "side_tables"]

#: The tables the store creates once per file.
_FILE_TABLES: Final = frozenset(created_names(GLOBAL_SCHEMA) | created_names(TAG_SCHEMA))
#: The tables the store creates per collection, by ``main``'s names; another collection's append
#: ``__<collection>`` (:class:`~ragwright.stores.sqlite.schema.Tables`, :func:`.sparse.sparse_table`).
_COLLECTION_TABLES: Final = frozenset(
    created_names(collection_schema(Tables.of(MAIN_COLLECTION))) | {sparse_table(MAIN_COLLECTION)}
)


def _store_table(name: str) -> bool:
    """Whether the store's schema creates *name* (or SQLite does): a collection's table whatever the
    collection, registered or not."""
    return name in _FILE_TABLES or name.startswith("sqlite_") or name.split("__", 1)[0] in _COLLECTION_TABLES


def side_tables(conn: sqlite3.Connection) -> list[str]:
    """The side tables of the file behind *conn*: its tables the store's schema did not create."""
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
    return [str(r[0]) for r in rows if not _store_table(str(r[0]))]


def empty_side_tables(conn: sqlite3.Connection) -> list[str]:
    """Delete every row of the file's side tables (inside the caller's transaction); returns them."""
    tables = side_tables(conn)
    for table in tables:
        conn.execute(f'DELETE FROM "{table}"')
    return tables
