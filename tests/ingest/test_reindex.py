"""Blue/green reindex: alias switch, evaluation gate, failures, drop, and queries during reindex and
during re-ingestion (never an error, never a miss of a document indexed before and after)."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragwright.ingest.reindex as reindex_module
from ragwright.errors import StoreError
from ragwright.ingest import EvalGate
from ragwright.options import ChunkingOptions, IngestOptions, RetrievalOptions
from ragwright.rag import Rag
from ragwright.sources import BytesSource, JsonlSource
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder

BM25 = RetrievalOptions(use_dense_search=False, use_keyword_search=True, top_k=5)
HYBRID = RetrievalOptions(use_hybrid_search=True, top_k=5)


def token(i: int) -> str:
    return f"uniq{i}tok"


def write_docs(folder: Path, n: int, version: int = 0) -> None:
    folder.mkdir(exist_ok=True)
    for i in range(n):
        filler = " ".join(f"word{(i * 7 + j + version) % 97}" for j in range(12))
        (folder / f"d{i}.md").write_text(f"# Note {i}\n\nThe marker {token(i)} is here. {filler} v{version}.\n")


def doc_id(folder: Path, i: int) -> str:
    return (folder / f"d{i}.md").resolve().as_posix()


def found(rag_or_store: Any, i: int, folder: Path, options: RetrievalOptions = BM25) -> bool:
    return any(r.document_id == doc_id(folder, i) for r in rag_or_store.search(token(i), options))


class Counting(HashingEmbedder):
    """A hashing embedder that counts the texts it embeds and can run a hook on every batch."""

    def __init__(self, *args: Any, hook: Callable[[], None] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.texts = 0
        self.hook = hook

    def embed_documents(self, texts: Sequence[str]) -> Any:
        self.texts += len(texts)
        if self.hook is not None:
            self.hook()
        return super().embed_documents(texts)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    write_docs(folder, 12)
    return folder


def test_reindex_builds_beside_live_switches_alias_and_reads_no_source(tmp_path: Path, corpus: Path) -> None:
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    assert rag.ingest(corpus).added == 12
    for f in corpus.iterdir():  # the rebuild must come from the staged bytes, not the files
        f.unlink()
    new = Counting(dimension=128, name="test/hashing-b")
    report = rag.reindex(embedder=new)
    assert report.switched and report.reason is None
    assert (report.previous, report.collection) == ("main", "g2")
    assert report.build.added == 12 and report.build.parse_cache_hits == 12 and not report.build.failed
    assert new.texts == report.build.chunks
    assert rag.embedder is new and rag.store.embedding_model == ("test/hashing-b", 128)
    assert all(found(rag, i, corpus) for i in range(12))
    assert all(found(rag, i, corpus, HYBRID) for i in range(12))
    assert rag.check() == []
    listed = {c["name"]: c for c in rag.collections()}
    assert listed["g2"]["live"] and not listed["main"]["live"]
    assert listed["main"]["documents"] == listed["g2"]["documents"] == 12
    # a fresh open follows the alias to the new collection and its model
    with SqliteStore(tmp_path / "s.db") as reopened:
        assert reopened.current_collection == "g2"
        assert reopened.embedding_model == ("test/hashing-b", 128)
    # the old collection stays until dropped, with its derived state (graph snapshot, sparse vectors)
    snapshot = tmp_path / "s.db.main.ann"
    snapshot.write_bytes(b"graph")
    rag.store._conn.execute("CREATE TABLE IF NOT EXISTS sparse_vectors (chunk_id TEXT)")  # type: ignore[attr-defined]
    assert rag.drop_collection("main") == ["main"]
    assert [c["name"] for c in rag.collections()] == ["g2"]
    assert not snapshot.exists()
    tables = {r[0] for r in rag.store._conn.execute("SELECT name FROM sqlite_master")}  # type: ignore[attr-defined]
    assert not {"chunks", "documents", "parents", "sparse_vectors"} & tables
    with pytest.raises(StoreError, match="live"):
        rag.drop_collection("g2")


def test_ingest_after_reindex_uses_the_new_pipeline(tmp_path: Path, corpus: Path) -> None:
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    rag.ingest(corpus)
    new = Counting(dimension=64, name="test/hashing-c")
    assert rag.reindex(embedder=new, drop_old=True).dropped == ["main"]
    before = new.texts
    again = rag.ingest(corpus)
    assert again.unchanged == 12 and new.texts == before  # registry of the new collection is complete
    (corpus / "d3.md").write_text(f"# Note 3\n\nThe marker {token(3)} changed.\n")
    assert rag.ingest(corpus).updated == 1
    assert found(rag, 3, corpus) and rag.check() == []


def test_jsonl_corpus_reindexes_from_the_cached_records(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"_id": f"r{i}", "title": f"T{i}", "text": token(i)}) + "\n" for i in range(5)))
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    rag.ingest(JsonlSource(path))
    path.unlink()
    report = rag.reindex(chunking=ChunkingOptions(max_tokens=100))
    assert report.switched and report.build.added == 5
    assert [r.document_id for r in rag.search(token(4), BM25)][:1] == ["r4"]
    record = rag.store.get_record("r4")
    assert record is not None and record.parser_version == "record/1"


def test_store_object_with_the_same_model_follows_the_switch_without_reopening(tmp_path: Path, corpus: Path) -> None:
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    rag.ingest(corpus)
    reader = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    assert found(reader, 1, corpus)
    assert rag.reindex(chunking=ChunkingOptions(max_tokens=64, strategy="recursive")).switched
    assert found(reader, 1, corpus)
    assert reader.store.current_collection == "g2"
    rag.drop_collection("main")
    assert found(reader, 2, corpus, HYBRID)


def test_store_object_with_the_old_model_keeps_reading_then_says_to_reopen(tmp_path: Path, corpus: Path) -> None:
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    rag.ingest(corpus)
    reader = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    assert rag.reindex(embedder=HashingEmbedder(dimension=96, name="test/hashing-d")).switched
    assert found(reader, 5, corpus, HYBRID)  # still served by its collection, with its own model
    assert reader.store.current_collection == "main"
    with pytest.raises(StoreError, match="reindexed"):
        reader.ingest(corpus / "d1.md")  # writes to a collection that is no longer live are refused
    rag.drop_collection("main")
    with pytest.raises(StoreError, match="reopen"):
        reader.search(token(5), BM25)


def _beir(tmp_path: Path, n: int) -> Path:
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": f"r{i}", "title": "", "text": f"{token(i)} alpha beta"}) + "\n" for i in range(n))
    )
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": f"q{i}", "text": token(i)}) + "\n" for i in range(n))
    )
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\tr{i}\t1\n" for i in range(n))
    )
    return root


class Constant(HashingEmbedder):
    """Every text gets the same vector: dense retrieval cannot rank anything."""

    def _vector(self, text: str) -> Any:
        vec = np.zeros(self.dimension, dtype=np.float32)
        vec[0] = 1.0
        return vec


def test_evaluation_gate_rejects_a_worse_index_and_keeps_the_live_alias(tmp_path: Path) -> None:
    beir = _beir(tmp_path, 20)
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    rag.ingest(JsonlSource(beir / "corpus.jsonl"))
    gate = EvalGate(beir, min_ndcg=0.5, max_drop=0.1, config="dense")
    report = rag.reindex(embedder=Constant(dimension=32, name="test/constant"), evaluate=gate)
    assert not report.switched
    assert report.reason is not None and "nDCG@10" in report.reason
    assert report.evaluation is not None and report.evaluation["live_ndcg@10"] > report.evaluation["ndcg@10"]
    assert [c["name"] for c in rag.collections()] == ["main"]  # the rejected one was dropped
    assert rag.store.live_collection == "main" and rag.embedder.name == "test/hashing"
    assert [r.document_id for r in rag.search(token(3), BM25)][:1] == ["r3"]
    good = rag.reindex(embedder=HashingEmbedder(dimension=512, name="test/hashing-e"), evaluate=gate)
    assert good.switched and good.evaluation is not None and good.evaluation["ndcg@10"] >= 0.5


def test_a_build_failure_keeps_the_live_collection_and_says_which_documents(tmp_path: Path, corpus: Path) -> None:
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    rag.ingest(corpus)

    class Broken(HashingEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> Any:
            raise RuntimeError("model crashed")

    report = rag.reindex(embedder=Broken(name="test/broken"))
    assert not report.switched and report.reason is not None and "could not be rebuilt" in report.reason
    assert rag.store.live_collection == "main" and [c["name"] for c in rag.collections()] == ["main"]
    assert found(rag, 0, corpus)


def test_changes_during_the_build_are_caught_up_before_the_switch(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    rag.ingest(corpus)
    real = reindex_module.rebuild
    calls = []

    def rebuild_then_change(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        calls.append(1)
        if len(calls) == 1:  # the live collection changes while the new one is being built
            (corpus / "d2.md").write_text("# Note 2\n\nrewritten with lateword\n")
            (corpus / "d4.md").unlink()
            rag.ingest(corpus, sync=True)
        return out

    monkeypatch.setattr(reindex_module, "rebuild", rebuild_then_change)
    report = rag.reindex(embedder=HashingEmbedder(dimension=128, name="test/hashing-b"))
    assert report.switched and report.passes >= 2
    assert [r.document_id for r in rag.search("lateword", BM25)][:1] == [doc_id(corpus, 2)]
    assert not found(rag, 4, corpus)
    assert rag.store.get_record(doc_id(corpus, 4)).status.value == "deleted"  # type: ignore[union-attr]
    assert rag.check() == []


def test_memory_store_reindex_swaps_a_new_store() -> None:
    docs = {f"m{i}": f"note {token(i)}".encode() for i in range(6)}
    rag = Rag(MemoryStore(), HashingEmbedder())
    rag.ingest(BytesSource(docs))
    old = rag.store
    report = rag.reindex(embedder=HashingEmbedder(dimension=64, name="test/hashing-m"))
    assert report.switched and rag.store is not old and report.build.added == 6
    assert [r.document_id for r in rag.search(token(5), BM25)][:1] == ["m5"]
    assert rag.drop_collection("memory") == ["memory"]


def test_version_1_store_files_are_migrated(tmp_path: Path, corpus: Path) -> None:
    path = tmp_path / "s.db"
    with Rag(SqliteStore(path), HashingEmbedder()) as rag:
        rag.ingest(corpus)
    conn = sqlite3.connect(path)  # turn it into a version-1 file: no collections, no alias
    conn.executescript(
        "DROP TABLE collections; DROP TABLE aliases; UPDATE rag_metadata SET value = '1' WHERE key = 'schema_version';"
    )
    conn.close()
    with Rag(SqliteStore(path), HashingEmbedder()) as rag:
        assert found(rag, 7, corpus)
        assert [c["name"] for c in rag.collections()] == ["main"]
        assert rag.reindex(embedder=HashingEmbedder(dimension=32, name="test/hashing-f")).switched


class _Reader(threading.Thread):
    """Queries every marker in a loop (BM25 must find its document; hybrid must not raise) through
    each Rag, until stopped, and at least twice over; counts the queries it ran."""

    def __init__(self, rags: list[Any], folder: Path, n: int) -> None:
        super().__init__()
        self.rags, self.folder, self.n = rags, folder, n
        self.stop, self.errors, self.misses = threading.Event(), [], []  # type: ignore[var-annotated]
        self.queries = 0
        self.ran = threading.Condition()

    def run(self) -> None:
        rounds = 0
        while not self.stop.is_set() or rounds < 2:
            for i in range(self.n):
                for rag in self.rags:
                    try:
                        if not found(rag, i, self.folder):
                            self.misses.append(token(i))
                        rag.search(token(i), HYBRID)
                    except BaseException as exc:
                        self.errors.append(exc)
                        return
                    with self.ran:
                        self.queries += 1
                        self.ran.notify_all()
            rounds += 1

    def wait_for_queries(self, count: int) -> None:
        """Block until *count* more queries ran (the build then surely overlaps with queries)."""
        with self.ran:
            target = self.queries + count
            self.ran.wait_for(lambda: self.queries >= target or not self.is_alive(), timeout=10)


@pytest.mark.slow
def test_queries_never_fail_nor_miss_during_a_blue_green_reindex(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    n = 40
    write_docs(folder, n)
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder(), ingest_options=IngestOptions(batch_size=4))
    rag.ingest(folder)
    other = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())  # another store object on the file
    reader = _Reader([rag, other], folder, n)
    reader.start()
    before = reader.queries
    new = Counting(dimension=128, name="test/hashing-b", hook=lambda: reader.wait_for_queries(2))
    report = rag.reindex(embedder=new, chunking=ChunkingOptions(max_tokens=32))
    during = reader.queries - before
    reader.stop.set()
    reader.join()
    assert report.switched and rag.store.current_collection == "g2"
    assert reader.errors == [] and reader.misses == []
    assert during >= 2 * 2  # at least two embedding batches, each overlapped by two queries


@pytest.mark.slow
def test_queries_never_fail_nor_miss_during_re_ingestion_of_changed_files(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    n = 30
    write_docs(folder, n)
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    rag.ingest(folder)
    other = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    reader = _Reader([rag, other], folder, n)
    reader.start()
    for version in range(1, 6):  # every file changes (its marker stays): all re-embedded each round
        write_docs(folder, n, version)
        assert rag.ingest(folder).updated == n
        reader.wait_for_queries(2)
    reader.stop.set()
    reader.join()
    assert reader.errors == [] and reader.misses == []
    assert rag.check() == []


def test_cli_reindex_switches_lists_rejects_and_drops(tmp_path: Path, corpus: Path) -> None:
    from click.testing import CliRunner

    from ragwright.cli import main

    base = ["--store", str(tmp_path / "s.db"), "--embedder", "wordllama", "--json"]
    runner = CliRunner()
    assert runner.invoke(main, [*base, "ingest", str(corpus)]).exit_code == 0
    done = runner.invoke(main, [*base, "reindex", "--chunker", "recursive", "--max-tokens", "64"])
    assert done.exit_code == 0, done.output
    payload = json.loads(done.output)
    assert payload["switched"] and payload["collection"] == "g2" and payload["build"]["added"] == 12
    beir = _beir(tmp_path, 5)
    rejected = runner.invoke(
        main, [*base, "reindex", "--chunker", "structural", "--eval", str(beir), "--min-ndcg", "1.0"]
    )
    assert rejected.exit_code == 1 and "nDCG@10" in json.loads(rejected.stdout)["reason"]
    dropped = json.loads(runner.invoke(main, [*base, "reindex", "--drop-old"]).output)
    assert dropped["dropped"] == ["main"] and [c["name"] for c in dropped["collections"]] == ["g2"]
    usage = runner.invoke(main, [*base, "reindex"])
    assert usage.exit_code == 2 and "--embedder" in usage.output


_KILLED_REINDEX = """
import os, signal, sys
from ragwright.rag import Rag
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder

class Dies(HashingEmbedder):
    def embed_documents(self, texts):
        os.kill(os.getpid(), signal.SIGKILL)  # killed mid-build

rag = Rag(SqliteStore(sys.argv[1]), HashingEmbedder())
rag.ingest(sys.argv[2])
rag.reindex(embedder=Dies(dimension=64, name="test/dies"))
"""


def test_a_reindex_killed_mid_build_leaves_no_collection_behind(
    tmp_path: Path, corpus: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 21 item 10: the half-built collection is dropped at the next open (or reindex)."""
    import subprocess
    import sys

    path = tmp_path / "s.db"
    out = subprocess.run([sys.executable, "-c", _KILLED_REINDEX, str(path), str(corpus)], timeout=120)
    assert out.returncode == -9
    raw = sqlite3.connect(path)
    assert [r[0] for r in raw.execute("SELECT name FROM collections ORDER BY name")] == ["g2", "main"]
    raw.close()
    with caplog.at_level("WARNING"), SqliteStore(path) as store:
        assert [c.name for c in store.collections()] == ["main"]
        assert store.live_collection == "main" and store.count_chunks() == 12
    assert "abandoned_build_dropped" in caplog.text
    raw = sqlite3.connect(path)
    tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not any(t.endswith("__g2") for t in tables)
    assert raw.execute("SELECT COUNT(*) FROM rag_metadata WHERE key LIKE '%@g2'").fetchone() == (0,)
    raw.close()


def test_a_build_in_progress_and_a_kept_previous_collection_are_not_dropped(tmp_path: Path, corpus: Path) -> None:
    path = tmp_path / "s.db"
    with Rag(SqliteStore(path), HashingEmbedder()) as rag:
        rag.ingest(corpus)
        assert rag.reindex(embedder=HashingEmbedder(dimension=64, name="test/hashing-2")).switched
        building = rag.store.create_collection(note="reindex", building=True)  # this process: alive
        with SqliteStore(path) as other:
            names = sorted(c.name for c in other.collections())
            assert names == sorted(["main", "g2", building])  # previous kept, build in progress kept
            assert other.drop_abandoned_builds() == []


def test_reindex_works_on_the_collections_protocol_and_returns_the_new_store() -> None:
    """No Rag involved: the function builds beside the live collection, switches, and hands back a
    store object over the new live collection; re-wiring is the caller's business."""
    from ragwright.chunk import make_chunker
    from ragwright.ingest import IngestPipeline
    from ragwright.ingest.reindex import reindex

    live = MemoryStore()
    IngestPipeline(live, HashingEmbedder(), make_chunker(HashingEmbedder())).run(
        BytesSource({f"p{i}": f"note {token(i)}".encode() for i in range(4)})
    )
    new = HashingEmbedder(dimension=64, name="test/hashing-p")
    outcome = reindex(live, lambda target: IngestPipeline(target, new, make_chunker(new)))
    report, store = outcome.report, outcome.store
    assert report.switched and (report.previous, report.collection) == ("memory", "memory-2")
    assert store is not None and store is not live and store.current_collection == "memory-2"
    assert store.embedding_model == ("test/hashing-p", 64) and live.embedding_model == ("test/hashing", 256)
    assert live.live_collection == "memory-2" and store.count_chunks() == live.count_chunks() == 4


def test_reindex_refuses_a_store_without_collections_and_a_gate_without_a_searcher() -> None:
    from ragwright.chunk import make_chunker
    from ragwright.errors import ConfigError
    from ragwright.ingest import IngestPipeline
    from ragwright.ingest.reindex import reindex

    def pipeline(target: Any) -> IngestPipeline:
        return IngestPipeline(target, HashingEmbedder(), make_chunker(HashingEmbedder()))

    class NoCollections:
        """Only what reindex looks at first."""

    with pytest.raises(ConfigError, match="NoCollections does not support reindex"):
        reindex(NoCollections(), pipeline)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="searcher_for"):
        reindex(MemoryStore(), pipeline, evaluate=EvalGate(Path(".")))
