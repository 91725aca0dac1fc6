"""The store conformance suites on PostgreSQL, through both dense paths (exact and HNSW)."""

from collections.abc import Iterator

import pytest

from ragwright.stores.postgres import PostgresOptions, PostgresStore
from ragwright.testing.conformance import KeywordConformance, StoreConformance


class TestPostgresStore(StoreConformance, KeywordConformance):
    @pytest.fixture
    def store(self, pg_dsn: str) -> Iterator[PostgresStore]:
        s = PostgresStore(pg_dsn)
        yield s
        s.close()


class TestPostgresStoreThroughTheIndex(StoreConformance):
    """``exact_threshold=0``: every query goes to the planner with the HNSW index allowed."""

    @pytest.fixture
    def store(self, pg_dsn: str) -> Iterator[PostgresStore]:
        s = PostgresStore(pg_dsn, options=PostgresOptions(exact_threshold=0, schema="other_schema"))
        yield s
        s.close()
