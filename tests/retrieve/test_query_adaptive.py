"""The default hybrid search on what rank fusion gets wrong: exact identifiers, quoted phrases, feedback,
and the language recorded at ingestion (the real default embedder, a real SQLite store)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ragwright import Rag
from ragwright.options import EnsembleOptions, FeedbackOptions
from ragwright.retrieve.phrases import apply_phrases, quoted_phrases
from ragwright.sources import JsonlSource
from ragwright.stores.sqlite import SqliteStore

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def identifier_rag(tmp_path_factory: pytest.TempPathFactory) -> Rag:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from identifiers import generate  # the generator of benchmarks/identifiers.py
    finally:
        sys.path.remove(str(BENCHMARKS))
    records, queries = generate(seed=3, per_family=20, queries_per_family=4)
    tmp = tmp_path_factory.mktemp("identifiers")
    corpus = tmp / "records.jsonl"
    corpus.write_text("".join(json.dumps({"_id": r.id, "text": r.text}) + "\n" for r in records))
    rag = Rag(SqliteStore(tmp / "store.db"))
    rag.ingest(JsonlSource(corpus))
    rag.identifier_queries = queries  # type: ignore[attr-defined]
    return rag


@pytest.mark.slow
def test_the_default_ranks_the_record_an_identifier_names_first(identifier_rag: Rag) -> None:
    queries = identifier_rag.identifier_queries  # type: ignore[attr-defined]
    wrong = [q.text for q in queries if identifier_rag.search(q.text, top_k=3)[0].chunk.document_id != q.answer]
    assert wrong == []
    rrf = EnsembleOptions(method="rrf")
    rrf_wrong = [
        q.text for q in queries if identifier_rag.search(q.text, top_k=3, ensemble=rrf)[0].chunk.document_id != q.answer
    ]
    assert len(rrf_wrong) >= 3  # rank fusion buries exact matches: the reason convex fusion is the default


@pytest.mark.slow
def test_ingestion_records_each_chunks_language(identifier_rag: Rag) -> None:
    hit = identifier_rag.search("invoice payment terms", top_k=1)[0]
    assert hit.chunk.metadata["language"] == "en"
    assert identifier_rag.search("invoice", top_k=1, metadata_filter={"language": "en"})
    assert identifier_rag.search("invoice", top_k=1, metadata_filter={"language": "de"}) == []


def test_quoted_phrases_parse_and_reorder(hashing: object) -> None:
    assert quoted_phrases('the "exact wording" of „Das Haus“ and "one"') == [("exact", "wording"), ("das", "haus")]
    assert quoted_phrases('no quotes, or an "unbalanced one') == []
    from ragwright.model.chunk import Chunk
    from ragwright.model.results import SearchResult

    a = SearchResult(Chunk.create("a", "the wording was exact", 0), 0.9)
    b = SearchResult(Chunk.create("b", "Exact, wording: as asked", 0), 0.5)
    out = apply_phrases([a, b], [("exact", "wording")])
    assert [r.chunk.document_id for r in out] == ["b", "a"]
    assert out[0].arms["phrase"].rank == 1 and "phrase" not in out[1].arms


def test_a_quoted_phrase_puts_the_exact_wording_first(tmp_path: Path) -> None:
    from ragwright.sources import BytesSource
    from ragwright.testing.doubles import HashingEmbedder

    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    docs = {
        "a.md": "Data retention: customer records are kept for seven years, then deleted.",
        "b.md": "Retention of customer data: records deleted after seven years are kept in backups.",
    }
    rag.ingest(BytesSource({name: text.encode() for name, text in docs.items()}))
    first = rag.search('"records are kept" retention', top_k=2)
    assert first[0].chunk.document_id.endswith("a.md") and "phrase" in first[0].arms
    assert all("phrase" not in r.arms for r in first[1:])


def test_feedback_runs_a_second_pass_and_degrades(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragwright.sources import BytesSource
    from ragwright.testing.doubles import HashingEmbedder

    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    rag.ingest(
        BytesSource(
            {
                "lens.md": b"The crystalline lens focuses light. Its proteins are called crystallins.",
                "eye.md": b"Crystallins keep the cornea clear in fish and birds.",
                "tax.md": b"Quarterly tax filings are due at the end of each quarter.",
            }
        )
    )
    keyword = {"use_dense_search": False, "use_keyword_search": True}
    plain = rag.search("lens", top_k=3, **keyword)
    assert [r.chunk.document_id for r in plain] == ["lens.md"]
    fed = rag.search("lens", top_k=3, feedback=FeedbackOptions(documents=1, rm3=True, rocchio=False), **keyword)
    assert [r.chunk.document_id for r in fed] == ["lens.md", "eye.md"]  # "crystallins", learnt from lens.md

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("analyzer gone")

    monkeypatch.setattr("ragwright.retrieve.combine.rm3_query", broken)
    with caplog.at_level("WARNING"):
        again = rag.search("lens", top_k=3, feedback=FeedbackOptions(rm3=True, rocchio=False), **keyword)
    assert [r.chunk.document_id for r in again] == ["lens.md"]  # the first pass serves the query
    assert any("feedback_failed" in r.message for r in caplog.records)
