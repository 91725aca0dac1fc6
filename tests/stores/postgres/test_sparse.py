"""Learned sparse vectors in ``sparsevec``: stored per chunk, searched under the filters, back-filled."""

import numpy as np

from ragwright.model.filters import as_filter
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.postgres import PostgresStore
from ragwright.testing.conformance import chunks_for
from ragwright.testing.doubles import HashingEmbedder
from tests.retrieve.test_sparse_arm import DOCS, WordEncoder


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
        store.bind_embedder(embedder.name, embedder.dimension)
        for d in range(12):
            chunks = chunks_for(
                f"d{d}",
                [f"refund money item {d} {i}" for i in range(3)],
                acl=(f"g{d % 3}",),
                metadata={"team": "ab"[d % 2]},
            )
            store.replace_document(
                DocumentRecord(f"d{d}", f"m:{d}", f"h{d}", DocumentStatus.INDEXED, chunk_count=3),
                chunks,
                embedder.embed_documents([c.text for c in chunks]),
            )
            texts = [c.text for c in chunks]
            store.put_sparse(
                list(zip([c.id for c in chunks], encoder.encode_documents(texts), strict=True)), encoder=encoder.name
            )
        for groups in [set(), {"g0"}, {"g1", "g2"}]:
            for team in [None, "a", "b"]:
                hits = store.search_sparse(
                    encoder.encode_query("refund"),
                    50,
                    identity=Identity(groups=tuple(sorted(groups))),
                    metadata_filter=as_filter({"team": team}) if team else None,
                )
                assert all(
                    set(h.chunk.acl) & groups and (team is None or h.chunk.metadata["team"] == team) for h in hits
                )
                expected = sum(1 for d in range(12) if f"g{d % 3}" in groups and (team is None or "ab"[d % 2] == team))
                assert len(hits) == expected * 3
                assert all(h.score > 0 for h in hits) and [h.score for h in hits] == sorted(
                    (h.score for h in hits), reverse=True
                )
        q = encoder.encode_query("refund")
        top = store.search_sparse(q, 1, identity=Identity(groups=("g0",)))
        assert np.isclose(top[0].score, q.dot(encoder.encode_documents([top[0].chunk.text])[0]))
