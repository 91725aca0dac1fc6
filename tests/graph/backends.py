"""The stores the side-table tests (graph, hierarchy) run on: a location is an SQLite file or a
``postgresql://`` database of the embedded PostgreSQL server of tests/stores/postgres.

A conftest imports :func:`location` with ``pg_dsn`` and ``pg_server``; the PostgreSQL runs are marked
``integration``. A test module that needs SQLite alone overrides ``location`` with its own fixture.
"""

from pathlib import Path

import pytest

from ragwright.stores.base import Store


def open_at(location: str) -> Store:
    """The store at *location*, opened again (a test reopens it as a later process would)."""
    if location.startswith("postgresql://"):
        from ragwright.stores.postgres import PostgresStore

        return PostgresStore(location)
    from ragwright.stores.sqlite import SqliteStore

    return SqliteStore(location)


def open_following(location: str) -> Store:
    """The store at *location* as another process holds it open: on PostgreSQL following the alias at
    every query (``follow_alias_s=0``), so another's reindex is seen at once."""
    if not location.startswith("postgresql://"):
        return open_at(location)
    from ragwright.stores.postgres import PostgresOptions, PostgresStore

    return PostgresStore(location, options=PostgresOptions(follow_alias_s=0))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the test's store lives: ``…/s.db`` or ``postgresql://…`` (a fresh database)."""
    if request.param == "sqlite":
        return str(tmp_path / "s.db")
    return str(request.getfixturevalue("pg_dsn"))
