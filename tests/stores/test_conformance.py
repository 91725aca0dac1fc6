from collections.abc import Iterator
from pathlib import Path

import pytest

from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.conformance import KeywordConformance, StoreConformance


class TestMemoryStore(StoreConformance, KeywordConformance):
    @pytest.fixture
    def store(self) -> Iterator[MemoryStore]:
        yield MemoryStore()


class TestSqliteStore(StoreConformance, KeywordConformance):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SqliteStore]:
        s = SqliteStore(tmp_path / "store.db")
        yield s
        s.close()
