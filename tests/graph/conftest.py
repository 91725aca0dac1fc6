"""The graph's tests run on both stores: ``location`` is an SQLite file, or a fresh database of the
embedded PostgreSQL server of tests/stores/postgres (those runs are marked ``integration``)."""

from pathlib import Path

import pytest

from tests.stores.postgres.conftest import pg_dsn, pg_server

__all__ = ["location", "pg_dsn", "pg_server"]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the test's store lives: ``…/s.db`` or ``postgresql://…`` (see backends.open_at)."""
    if request.param == "sqlite":
        return str(tmp_path / "s.db")
    return str(request.getfixturevalue("pg_dsn"))
