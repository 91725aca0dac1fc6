"""Persistent memory's tests that take ``location`` run on SQLite and PostgreSQL (tests/graph/backends.py)."""

from tests.graph.backends import location
from tests.stores.postgres.conftest import pg_dsn, pg_server

__all__ = ["location", "pg_dsn", "pg_server"]
