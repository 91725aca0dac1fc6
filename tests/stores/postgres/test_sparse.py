"""Learned sparse vectors in ``sparsevec``: stored per chunk, searched under the filters, back-filled."""

import numpy as np

from ragwright.model.identity import Identity
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.postgres import PostgresStore
from ragwright.testing.doubles import HashingEmbedder
from tests.retrieve.test_sparse_arm import DOCS, WordEncoder, check_filtered_sparse_search, fill_for_filters


def test_sparse_arm_over_postgres(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as store:
        rag = Rag(store, HashingEmbedder(), sparse_encoder=WordEncoder())
        rag.ingest(BytesSource(DOCS, names={k: f"{k}.md" for k in DOCS}))
        assert store.count_chunks() >= 3 and store.missing_sparse("test/words") == []
        assert len(store.missing_sparse("another/encoder")) == store.count_chunks()
        only = rag.search("money", top_k=3, use_dense_search=False, use_keyword_search=False)
        assert [r.chunk.document_id for r in only] == ["refunds"] and set(only[0].arms) == {"sparse"}
        assert "sparse" in rag.search("money back", top_k=3)[0].arms
        rag.remove("refunds")  # the vectors go with their chunks
        assert rag.search("money", top_k=3, use_dense_search=False, use_keyword_search=False) == []
        assert store.missing_sparse("test/words") == []


def test_another_encoder_replaces_the_vectors(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as store:
        Rag(store, HashingEmbedder(), sparse_encoder=WordEncoder()).ingest(BytesSource(DOCS))
        assert store.sparse_encoder == "test/words"
        Rag(store, HashingEmbedder(), sparse_encoder=WordEncoder(name="test/v2")).ingest(BytesSource(DOCS))
        assert store.sparse_encoder == "test/v2" and store.missing_sparse("test/v2") == []


def test_the_sparse_arm_never_returns_a_filtered_chunk(pg_dsn: str) -> None:
    embedder, encoder = HashingEmbedder(dimension=16), WordEncoder()
    with PostgresStore(pg_dsn) as store:
        fill_for_filters(store, embedder, encoder)
        for groups in [set(), {"g0"}, {"g1", "g2"}]:
            for team in [None, "a", "b"]:
                check_filtered_sparse_search(store, encoder, groups, team)
        q = encoder.encode_query("refund")
        top = store.search_sparse(q, 1, identity=Identity(groups=("g0",)))
        assert np.isclose(top[0].score, q.dot(encoder.encode_documents([top[0].chunk.text])[0]))
