"""Summaries cite the chunks they draw from; LLM summaries when configured, extractive on failure."""

from pathlib import Path

import pytest

from ragwright.errors import ConfigError, GenerationError
from ragwright.hierarchy import HierarchyOptions
from ragwright.hierarchy.summarize import extractive_summary, hypothetical_questions
from ragwright.model.chunk import Chunk
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

from .conftest import WHALES


def test_every_summary_sentence_comes_from_a_chunk_it_cites(rag: Rag) -> None:
    assert rag.hierarchy is not None
    rows = {r.document_id: r for r in rag.hierarchy.index.tables.document_rows()}
    assert set(rows) == {"whales.md", "rockets.md", "bread.md", "secret.md"}
    for doc, row in rows.items():
        chunks = {c.id: c for c in rag.store.document_chunks(doc)}
        assert row.cited and set(row.cited) <= set(chunks) and set(row.chunk_ids) == set(chunks)
        cited_text = " ".join(chunks[c].text for c in row.cited)
        title, *rest = row.summary.split("\n")
        body = rest[-1]
        assert title == row.title
        for sentence in body.split(". "):
            assert sentence.strip(" .") in cited_text
        assert row.method == "extractive"


def test_summary_lists_title_and_section_headings(rag: Rag) -> None:
    assert rag.hierarchy is not None
    (row,) = rag.hierarchy.index.tables.document_rows(["whales.md"])
    assert row.summary.startswith("Whales\nSections: ")
    assert "Migration" in row.summary and "Song" in row.summary


def test_extractive_summary_picks_representative_chunks_in_document_order() -> None:
    chunks = [Chunk.create("d", f"Sentence number {i} talks about topic {i % 3} at length here.", i) for i in range(12)]
    s = extractive_summary(chunks, None, sentences_wanted=4, title="T")
    assert len(s.chunk_ids) == 4
    positions = [next(c.position for c in chunks if c.id == cid) for cid in s.chunk_ids]
    assert positions == sorted(positions)


def test_llm_summary_when_a_chat_model_is_configured(tmp_path: Path) -> None:
    chat = ScriptedChat(lambda messages: "Whales are air-breathing mammals that migrate and sing.")
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder(max_tokens=64), llm=chat, hierarchy=HierarchyOptions())
    rag.ingest(BytesSource({"whales.md": WHALES}))
    assert rag.hierarchy is not None
    (row,) = rag.hierarchy.index.tables.document_rows()
    assert row.method == "llm:test/scripted"
    assert row.summary == "Whales\nWhales are air-breathing mammals that migrate and sing."
    chunks = {c.id for c in rag.store.document_chunks("whales.md")}
    assert row.cited and set(row.cited) <= chunks  # the chunks the model was shown
    assert "Humpback" in chat.calls[0].last_user


def test_a_failed_llm_summary_falls_back_to_extractive(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    chat = ScriptedChat(lambda messages: (_ for _ in ()).throw(GenerationError("backend down")))
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder(max_tokens=64), llm=chat, hierarchy=HierarchyOptions())
    rag.ingest(BytesSource({"whales.md": WHALES}))
    assert rag.hierarchy is not None
    (row,) = rag.hierarchy.index.tables.document_rows()
    assert row.method == "extractive" and "hierarchy_summary_failed" in caplog.text


def test_extractive_is_kept_when_asked_even_with_a_model(tmp_path: Path) -> None:
    chat = ScriptedChat(default="never used")
    rag = Rag(
        SqliteStore(tmp_path / "s.db"),
        HashingEmbedder(max_tokens=64),
        llm=chat,
        hierarchy=HierarchyOptions(summary="extractive"),
    )
    rag.ingest(BytesSource({"whales.md": WHALES}))
    assert not chat.calls


def test_llm_summaries_need_a_model(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs a chat model"):
        Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder(), hierarchy=HierarchyOptions(summary="llm"))


@pytest.mark.parametrize(
    ("field", "value"),
    [("summary", "magic"), ("documents", 0), ("combine", "sum"), ("branching", 1), ("levels", 9), ("questions", -1)],
)
def test_options_are_validated_with_the_field_named(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=f"hierarchy.{field}"):
        HierarchyOptions(**{field: value})  # type: ignore[arg-type]


def test_hypothetical_questions_parse_lines() -> None:
    chat = ScriptedChat(lambda m: "1. How far do whales migrate?\n- Why do whales sing?\n\nok")
    assert hypothetical_questions(chat, "text", 3) == ["How far do whales migrate?", "Why do whales sing?"]
    failing = ScriptedChat([GenerationError("down")])
    assert hypothetical_questions(failing, "text", 3) == []


def test_a_failing_summary_never_fails_ingestion_and_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from ragwright.hierarchy.index import HierarchyIndex

    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder(max_tokens=64), hierarchy=HierarchyOptions())
    original = HierarchyIndex.write

    def broken(self: HierarchyIndex, record: object, chunks: object) -> None:
        raise RuntimeError("embedder down")

    monkeypatch.setattr(HierarchyIndex, "write", broken)
    report = rag.ingest(BytesSource({"whales.md": WHALES}))
    assert report.added == 1 and not report.failed
    assert rag.hierarchy is not None and rag.hierarchy.index.tables.documents() == {}
    assert "hierarchy_summary_failed" in caplog.text
    monkeypatch.setattr(HierarchyIndex, "write", original)
    assert rag.hierarchy.sync()["summarised"] == 1
    assert set(rag.hierarchy.index.tables.documents()) == {"whales.md"}
