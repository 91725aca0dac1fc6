"""Contextual enrichment: a context prefix per chunk in embed_text (embedded, BM25-indexed), never displayed."""

from collections.abc import Sequence
from typing import Any

import pytest

from ragwright.chunk import make_chunker
from ragwright.chunk.compose import EnrichedChunker
from ragwright.chunk.enrich import SITUATE_SYSTEM, ContextEnricher, document_gist
from ragwright.errors import ConfigError, GenerationError
from ragwright.model.document import Document, Element, ElementKind
from ragwright.models.llms.base import Message
from ragwright.options import ChunkingOptions
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

LEAD = "The Zephyr pump moves coolant through the reactor loop. It runs at constant pressure."
BODY = "Replace the seal every spring. Use the torque wrench on the flange bolts."


def doc(lead: str = LEAD) -> Document:
    return Document(
        id="manual",
        title="Zephyr pump manual",
        elements=(
            Element(ElementKind.PARAGRAPH, lead),
            Element(ElementKind.HEADING, "Maintenance", level=1),
            Element(ElementKind.PARAGRAPH, BODY),
        ),
    )


class CountingEmbedder(HashingEmbedder):
    """Counts the texts it embeds (not the calls)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.texts: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> Any:
        self.texts.extend(texts)
        return super().embed_documents(texts)


def test_gist_is_the_lead_sentences_within_the_budget() -> None:
    assert " ".join(document_gist(doc(), 64)) == LEAD
    assert document_gist(doc(), 12) == ["The Zephyr pump moves coolant through the reactor loop."]
    short = document_gist(doc(), 4)
    assert len(short) == 1 and LEAD.startswith(short[0]) and short[0] != LEAD.split(". ")[0] + "."


def test_extractive_prefix_goes_to_embed_text_only() -> None:
    chunker = make_chunker(HashingEmbedder(max_tokens=128), ChunkingOptions(context="extractive"))
    assert isinstance(chunker, EnrichedChunker)
    chunks = chunker.chunk(doc())
    first, second = chunks
    assert first.text == LEAD and second.text == BODY  # displayed text untouched
    # the first chunk holds the gist already: only the title is added
    assert first.embed_text == f"Zephyr pump manual\n\n{LEAD}"
    # later chunks get the title and the gist, before their section path and text
    assert second.embed_text == f"Zephyr pump manual\n{LEAD}\n\nMaintenance\n\n{BODY}"
    assert second.metadata["context_chars"] == len(f"Zephyr pump manual\n{LEAD}")
    plain = make_chunker(HashingEmbedder(max_tokens=128), ChunkingOptions()).chunk(doc())
    assert [c.id for c in plain] == [c.id for c in chunks]  # ids follow the displayed text
    assert "context/1:extractive:64" in chunker.fingerprint
    assert chunker.fingerprint != make_chunker(HashingEmbedder(max_tokens=128), ChunkingOptions()).fingerprint


def test_title_already_in_the_section_path_is_not_repeated() -> None:
    document = Document(
        id="d",
        title="Guide",
        elements=(Element(ElementKind.TITLE, "Guide"), Element(ElementKind.PARAGRAPH, "Only text here.")),
    )
    (chunk,) = make_chunker(HashingEmbedder(), ChunkingOptions(context="extractive")).chunk(document)
    assert chunk.embed_text == "Guide\n\nOnly text here."  # the structural section prefix alone


def test_prefix_shrinks_to_the_embedder_window_and_never_cuts_the_chunk() -> None:
    embedder = HashingEmbedder(max_tokens=22)
    chunks = make_chunker(embedder, ChunkingOptions(context="extractive")).chunk(doc())
    second = chunks[1]
    assert second.embed_text is not None and second.embed_text.endswith(f"Maintenance\n\n{BODY}")
    assert embedder.count_tokens(second.embed_text) <= 22
    # the gist's first sentence no longer fits (13 + 3 + 14 words): the prefix is the title alone
    assert second.embed_text.startswith("Zephyr pump manual\n\n")
    tight = HashingEmbedder(max_tokens=15)
    assert make_chunker(tight, ChunkingOptions(context="extractive")).chunk(doc())[1].embed_text == (
        f"Maintenance\n\n{BODY}"
    )


def test_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="context"):
        ChunkingOptions(context="summary")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="context_tokens"):
        ChunkingOptions(context_tokens=4)
    with pytest.raises(ConfigError, match="needs a chat model"):
        make_chunker(HashingEmbedder(), ChunkingOptions(context="llm"))


def test_llm_writes_one_situating_sentence_per_chunk_from_a_shared_document_prefix() -> None:
    def reply(messages: list[Message]) -> str:
        chunk = messages[-1].content.rsplit("<chunk>\n", 1)[1]
        return "About seals." if "seal" in chunk else "About the pump."

    chat = ScriptedChat(reply)
    chunker = make_chunker(HashingEmbedder(), ChunkingOptions(context="llm"), llm=chat)
    first, second = chunker.chunk(doc())
    assert first.embed_text == f"About the pump.\n\n{LEAD}"
    assert second.embed_text == f"About seals.\n\nMaintenance\n\n{BODY}"
    assert len(chat.calls) == 2
    prompts = sorted(c.messages[-1].content for c in chat.calls)
    cut = [p.index("<chunk>") for p in prompts]
    assert prompts[0][: cut[0]] == prompts[1][: cut[1]]  # the document part is identical: prefix-cacheable
    assert prompts[0].startswith('<document title="Zephyr pump manual">') and LEAD in prompts[0]
    assert all(c.messages[0] == Message("system", SITUATE_SYSTEM) for c in chat.calls)
    assert all(c.kwargs["temperature"] == 0.0 for c in chat.calls)
    assert "context/1:llm:64:test/scripted:situate/1:1500" in chunker.fingerprint


def test_a_failed_call_falls_back_to_the_extractive_prefix_and_is_counted() -> None:
    chat = ScriptedChat([GenerationError("model down"), GenerationError("model down")])
    enricher = ContextEnricher("llm", HashingEmbedder().count_tokens, 128, llm=chat, concurrency=1)
    _first, second = enricher.enrich(doc(), make_chunker(HashingEmbedder(), ChunkingOptions()).chunk(doc()))
    assert second.embed_text == f"Zephyr pump manual\n{LEAD}\n\nMaintenance\n\n{BODY}"
    assert enricher.ledger.snapshot()["llm_failures"] == 2 and enricher.ledger.calls == 2


def test_ingestion_indexes_the_prefix_for_bm25_and_records_llm_cost() -> None:
    md = f"# Zephyr pump manual\n\n{LEAD}\n\n## Maintenance\n\n{BODY}\n".encode()
    other = b"# Boiler notes\n\nThe boiler heats water for the plant.\n"
    chat = ScriptedChat(
        lambda m: "This part covers routine upkeep of the coolant pump." if "Zephyr" in m[-1].content else "Boilers."
    )
    with Rag(MemoryStore(), HashingEmbedder(), chunking=ChunkingOptions(context="llm"), llm=chat) as rag:
        report = rag.ingest(BytesSource({"m.md": md, "b.md": other}))
        assert report.llm_calls == 3 and report.llm_failures == 0 and report.to_dict()["llm_calls"] == 3
        hits = rag.search("routine upkeep", top_k=3)
        keyword = [h for h in hits if "bm25" in h.arms]
        assert len(keyword) == 2 and all(h.chunk.document_id == "m.md" for h in keyword)
        assert all("upkeep" not in h.chunk.text for h in hits)  # found through the prefix, shown without it


def test_changing_the_context_re_embeds_only_the_chunks_whose_embedded_text_changed() -> None:
    md = f"# Zephyr pump manual\n\n{LEAD}\n\n## Maintenance\n\n{BODY}\n".encode()
    store, embedder = MemoryStore(), CountingEmbedder()
    with Rag(store, embedder) as rag:
        assert rag.ingest(BytesSource({"m.md": md})).chunks == 2
    before = len(embedder.texts)
    with Rag(store, embedder, chunking=ChunkingOptions(context="extractive")) as rag:
        report = rag.ingest(BytesSource({"m.md": md}))
    assert report.updated == 1 and report.chunks == 2
    # the first chunk holds the gist and its section path starts with the title: its text is unchanged
    assert report.embeddings_reused == 1 and len(embedder.texts) - before == 1
    # the title is the section path's first heading already: the prefix is the gist alone
    assert embedder.texts[-1] == f"{LEAD}\n\nZephyr pump manual > Maintenance\n\n{BODY}"
    chunks = store.document_chunks("m.md")
    vectors = store.get_vectors([c.id for c in chunks])
    for c in chunks:  # every stored vector is the vector of the chunk's embedded text
        assert vectors[c.id] == pytest.approx(embedder.embed_documents([c.text_for_embedding])[0], abs=1e-6)


def test_editing_one_section_re_embeds_that_chunk_alone() -> None:
    md = f"# Manual\n\n{LEAD}\n\n## Maintenance\n\n{BODY}\n"
    store, embedder = MemoryStore(), CountingEmbedder()
    with Rag(store, embedder) as rag:
        rag.ingest(BytesSource({"m.md": md.encode()}))
        before = len(embedder.texts)
        report = rag.ingest(BytesSource({"m.md": md.replace("every spring", "every autumn").encode()}))
    assert report.updated == 1 and report.embeddings_reused == 1 and len(embedder.texts) - before == 1
    assert "every autumn" in embedder.texts[-1]
    assert report.tokens_embedded == embedder.count_tokens(embedder.texts[-1])


def test_stage_options_leave_the_base_chunkers_fingerprint_alone() -> None:
    """Stores chunked before the stages existed (or without them) are not re-chunked by an upgrade."""
    embedder = HashingEmbedder()
    plain = make_chunker(embedder, ChunkingOptions())
    staged = make_chunker(embedder, ChunkingOptions(context="extractive", context_tokens=100))
    assert isinstance(staged, EnrichedChunker)
    assert staged.inner.fingerprint == plain.fingerprint
    assert staged.fingerprint == f"{plain.fingerprint}+context/1:extractive:100"


LONG_LEAD = (
    "The Zephyr pump moves coolant through the reactor loop at constant pressure, from the intake valve on the "
    "north wall to the heat exchanger beside the turbine hall, day and night."
)


def test_a_chunk_that_fills_the_window_is_not_sent_to_the_model() -> None:
    embedder = HashingEmbedder()
    full, short = make_chunker(embedder, ChunkingOptions()).chunk(doc(LONG_LEAD))
    window = embedder.count_tokens(f"\n\n{full.text}") + 4  # 4 tokens free: no sentence could be kept
    assert window - embedder.count_tokens(f"\n\n{short.text_for_embedding}") >= 8
    chat = ScriptedChat(lambda messages: "About seals.")
    enricher = ContextEnricher("llm", embedder.count_tokens, window, llm=chat, concurrency=1)
    first, second = enricher.enrich(doc(LONG_LEAD), [full, short])
    assert len(chat.calls) == 1 and "Replace the seal" in chat.calls[0].messages[-1].content
    assert second.embed_text == f"About seals.\n\nMaintenance\n\n{BODY}"
    assert first.embed_text is None or first.embed_text.endswith(LONG_LEAD)  # never cut, never an LLM prefix
    assert enricher.ledger.calls == 1


def test_a_situating_sentence_longer_than_the_room_is_cut_at_a_word_boundary_not_dropped() -> None:
    embedder = HashingEmbedder()
    chunk = make_chunker(embedder, ChunkingOptions()).chunk(doc())[1]
    sentence = "This section of the Zephyr pump manual explains the yearly maintenance of the seal and flange bolts."
    window = embedder.count_tokens(f"\n\n{chunk.text_for_embedding}") + 12  # room for 12 of its 17 words
    chat = ScriptedChat(lambda messages: sentence)
    (enriched,) = ContextEnricher("llm", embedder.count_tokens, window, llm=chat, concurrency=1).enrich(doc(), [chunk])
    assert enriched.embed_text is not None and enriched.embed_text.endswith(f"\n\nMaintenance\n\n{BODY}")
    prefix = enriched.embed_text.split("\n\n", 1)[0]
    assert prefix and sentence.startswith(prefix) and prefix != sentence
    assert sentence.split()[: len(prefix.split())] == prefix.split()  # whole words
    assert embedder.count_tokens(enriched.embed_text) <= window
