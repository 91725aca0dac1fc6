"""The Collections capability (issue 23 seam 1): the shipped conformance suite on SQLite and memory."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.collections import CollectionsConformance


class TestMemoryCollections(CollectionsConformance):
    @pytest.fixture
    def store(self) -> Iterator[MemoryStore]:
        yield MemoryStore()


class TestSqliteCollections(CollectionsConformance):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SqliteStore]:
        s = SqliteStore(tmp_path / "store.db")
        yield s
        s.close()


def test_a_pinned_sqlite_store_is_a_constructor_argument(tmp_path: Path) -> None:
    from ragwright.errors import StoreError

    with SqliteStore(tmp_path / "s.db") as store:
        name = store.create_collection()
        with SqliteStore(tmp_path / "s.db", pinned=name) as pinned:
            assert pinned.current_collection == name and pinned.live_collection == "main"
        with pytest.raises(StoreError, match="no collection 'g9'"):
            SqliteStore(tmp_path / "s.db", pinned="g9")
