"""Contextual enrichment with an LLM on re-ingestion (issue 26 item 1): the model's cost is paid for the
documents that changed and no others, and the ingest report counts exactly the calls made in that run."""

from ragwright.models.llms.base import Message
from ragwright.options import ChunkingOptions
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import ScriptedChat
from tests.chunk.test_enrich import CountingEmbedder

PUMP = b"# Pump manual\n\nThe Zephyr pump moves coolant.\n\n## Maintenance\n\nReplace the seal every spring.\n"
BOILER = b"# Boiler notes\n\nThe boiler heats water for the plant.\n"


def situate(messages: list[Message]) -> str:
    return "Part of the pump manual." if "Zephyr" in messages[-1].content else "Part of the boiler notes."


def test_unchanged_documents_cost_no_llm_call_and_an_edited_one_costs_its_own_chunks_only() -> None:
    store, embedder, chat = MemoryStore(), CountingEmbedder(), ScriptedChat(situate)
    options = ChunkingOptions(context="llm")
    with Rag(store, embedder, chunking=options, llm=chat) as rag:
        first = rag.ingest(BytesSource({"pump.md": PUMP, "boiler.md": BOILER}))
    assert first.added == 2 and first.llm_calls == len(chat.calls) == 3  # 2 pump chunks + 1 boiler chunk
    assert first.to_dict()["llm_prompt_tokens"] > 0 and first.llm_seconds >= 0

    calls, embedded = len(chat.calls), len(embedder.texts)
    with Rag(store, embedder, chunking=options, llm=chat) as rag:
        again = rag.ingest(BytesSource({"pump.md": PUMP, "boiler.md": BOILER}))
    assert again.unchanged == 2 and again.llm_calls == 0 and again.to_dict()["llm_prompt_tokens"] == 0
    assert len(chat.calls) == calls and len(embedder.texts) == embedded  # nothing asked, nothing embedded

    edited = BOILER.replace(b"heats water", b"heats water and steam")
    with Rag(store, embedder, chunking=options, llm=chat) as rag:
        third = rag.ingest(BytesSource({"pump.md": PUMP, "boiler.md": edited}))
    assert third.updated == 1 and third.unchanged == 1
    new_calls = chat.calls[calls:]
    assert third.llm_calls == len(new_calls) == 1  # the boiler's one chunk; the pump manual is not asked about
    assert all("boiler" in c.messages[-1].content.lower() for c in new_calls)
    assert embedder.texts[embedded:] == [t.embed_text for t in store.document_chunks("boiler.md")]
    assert store.document_chunks("boiler.md")[0].embed_text.startswith("Part of the boiler notes.\n\n")  # type: ignore[union-attr]
