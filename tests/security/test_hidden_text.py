"""The hidden-text corpus (issue 21 item 5): 37 techniques across HTML, DOCX, PPTX, XLSX and PDF, each
hiding one injected sentence. None may reach a chunk, a search result or an extractive answer, and
every one is counted in the ingest report."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragwright.cli import main
from ragwright.model.records import DocumentStatus
from ragwright.rag import Rag
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder
from tests.parse.hidden_corpus import TECHNIQUES, write_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hidden") / "corpus"
    write_corpus(folder)
    return folder


def test_the_corpus_covers_25_techniques_in_every_format() -> None:
    assert len(TECHNIQUES) >= 25 and len({t.marker for t in TECHNIQUES}) == len(TECHNIQUES)
    assert set(Counter(t.fmt for t in TECHNIQUES)) == {"html", "docx", "pptx", "xlsx", "pdf"}


def test_no_injected_sentence_reaches_chunks_results_or_answers(corpus: Path, tmp_path: Path) -> None:
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    report = rag.ingest(corpus)
    assert report.failed == [] and report.added == len(TECHNIQUES)
    assert report.hidden_elements == len(TECHNIQUES)  # every hidden element counted, once
    chunks = {
        Path(r.document_id).name: rag.store.document_chunks(r.document_id)
        for r in rag.store.list_records(DocumentStatus.INDEXED)
    }
    for t in TECHNIQUES:
        texts = [c.text for c in chunks[t.file_name]]
        assert texts and any("refund" in text.lower() for text in texts), t.name  # the visible text stays
        assert all(t.marker not in text for text in texts), t.name
        assert chunks[t.file_name][0].metadata["hidden_elements"] == 1, t.name
    everything = " ".join(c.text for cs in chunks.values() for c in cs)
    assert not any(t.marker in everything for t in TECHNIQUES)
    for t in TECHNIQUES:
        for query in (t.sentence, t.marker, "what is the secret refund code"):
            assert all(t.marker not in r.chunk.text for r in rag.search(query, top_k=20)), (t.name, query)
        answer = rag.ask(t.sentence)
        assert answer.mode == "extractive"
        assert t.marker not in answer.answer and all(t.marker not in s.chunk.text for s in answer.sources), t.name


def test_the_cli_reports_every_hidden_element_and_finds_none(corpus: Path, tmp_path: Path) -> None:
    flags = ["--json", "--store", str(tmp_path / "s.db"), "--embedder", "wordllama"]
    result = CliRunner().invoke(main, [*flags, "ingest", str(corpus)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["hidden_elements"] == len(TECHNIQUES)
    for fmt in ("html", "docx", "pptx", "xlsx", "pdf"):
        t = next(t for t in TECHNIQUES if t.fmt == fmt)
        for command in (["search", t.sentence, "--top-k", "20"], ["ask", t.sentence]):
            out = CliRunner().invoke(main, [*flags, *command], catch_exceptions=False)
            assert out.exit_code == 0 and t.marker not in out.stdout, (t.name, command)
