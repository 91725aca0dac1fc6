"""The stores the graph's tests run on: a location is an SQLite file or a ``postgresql://`` database."""

from ragwright.stores.base import Store


def open_at(location: str) -> Store:
    """The store at *location*, opened again (a test reopens it as a later process would)."""
    if location.startswith("postgresql://"):
        from ragwright.stores.postgres import PostgresStore

        return PostgresStore(location)
    from ragwright.stores.sqlite import SqliteStore

    return SqliteStore(location)
