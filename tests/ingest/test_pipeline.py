import dataclasses
import functools
import threading
import time
from pathlib import Path

import pytest

from ragwright.chunk import StructuralChunker
from ragwright.errors import ParseError
from ragwright.model.document import Document
from ragwright.model.records import DocumentStatus
from ragwright.parse import markdown
from ragwright.rag import Rag
from ragwright.sources import BytesSource, JsonlSource
from ragwright.sources.base import SourceItem
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder


@pytest.fixture
def rag(tmp_path: Path, hashing: HashingEmbedder) -> Rag:
    return Rag(SqliteStore(tmp_path / "store.db"), hashing)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_unchanged_documents_are_skipped_without_embedding(tmp_path: Path, rag: Rag, hashing: HashingEmbedder) -> None:
    docs = tmp_path / "docs"
    write(docs, "a.md", "# A\n\nalpha text")
    write(docs, "b.txt", "beta text")
    first = rag.ingest(docs)
    assert (first.added, first.updated, first.unchanged, first.chunks) == (2, 0, 0, 2)
    calls = hashing.calls
    second = rag.ingest(docs)
    assert (second.added, second.updated, second.unchanged, second.chunks) == (0, 0, 2, 0)
    assert hashing.calls == calls  # nothing embedded


def test_changed_document_is_updated_and_old_chunks_go(tmp_path: Path, rag: Rag) -> None:
    docs = tmp_path / "docs"
    path = write(docs, "a.md", "# A\n\noriginal words")
    rag.ingest(docs)
    path.write_text("# A\n\nrevised content", encoding="utf-8")
    report = rag.ingest(docs)
    assert (report.added, report.updated) == (0, 1)
    texts = [c.text for c in rag.store.document_chunks(path.resolve().as_posix())]
    assert texts == ["revised content"]


def test_deleted_files_are_reconciled(tmp_path: Path, rag: Rag) -> None:
    docs = tmp_path / "docs"
    write(docs, "a.md", "alpha")
    gone = write(docs, "sub/b.md", "beta")
    rag.ingest(docs)
    gone.unlink()
    assert rag.ingest(docs).deleted == 0  # without sync nothing is removed
    assert rag.store.document_chunks(gone.resolve().as_posix())
    report = rag.ingest(docs, sync=True)
    assert report.deleted == 1
    assert rag.check() == []
    rec = rag.store.get_record(gone.resolve().as_posix())
    assert rec is not None and rec.status is DocumentStatus.DELETED
    assert all(r.document_id != gone.resolve().as_posix() for r in rag.search("beta", top_k=10))


def test_a_corrupt_file_is_dead_lettered_and_the_batch_goes_on(tmp_path: Path, rag: Rag) -> None:
    docs = tmp_path / "docs"
    write(docs, "good.md", "good text")
    (docs / "bad.md").write_bytes(b"\x00\x01\x02garbage" * 20)
    (docs / "empty.txt").write_bytes(b"")
    report = rag.ingest(docs)
    assert report.added == 1
    failures = {Path(f.document).name: f for f in report.failed}
    assert set(failures) == {"bad.md", "empty.txt"}
    assert failures["bad.md"].stage == "parse" and "binary" in failures["bad.md"].reason
    assert "empty" in failures["empty.txt"].reason
    failed = rag.store.list_records(DocumentStatus.FAILED)
    assert {Path(r.document_id).name for r in failed} == {"bad.md", "empty.txt"}
    assert rag.status()["failed"] == 2


def test_a_previously_indexed_document_keeps_its_chunks_when_an_update_fails(tmp_path: Path, rag: Rag) -> None:
    docs = tmp_path / "docs"
    path = write(docs, "a.md", "kept words")
    rag.ingest(docs)
    path.write_bytes(b"\x00\x00broken")
    report = rag.ingest(docs)
    assert len(report.failed) == 1
    assert [c.text for c in rag.store.document_chunks(path.resolve().as_posix())] == ["kept words"]
    assert rag.search("kept words")[0].chunk.text == "kept words"


def test_a_dead_letter_keeps_the_tenant_acl_metadata_and_folder_it_was_ingested_with(tmp_path: Path, rag: Rag) -> None:
    """Issue 21 #1: a failed document was recorded as default|["*"], visible to every default caller."""
    from ragwright.model.identity import Identity

    docs = tmp_path / "docs"
    bad = docs / "bad.pdf"
    write(docs, "good.md", "good words")
    bad.write_bytes(b"%PDF-1.7 this is not really a pdf")
    report = rag.ingest(docs, tenant="beta", acl=["hr"], metadata={"team": "people"})
    assert [Path(f.document).name for f in report.failed] == ["bad.pdf"]
    rec = rag.store.get_record(bad.resolve().as_posix())
    assert rec is not None and rec.status is DocumentStatus.FAILED
    assert (rec.tenant, rec.acl, rec.source_root) == ("beta", ("hr",), docs.resolve().as_posix())
    assert rec.metadata["team"] == "people"
    assert not Identity().can_see(rec.tenant, rec.acl) and Identity("beta", ("hr",)).can_see(rec.tenant, rec.acl)
    assert [f["tenant"] for f in rag.status()["failed_documents"]] == ["beta"]
    rag.ingest(docs, tenant="beta", acl=["hr"], metadata={"team": "people"})  # failing again: same access
    rec = rag.store.get_record(bad.resolve().as_posix())
    assert rec is not None and (rec.tenant, rec.acl, rec.attempts) == ("beta", ("hr",), 2)

    bad.write_text("the repaired hiring plan", encoding="utf-8")  # .pdf name, text bytes: detected as text
    retried = rag.retry_failed()
    assert retried.added == 1 and rag.documents(status="failed") == []
    rec = rag.store.get_record(bad.resolve().as_posix())
    assert rec is not None and (rec.tenant, rec.acl, rec.source_root) == ("beta", ("hr",), docs.resolve().as_posix())
    assert rec.metadata["team"] == "people"
    assert rag.search("repaired hiring plan", identity=Identity()) == []
    hits = rag.search("repaired hiring plan", identity=Identity("beta", ("hr",)))
    assert hits and hits[0].document_id == bad.resolve().as_posix()


def test_retry_failed_ingests_each_dead_letter_with_its_own_access(tmp_path: Path, rag: Rag) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    for path in (a, b):
        path.write_bytes(b"\x00\x01 broken")
    rag.ingest(a, tenant="acme", acl=["hr"])
    rag.ingest(b, tenant="globex")
    a.write_text("alpha repaired", encoding="utf-8")
    b.write_text("beta repaired", encoding="utf-8")
    assert rag.retry_failed().added == 2
    access = {Path(r.document_id).name: (r.status, r.tenant, r.acl) for r in rag.store.list_records()}
    assert access == {
        "a.txt": (DocumentStatus.INDEXED, "acme", ("hr",)),
        "b.txt": (DocumentStatus.INDEXED, "globex", ("*",)),
    }


def test_a_failed_update_keeps_the_access_of_the_chunks_it_still_serves(tmp_path: Path, rag: Rag) -> None:
    """Re-ingesting a document as another tenant that then fails to parse moves nothing: the kept chunks
    and their record stay with their tenant and ACL; a tombstone's next failure takes the new access."""
    from ragwright.model.identity import Identity

    rag.ingest(BytesSource({"plan.md": b"the board plan"}), tenant="acme", acl=["board"])
    report = rag.ingest(BytesSource({"plan.md": b"\x00\x01broken"}), tenant="globex")
    assert len(report.failed) == 1
    rec = rag.store.get_record("plan.md")
    assert rec is not None and rec.status is DocumentStatus.FAILED and rec.chunk_count == 1
    assert (rec.tenant, rec.acl) == ("acme", ("board",))
    assert rag.search("board plan", identity=Identity("globex")) == []
    assert rag.search("board plan", identity=Identity("acme", ("board",)))
    rag.remove("plan.md")
    rag.ingest(BytesSource({"plan.md": b"\x00\x01broken"}), tenant="globex", acl=["ops"])
    rec = rag.store.get_record("plan.md")
    assert rec is not None and (rec.status, rec.tenant, rec.acl) == (DocumentStatus.FAILED, "globex", ("ops",))


def test_embedding_failure_is_isolated_per_document(tmp_path: Path) -> None:
    class Fragile(HashingEmbedder):
        def embed_documents(self, texts):  # type: ignore[no-untyped-def]
            if any("poison" in t for t in texts):
                raise RuntimeError("model exploded")
            return super().embed_documents(texts)

    rag = Rag(SqliteStore(tmp_path / "s.db"), Fragile())
    report = rag.ingest(BytesSource({"ok.txt": b"fine text", "bad.txt": b"poison pill"}))
    assert report.added == 1
    assert [(f.document, f.stage) for f in report.failed] == [("bad.txt", "embed")]
    assert "model exploded" in report.failed[0].reason


def test_jsonl_corpus_ids_and_titles(tmp_path: Path, rag: Rag) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        '{"_id": "d1", "title": "Cats", "text": "Cats purr."}\n'
        "not json\n"
        '{"_id": "d2", "title": "", "text": "Dogs bark."}\n',
        encoding="utf-8",
    )
    report = rag.ingest(JsonlSource(corpus))
    assert report.added == 2 and len(report.failed) == 1 and "line 2" in report.failed[0].reason
    (c1,) = rag.store.document_chunks("d1")
    assert c1.text == "Cats purr." and c1.section_path == ("Cats",) and c1.embed_text == "Cats\n\nCats purr."
    assert rag.ingest(JsonlSource(corpus)).unchanged == 2


def test_model_change_reprocesses(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "a.md", "alpha")
    store = SqliteStore(tmp_path / "s.db")
    Rag(store, HashingEmbedder()).ingest(docs)
    rec = store.get_record((docs / "a.md").resolve().as_posix())
    assert rec is not None and rec.embedding_model == "test/hashing"
    assert rec.parser_version == markdown.VERSION and rec.chunker_version.startswith(StructuralChunker.version)


def test_tenant_acl_and_metadata_reach_chunks(tmp_path: Path, rag: Rag) -> None:
    report = rag.ingest(
        BytesSource({"x.md": b"---\nowner: ops\n---\n# T\n\nsecret plan"}),
        tenant="acme",
        acl=["board"],
        metadata={"department": "finance"},
    )
    assert report.added == 1
    (chunk,) = rag.store.document_chunks("x.md")
    assert chunk.tenant == "acme" and chunk.acl == ("board",)
    assert chunk.metadata["department"] == "finance" and chunk.metadata["owner"] == "ops"
    assert chunk.metadata["title"] == "T"


def test_size_limit(tmp_path: Path, hashing: HashingEmbedder) -> None:
    from ragwright.options import IngestOptions, ParseOptions

    options = IngestOptions(parse=ParseOptions(max_file_bytes=10))
    rag = Rag(SqliteStore(tmp_path / "s.db"), hashing, ingest_options=options)
    report = rag.ingest(BytesSource({"big.txt": b"x" * 11}))
    assert report.failed[0].stage == "read" and "over the limit" in report.failed[0].reason


def test_bad_path_is_a_clear_error(rag: Rag, tmp_path: Path) -> None:
    from ragwright.errors import ConfigError

    with pytest.raises(ConfigError, match="no such file or folder"):
        rag.ingest(tmp_path / "missing")
    assert not isinstance(ConfigError("x"), ParseError)


def test_child_documents_are_indexed_linked_and_removed_with_the_parent(tmp_path: Path, rag: Rag) -> None:
    from ragwright.model.document import Document, Element, ElementKind
    from ragwright.sources.base import SourceItem

    def make(children: tuple[str, ...]) -> Document:
        kids = tuple(
            Document(f"mail/{name}", (Element(ElementKind.PARAGRAPH, f"attachment {name} text"),)) for name in children
        )
        return Document("mail", (Element(ElementKind.PARAGRAPH, "the message body"),), children=kids)

    class OneDoc:
        def __init__(self, doc: Document, fingerprint: str) -> None:
            self.doc, self.fp = doc, fingerprint

        root = None

        def items(self):  # type: ignore[no-untyped-def]
            yield SourceItem("mail", "memory:mail", lambda: self.doc, fingerprint=self.fp)

        def __len__(self) -> int:
            return 1

    report = rag.ingest(OneDoc(make(("a.txt", "b.txt")), "v1"))
    assert report.added == 3
    (child,) = rag.store.document_chunks("mail/a.txt")
    assert child.metadata["parent_document_id"] == "mail"
    report = rag.ingest(OneDoc(make(("a.txt",)), "v2"))  # b.txt left the message
    assert report.deleted == 1 and rag.store.document_chunks("mail/b.txt") == []
    assert rag.remove("mail") == 2
    assert rag.store.document_chunks("mail/a.txt") == []


def test_update_acl_needs_no_embedding(tmp_path: Path, rag: Rag, hashing: HashingEmbedder) -> None:
    from ragwright.model.identity import Identity

    rag.ingest(BytesSource({"plan.md": b"the secret merger plan"}))
    calls = hashing.calls
    assert rag.search("merger plan", identity=Identity())
    assert rag.update_acl("plan.md", groups=["board"]) == 1
    assert rag.search("merger plan", identity=Identity()) == []
    assert rag.search("merger plan", identity=Identity(groups=("board",)))
    assert hashing.calls == calls  # no document was embedded again
    assert rag.ingest(BytesSource({"plan.md": b"the secret merger plan"}), acl=["board"]).unchanged == 1


def test_registry_queries_and_retry(tmp_path: Path, rag: Rag) -> None:
    docs = tmp_path / "docs"
    write(docs, "good.md", "fine")
    bad = docs / "bad.txt"
    bad.write_bytes(b"\x00\x01 broken")
    rag.ingest(docs)
    assert [Path(r.document_id).name for r in rag.documents(status="failed")] == ["bad.txt"]
    assert len(rag.documents(embedding_model="test/hashing")) == 1  # the failed one was never embedded
    assert rag.documents(embedding_model="other") == []
    bad.write_text("repaired now", encoding="utf-8")
    report = rag.retry_failed()
    assert report.updated + report.added == 1 and rag.documents(status="failed") == []


def test_a_new_chunker_reuses_staged_and_parsed_documents(tmp_path: Path, hashing: HashingEmbedder) -> None:
    from unittest import mock

    from ragwright.options import ChunkingOptions

    docs = tmp_path / "docs"
    path = write(docs, "a.md", "# A\n\n" + "words and more words. " * 40)
    store = SqliteStore(tmp_path / "s.db")
    Rag(store, hashing).ingest(docs)
    rec = store.get_record(path.resolve().as_posix())
    assert rec is not None and store.staged(rec.content_hash) == path.read_bytes()
    assert store.cached_parsed(rec.content_hash, rec.parser_version) is not None
    small = Rag(store, hashing, chunking=ChunkingOptions(max_tokens=40))
    small.chunker.version = "structural/test-small"  # a chunker change re-processes the document …
    small.ingestion.chunker = small.chunker
    with mock.patch("ragwright.ingest.pipeline.parse_bytes", side_effect=AssertionError("parsed again")):
        report = small.ingest(docs)
    assert report.updated == 1 and report.parse_cache_hits == 1  # … without parsing it again
    assert len(store.document_chunks(path.resolve().as_posix())) > 1
    path.unlink()
    small.ingest(docs, sync=True)
    assert store.staged(rec.content_hash) is None  # pruned with the document


class _Interrupting(BytesSource):
    """Yields its documents; when it reaches the *at*-th it calls *interrupt* first (Ctrl-C mid-run) and
    gives the signal a moment to arrive before each later document (as a person's Ctrl-C would, between
    two documents; a loaded machine can take more than one moment to deliver it)."""

    def __init__(self, documents: dict[str, bytes], at: int, interrupt: object, root: str | None = None) -> None:
        super().__init__(documents, root=root)
        self.at, self.interrupt = at, interrupt

    def items(self):  # type: ignore[no-untyped-def]
        for n, item in enumerate(super().items(), start=1):
            if n == self.at:
                self.interrupt()  # type: ignore[operator]
            if n >= self.at:
                time.sleep(0.5)
            yield item


def _docs(n: int) -> dict[str, bytes]:
    return {f"doc{i:02d}.md": f"# Note {i}\n\nthe text of note {i}".encode() for i in range(n)}


def test_cancel_keeps_what_was_written_and_deletes_nothing(rag: Rag) -> None:
    """Issue 22: Ctrl-C threw the finished documents away ("error: aborted")."""
    import threading

    everything = _docs(10)
    assert rag.ingest(BytesSource(everything, root="mem")).added == 10
    cancel = threading.Event()
    fewer = {k: v + b" (edited)" for k, v in list(everything.items())[:6]}
    report = rag.ingest(_Interrupting(fewer, 4, cancel.set, root="mem"), sync=True, cancel=cancel)
    assert report.interrupted and report.to_dict()["interrupted"] is True
    assert report.updated <= 3 and report.deleted == 0  # the 4 unlisted documents are not "missing"
    assert len(rag.documents(status="indexed")) == 10 and rag.check() == []
    again = rag.ingest(BytesSource(fewer, root="mem"))
    assert again.updated + report.updated == 6 and not again.interrupted


def test_ctrl_c_in_a_script_stops_the_run_and_leaves_nothing_running(rag: Rag) -> None:
    """Ctrl-C (SIGINT in the main thread) cancels the sync call: the documents written stay, the
    ingestion thread stops with it (nothing writes after the KeyboardInterrupt), and the store works."""
    import os
    import signal

    with pytest.raises(KeyboardInterrupt):
        rag.ingest(_Interrupting(_docs(12), 5, lambda: os.kill(os.getpid(), signal.SIGINT)))
    written = len(rag.documents(status="indexed"))
    assert written <= 4
    time.sleep(0.5)
    assert len(rag.documents(status="indexed")) == written  # no thread went on ingesting
    assert rag.ingest(BytesSource(_docs(12))).added == 12 - written


def test_ctrl_c_is_seen_mid_run_when_the_main_thread_blocks_sigint(rag: Rag) -> None:
    """When another thread takes the SIGINT (the sender itself, or any thread because the main one blocks
    it, as a native library may leave it), the main thread's loop asleep on the ingestion run saw it only
    when all 12 were written (the test above then failed on loaded CI machines). Blocking it in the main
    thread makes that certain here; the sync call wakes often enough to see it."""
    import os
    import signal

    rag.ingest(BytesSource({"warm.md": b"# Warm\n\nthe pool's threads exist before the mask"}))
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        with pytest.raises(KeyboardInterrupt):
            rag.ingest(_Interrupting(_docs(12), 5, lambda: os.kill(os.getpid(), signal.SIGINT)))
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    assert len(rag.documents(status="indexed")) <= 5  # the warm-up document and at most four more


class _Slow(BytesSource):
    """Its second document takes until the first is searchable (or 5 s) to read, as a slow parse would."""

    def __init__(self, documents: dict[str, bytes], written: threading.Event) -> None:
        super().__init__(documents)
        self.written = written
        self.waited = -1.0

    def _late(self, item: SourceItem) -> bytes | Document:
        start = time.perf_counter()
        self.written.wait(5.0)
        self.waited = time.perf_counter() - start
        return item.load()

    def items(self):  # type: ignore[no-untyped-def]
        for n, item in enumerate(super().items()):
            yield dataclasses.replace(item, load=functools.partial(self._late, item)) if n == 1 else item


def test_the_embedder_does_not_wait_for_a_full_batch_while_the_next_document_is_parsed(rag: Rag) -> None:
    """A document is embedded and written as soon as nothing more is ready: a slow parse (OCR, a long PDF)
    of the next one no longer leaves the embedder idle until a batch of 256 chunks has piled up."""
    written = threading.Event()
    rag.ingestion.hooks.append(lambda docs: written.set())
    source = _Slow(_docs(2), written)
    assert rag.ingest(source).added == 2
    assert 0.0 <= source.waited < 4.0  # the first was written while the second was still being "parsed"
