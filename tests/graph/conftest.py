"""The graph's tests run on both stores (see backends.py)."""

from tests.graph.backends import location
from tests.stores.postgres.conftest import pg_dsn, pg_server

__all__ = ["location", "pg_dsn", "pg_server"]
