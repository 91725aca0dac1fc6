"""Propositional chunking: self-contained propositions are searched, their source chunk is returned."""

import json

import pytest

from ragwright.chunk import make_chunker
from ragwright.chunk.propositions import SYSTEM, PropositionSplitter, sentence_spans
from ragwright.errors import ConfigError, GenerationError
from ragwright.model.chunk import Chunk
from ragwright.models.llms.base import Message
from ragwright.options import ChunkingOptions, ParentOptions
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

PASSAGE = "The Zephyr pump moves coolant through the loop. It must be serviced every spring. Its seal is rubber."
REPLY = [
    "The Zephyr pump moves coolant through the reactor loop.",
    "The Zephyr pump must be serviced every spring.",
    "The seal of the Zephyr pump is made of rubber.",
]


def source(text: str = PASSAGE) -> Chunk:
    return Chunk.create("d", text, 0, section_path=("Manual",), metadata={"lang": "en"}, tenant="t", acl=("g",))


def test_propositions_map_back_to_their_sentences_and_point_to_their_source() -> None:
    chat = ScriptedChat([json.dumps(REPLY)])
    splitter = PropositionSplitter(chat, HashingEmbedder().count_tokens, 128)
    props, sources = splitter.split("Pump manual", [source()])
    assert [p.text for p in props] == REPLY
    spans = sentence_spans(PASSAGE)
    assert [(p.metadata["source_start"], p.metadata["source_end"]) for p in props] == spans
    assert [PASSAGE[a:b] for a, b in spans][1] == "It must be serviced every spring."
    assert all(p.parent_id == sources[0].id and p.metadata["source_chunk"] == sources[0].id for p in props)
    assert all(p.tenant == "t" and p.acl == ("g",) and p.metadata["lang"] == "en" for p in props)  # inherited
    assert [p.prev_id for p in props] == [None, props[0].id, props[1].id]
    assert sources[0].text == PASSAGE and sources[0].metadata["parent"] is True
    call = chat.calls[0]
    assert call.messages[0] == Message("system", SYSTEM) and call.kwargs["json_schema"]["type"] == "array"
    assert call.last_user.startswith("Title: Pump manual\nSection: Manual\nPassage:\n")
    assert splitter.ledger.calls == 1 and splitter.dropped == 0 and splitter.restored == 0


def test_unsupported_propositions_are_dropped_and_missed_sentences_restored() -> None:
    reply = ["The Zephyr pump moves coolant through the reactor loop.", "Bananas grow quickly in Ecuador."]
    splitter = PropositionSplitter(ScriptedChat([json.dumps(reply)]), HashingEmbedder().count_tokens, 128)
    props, _ = splitter.split(None, [source()])
    assert splitter.dropped == 1 and splitter.restored == 2
    # nothing of the passage is lost: the two sentences the model skipped are kept verbatim, in order
    assert [p.text for p in props] == [reply[0], "It must be serviced every spring.", "Its seal is rubber."]


@pytest.mark.parametrize("reply", [GenerationError("model down"), "Sure! Here are the propositions: none"])
def test_a_failed_or_unusable_reply_keeps_the_chunk_whole(reply: object) -> None:
    chat = ScriptedChat([reply])  # type: ignore[list-item]
    splitter = PropositionSplitter(chat, HashingEmbedder().count_tokens, 128)
    chunk = Chunk.create("d", PASSAGE, 0, embed_text=f"Manual\n\n{PASSAGE}")
    props, sources = splitter.split(None, [chunk])
    assert len(props) == 1 and props[0].text == PASSAGE and props[0].embed_text == f"Manual\n\n{PASSAGE}"
    assert props[0].parent_id == sources[0].id
    assert splitter.ledger.failures + splitter.unusable == 1


def test_options_and_combinations_are_checked() -> None:
    with pytest.raises(ConfigError, match="propositions needs a chat model"):
        make_chunker(HashingEmbedder(), ChunkingOptions(propositions=True))
    with pytest.raises(ConfigError, match="propositions and parent chunks cannot be combined"):
        Rag(
            MemoryStore(),
            HashingEmbedder(),
            chunking=ChunkingOptions(propositions=True),
            llm=ScriptedChat(),
            parents=ParentOptions(),
        )
    chunker = make_chunker(HashingEmbedder(), ChunkingOptions(propositions=True), llm=ScriptedChat())
    assert "+propositions/1:test/scripted:dense-x/1:0.5" in chunker.fingerprint


def test_search_finds_a_proposition_and_returns_its_source_chunk() -> None:
    md = f"# Pump manual\n\n{PASSAGE}\n\n## Storage\n\nKeep spare parts in the dry store room.\n".encode()

    def reply(messages: list[Message]) -> str:
        passage = messages[-1].content.split("Passage:\n", 1)[1]
        return json.dumps(REPLY if "Zephyr" in passage else ["Spare parts of the Zephyr pump are kept dry."])

    store = MemoryStore()
    with Rag(store, HashingEmbedder(), chunking=ChunkingOptions(propositions=True), llm=ScriptedChat(reply)) as rag:
        report = rag.ingest(BytesSource({"m.md": md}))
        assert report.chunks == 4 and report.llm_calls == 2  # 3 + 1 propositions from 2 chunks
        assert store.get_record("m.md").chunk_count == 4  # type: ignore[union-attr]
        hits = rag.search("seal made of rubber", top_k=1)
        assert hits[0].chunk.text == PASSAGE  # the source chunk, not the proposition
        assert "The seal of the Zephyr pump is made of rubber." in {c.text for c in store.document_chunks("m.md")}
