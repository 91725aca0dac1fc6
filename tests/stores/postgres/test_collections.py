"""PostgreSQL has no physical collections yet (issue 23 seam 1): reindex says so instead of half-working."""

from __future__ import annotations

import pytest

from ragwright.errors import ConfigError
from ragwright.rag import Rag
from ragwright.stores.base import Collections
from ragwright.stores.postgres import PostgresStore
from ragwright.testing.doubles import HashingEmbedder


def test_reindex_and_collections_on_postgres_are_refused_clearly(pg_dsn: str) -> None:
    with Rag(PostgresStore(pg_dsn), HashingEmbedder()) as rag:
        assert not isinstance(rag.store, Collections)
        with pytest.raises(ConfigError, match="PostgresStore does not support reindex"):
            rag.reindex(embedder=HashingEmbedder(dimension=64, name="test/other"))
        assert rag.collections() == []
        with pytest.raises(ConfigError, match="no collections"):
            rag.drop_collection("main")
