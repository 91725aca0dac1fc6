"""Physical collections on PostgreSQL (issue 23 seam 1): the shipped conformance suite, a blue/green
reindex through ``Rag`` (new chunks served, tenant/ACL filters kept), following the alias, abandoned
builds, and a store written before collections existed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from ragwright.errors import StoreError
from ragwright.model.identity import Identity
from ragwright.options import ChunkingOptions
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.base import Collections
from ragwright.stores.postgres import PostgresOptions, PostgresStore
from ragwright.testing.collections import CollectionsConformance
from ragwright.testing.conformance import DIM, chunks_for, record, unit
from ragwright.testing.doubles import HashingEmbedder
from tests.security.test_leaks import build, identities, probe, visible

EVERY_READ = PostgresOptions(follow_alias_s=0)  # re-read the alias before every operation


class TestPostgresCollections(CollectionsConformance):
    @pytest.fixture
    def store(self, pg_dsn: str) -> Iterator[PostgresStore]:
        s = PostgresStore(pg_dsn)
        yield s
        s.close()


def _put(store: PostgresStore, doc_id: str) -> None:
    store.replace_document(record(doc_id, 1), chunks_for(doc_id, [f"text of {doc_id}"]), np.stack([unit(1, 0.5)]))


def _docs(store: Any) -> set[str]:
    return {h.chunk.document_id for h in store.search_dense(unit(1, 0.5), 10, identity=Identity())}


def _old_and_built(admin: PostgresStore, reader: PostgresStore, *, new_model: str) -> str:
    """Document "old" live under model-a, and a new collection (not yet switched to) holding "new"."""
    admin.bind_embedder("model-a", DIM)
    reader.bind_embedder("model-a", DIM)
    _put(admin, "old")
    name = admin.create_collection()
    with admin.open_collection(name) as built:
        built.bind_embedder(new_model, DIM)
        _put(built, "new")
    return name


def test_a_collection_is_a_schema_of_its_own_with_its_own_hnsw_index(pg_dsn: str) -> None:
    import psycopg

    with PostgresStore(pg_dsn) as store:
        store.bind_embedder("model-a", DIM)
        name = store.create_collection()
        with store.open_collection(name) as built:
            built.bind_embedder("model-b", 8)
        with psycopg.connect(pg_dsn) as conn:
            indexes = {
                (r[0], r[1])
                for r in conn.execute("SELECT schemaname, indexname FROM pg_indexes WHERE indexname = 'chunks_hnsw'")
            }
            typed = conn.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = 'ragwright__g2.chunks'::regclass AND attname = 'vector'"
            ).fetchone()
        assert indexes == {("ragwright", "chunks_hnsw"), ("ragwright__g2", "chunks_hnsw")}
        assert typed is not None and typed[0] == "vector(8)"


def test_a_table_created_on_first_use_belongs_to_the_collection_that_created_it(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as store:
        store.bind_embedder("model-a", DIM)
        with store._conn() as conn:  # a feature's side table, created lazily in main
            conn.execute("CREATE TABLE IF NOT EXISTS side_rows (k TEXT PRIMARY KEY)")
            conn.execute("INSERT INTO side_rows VALUES ('main row')")
        name = store.create_collection()
        with store.open_collection(name) as built:
            with built._conn() as conn:
                assert conn.execute("SELECT to_regclass('side_rows')").fetchone() == (None,)
                conn.execute("CREATE TABLE IF NOT EXISTS side_rows (k TEXT PRIMARY KEY)")
                assert conn.execute("SELECT count(*) FROM side_rows").fetchone() == (0,)
                staged = conn.execute("SELECT relkind FROM pg_class WHERE oid = to_regclass('staged')").fetchone()
            built.stage("h1", b"bytes")  # staging is shared: through the view, into the store's table
        assert staged == ("v",) and store.staged("h1") == b"bytes"  # a view in the collection's schema


def test_reindex_with_a_new_chunker_serves_the_new_chunks_and_keeps_tenant_and_acl_filters(pg_dsn: str) -> None:
    rag, access = build(PostgresStore(pg_dsn), seed=5)
    try:
        old_chunks = rag.store.count_chunks()
        old_ids = {c.id for c in rag.store.document_chunks("doc0.md")}
        # the same model with a longer window, and a chunker using it: whole sections instead of paragraphs
        report = rag.reindex(embedder=HashingEmbedder(max_tokens=512), chunking=ChunkingOptions(max_tokens=256))
        assert report.switched and report.reason is None, report.reason
        assert (report.previous, report.collection) == ("main", "g2")
        assert report.build.added == 40 and not report.build.failed
        store = rag.store
        assert isinstance(store, Collections) and store.current_collection == "g2"
        new_chunks = store.count_chunks()
        assert new_chunks < old_chunks  # the new chunker's (larger) chunks are what is served
        assert not old_ids & {c.id for c in store.document_chunks("doc0.md")}
        for doc in ("doc0.md", "doc7.md"):
            served = store.document_chunks(doc)
            assert served and {(c.tenant, c.acl) for c in served} == {(access[doc][0], access[doc][1])}
        assert rag.check() == []
        probes, leaks = probe(rag, access, rounds=1)
        assert probes > 50 and leaks == 0
        for identity in identities()[:4]:  # every visible document is still found, and only those
            allowed = visible(identity, access)
            found = {r.document_id for r in rag.search("the", top_k=40, identity=identity)}
            assert found <= allowed
        assert rag.drop_collection("main") == ["main"]
        assert [c["name"] for c in rag.collections()] == ["g2"]
        probes, leaks = probe(rag, access, rounds=1)
        assert probes > 50 and leaks == 0
    finally:
        rag.close()


def test_reindex_with_a_new_embedder_and_reopening(pg_dsn: str) -> None:
    one = PostgresOptions(pool_size=1)  # the switch's check reads the live collection while the alias is locked
    with Rag(PostgresStore(pg_dsn, options=one), HashingEmbedder()) as rag:
        notes = {f"n{i}.md": f"# Note {i}\n\nThe marker uniq{i}tok is here.".encode() for i in range(6)}
        rag.ingest(BytesSource(notes))
        new = HashingEmbedder(dimension=48, name="test/hashing-pg")
        report = rag.reindex(embedder=new, drop_old=True)
        assert report.switched and report.dropped == ["main"]
        assert rag.store.embedding_model == ("test/hashing-pg", 48)
        assert [r.document_id for r in rag.search("uniq3tok", top_k=1)] == ["n3.md"]
        with PostgresStore(pg_dsn) as reopened:  # a fresh object opens on the live collection
            assert reopened.current_collection == "g2" and reopened.embedding_model == ("test/hashing-pg", 48)
        again = rag.ingest(BytesSource({"n9.md": b"# Late\n\nThe marker uniq9tok arrives after."}))
        assert again.added == 1 and [r.document_id for r in rag.search("uniq9tok", top_k=1)] == ["n9.md"]


def test_a_store_object_follows_the_alias_and_its_writes_go_to_the_new_collection(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as admin, PostgresStore(pg_dsn, options=EVERY_READ) as reader:
        name = _old_and_built(admin, reader, new_model="model-a")
        assert _docs(reader) == {"old"}
        admin.switch_alias(name)
        assert _docs(reader) == {"new"} and reader.current_collection == name
        with PostgresStore(pg_dsn) as writer:  # the default: reads re-check the alias every second
            writer.bind_embedder("model-a", DIM)
            _put(writer, "later")
        assert _docs(reader) == {"new", "later"}
        with admin.open_collection("main") as old:
            assert _docs(old) == {"old"}


def test_a_store_object_bound_to_the_old_model_keeps_reading_and_refuses_writes(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as admin, PostgresStore(pg_dsn, options=EVERY_READ) as reader:
        name = _old_and_built(admin, reader, new_model="model-b")
        admin.switch_alias(name)
        assert _docs(reader) == {"old"} and reader.current_collection == "main"
        with pytest.raises(StoreError, match="reopen it"):
            _put(reader, "lost")
        with admin.open_live() as live:
            live.drop_collection("main")
        with pytest.raises(StoreError, match="was dropped; reopen"):
            _docs(reader)


def test_a_write_waits_for_a_switch_and_lands_in_the_new_collection(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as admin, PostgresStore(pg_dsn, options=PostgresOptions(follow_alias_s=3600)) as w:
        admin.bind_embedder("model-a", DIM)
        w.bind_embedder("model-a", DIM)
        name = admin.create_collection()
        with admin.open_collection(name) as built:
            built.bind_embedder("model-a", DIM)
        seen: list[str] = []

        def check() -> None:
            _put(w, "during")  # blocks on the alias row until the switch commits (another thread)
            seen.append(w.current_collection)

        import threading

        import psycopg

        def switch_check() -> str | None:
            thread.start()
            with psycopg.connect(pg_dsn, autocommit=True) as conn:  # wait until the write waits for a lock
                while not conn.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%%rag_aliases%%'"
                ).fetchone():
                    assert thread.is_alive() and not seen  # the write never passes the switch's lock
            return None

        thread = threading.Thread(target=check)
        admin.switch_alias(name, check=switch_check)
        thread.join()
        assert seen == [name]
        with admin.open_collection(name) as new, admin.open_collection("main") as old:
            assert _docs(new) == {"during"} and _docs(old) == set()


def test_a_build_whose_process_died_is_dropped_and_a_running_one_is_kept(pg_dsn: str) -> None:
    script = textwrap.dedent(
        f"""
        import os
        from ragwright.stores.postgres import PostgresStore
        store = PostgresStore({pg_dsn!r})
        print(store.create_collection(building=True), flush=True)
        os._exit(0)  # killed mid-build: no close, no cleanup
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    dead = out.stdout.strip()
    with PostgresStore(pg_dsn) as store:
        mine = store.create_collection(building=True)
        assert [c.name for c in store.collections()] == ["main", mine]  # dropped when the store was opened
        assert (dead, mine) == ("g2", "g3")  # a dropped collection's name is not given again
        with PostgresStore(pg_dsn) as other:
            assert other.drop_abandoned_builds() == []  # this process's build holds its lock
        assert store.drop_abandoned_builds() == []


def test_a_store_written_before_collections_opens_and_is_migrated(pg_dsn: str) -> None:
    import psycopg

    from ragwright.stores.postgres.schema import MIGRATIONS

    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # the layout of schema version 3
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE SCHEMA ragwright")
        conn.execute("SET search_path TO ragwright, public")
        conn.execute("CREATE TABLE rag_schema_version (version INT PRIMARY KEY, applied_at TIMESTAMPTZ DEFAULT now())")
        for version, statements in MIGRATIONS:
            if version <= 3:
                for statement in statements:
                    conn.execute(statement)
                conn.execute("INSERT INTO rag_schema_version(version) VALUES (%s)", (version,))
        conn.execute("INSERT INTO rag_metadata VALUES ('store_id', 'old')")
    with PostgresStore(pg_dsn) as store:
        assert [(c.name, c.live) for c in store.collections()] == [("main", True)]
        store.bind_embedder("model-a", DIM)
        _put(store, "kept")
        name = store.create_collection()
        assert name == "g2" and store.current_collection == "main" and _docs(store) == {"kept"}


def test_a_schema_name_too_long_for_collections_is_refused_with_the_reason(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn, options=PostgresOptions(schema="s" * 62)) as store:
        with pytest.raises(StoreError, match="too long to hold collections"):
            store.create_collection()
        assert [c.name for c in store.collections()] == ["main"]


def test_the_schema_statements_are_all_classified() -> None:
    from ragwright.stores.postgres.schema import MIGRATIONS, PER_COLLECTION, collection_statements, statement_table

    for _, statements in MIGRATIONS:
        for statement in statements:
            assert statement_table(statement) is not None, statement
    created = {statement_table(s) for s in collection_statements() if s.lstrip().startswith("CREATE TABLE")}
    assert created == PER_COLLECTION
