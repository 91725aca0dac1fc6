"""``rag.conversation()``: follow-ups condensed, the budgeted history in the chat model's prompt, the turn
recorded; sessions kept per identity in the store; persistent memory recalled into the prompt."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from ragwright.errors import ConfigError
from ragwright.memory import MemoryOptions, PersistentMemoryOptions, heuristic_condense
from ragwright.memory.budget import SUMMARY_PREFIX
from ragwright.memory.recall import RECALL_PREFIX
from ragwright.model.identity import Identity
from ragwright.models.llms.base import Message
from ragwright.options import RagOptions
from ragwright.rag import Rag
from ragwright.rag_memory import enable_memory
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

NORMANS = b"# Normans\n\nThe Normans gave their name to Normandy, a region in France. Rollo led the Norse settlers."
RHINE = b"# Rhine\n\nThe Rhine begins in the Swiss Alps and flows north through Germany into the North Sea."
ANN, BOB = Identity(user="ann"), Identity(user="bob")
OPTIONS = RagOptions(answerability="off", extractive_min_similarity=0.1)


def make(store: object = None, llm: object = None, **memory: object) -> Rag:
    rag = Rag(store or MemoryStore(), HashingEmbedder(max_tokens=64), rag_options=OPTIONS, llm=llm)  # type: ignore[arg-type]
    rag.ingest(BytesSource({"normans.md": NORMANS, "rhine.md": RHINE}))
    if memory:
        enable_memory(rag, MemoryOptions(**memory))  # type: ignore[arg-type]
    return rag


def test_the_heuristic_carries_the_names_of_the_earlier_question() -> None:
    history = [Message("user", "Who founded the duchy of Normandy?"), Message("assistant", "Rollo.")]
    assert heuristic_condense("When did he die?", history, 6).text == "When did he die? (Normandy)"
    assert heuristic_condense("Where does the Rhine begin?", history, 6).method == "unchanged"  # names its subject
    assert heuristic_condense("When did he die?", history, 0).method == "unchanged"
    # the nearest antecedent first, and a chain of follow-ups keeps the subject the topic-setter named
    chain = [*history, Message("user", "When did he die in France?"), Message("assistant", "In 930.")]
    assert heuristic_condense("Where was he buried?", chain, 6).carried == ("France", "Normandy")


def test_a_follow_up_retrieves_with_the_condensed_question_without_a_model() -> None:
    rag = make()
    chat = rag.conversation(identity=ANN)
    chat.ask("What region did the Normans give their name to?")
    response = chat.ask("Who led their settlers?")
    turn = chat.last
    assert turn is not None and turn.condensed_by == "heuristic" and "Normans" in turn.standalone
    assert response.sources[0].document_id == "normans.md"
    assert [m.role for m in chat.history] == ["user", "assistant", "user", "assistant"]
    assert chat.history[2].content == "Who led their settlers?"  # the user's words are recorded, not the rewrite


def answering_model(calls: list[str]) -> ScriptedChat:
    """Condenses (the rewrite prompt), summarises (the memory prompt) and answers, recording which."""

    def reply(messages: list[Message]) -> str:
        system = messages[0].content
        if system.startswith("You prepare search queries"):
            calls.append("condense")
            return json.dumps({"standalone_question": "Who led the Norman settlers of Normandy?"})
        if system.startswith("You keep the memory"):
            calls.append("summary")
            return "The user asked about the Normans and Normandy."
        calls.append("answer")
        return "Rollo led them [Source 1]."

    return ScriptedChat(reply)


def test_with_a_model_the_follow_up_is_condensed_and_the_history_is_in_the_prompt() -> None:
    calls: list[str] = []
    llm = answering_model(calls)
    rag = make(llm=llm, condense="llm")  # opt-in: "auto" condenses heuristically even with a model
    chat = rag.conversation(identity=ANN)
    chat.ask("What region did the Normans give their name to?")
    response = chat.ask("Who led them?")
    assert chat.last is not None and chat.last.condensed_by == "llm"
    assert chat.last.standalone == "Who led the Norman settlers of Normandy?"
    assert response.answer.startswith("Rollo led them") and response.sources[0].document_id == "normans.md"
    answer_call = [c for c in llm.calls if not c.messages[0].content.startswith("You prepare")][-1]
    contents = [m.content for m in answer_call.messages]
    assert "What region did the Normans give their name to?" in contents  # the earlier turn
    assert "Rollo led them [Source 1]." in contents  # the earlier answer


def test_a_long_conversation_is_summarised_into_the_prompt_within_the_budget() -> None:
    calls: list[str] = []
    llm = answering_model(calls)
    rag = make(llm=llm, budget_tokens=400, summary_max_tokens=64)
    chat = rag.conversation(identity=ANN)
    for i in range(8):
        chat.ask(f"Question {i}: tell me more about the Normans and Normandy, " + "in detail " * 20)
        assert chat.last is not None and chat.last.budget.total_tokens <= 400
    assert "summary" in calls and chat.summary == "The user asked about the Normans and Normandy."
    answer_call = [c for c in llm.calls if c.messages[0].content.startswith(SUMMARY_PREFIX)][-1]
    assert answer_call.messages[0].content == f"{SUMMARY_PREFIX} The user asked about the Normans and Normandy."


def test_auto_condenses_heuristically_even_with_a_model() -> None:
    calls: list[str] = []
    rag = make(llm=answering_model(calls))
    chat = rag.conversation(identity=ANN)
    chat.ask("What region did the Normans give their name to?")
    chat.ask("Who led them?")
    assert chat.last is not None and chat.last.condensed_by == "heuristic" and "condense" not in calls


def test_a_failing_condenser_degrades_to_the_heuristic(caplog: pytest.LogCaptureFixture) -> None:
    def reply(messages: list[Message]) -> str:
        if messages[0].content.startswith("You prepare search queries"):
            return "not json at all"
        return "Rollo [Source 1]."

    rag = make(llm=ScriptedChat(reply), condense="llm")
    chat = rag.conversation(identity=ANN)
    chat.ask("What region did the Normans give their name to?")
    with caplog.at_level(logging.WARNING, logger="ragwright.memory"):
        chat.ask("Who led them?")
    assert chat.last is not None and chat.last.condensed_by == "heuristic"
    assert "memory_condense_failed" in caplog.text


def test_a_session_is_kept_in_the_store_per_identity(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    rag = make(SqliteStore(path))
    rag.conversation(identity=ANN, session="trip").ask("What region did the Normans give their name to?")
    rag.close()
    again = Rag(SqliteStore(path), HashingEmbedder(max_tokens=64), rag_options=OPTIONS)
    chat = again.conversation(identity=ANN, session="trip")
    assert chat.history[0].content == "What region did the Normans give their name to?"
    chat.ask("Who led their settlers?")
    assert chat.last is not None and "Normans" in chat.last.standalone  # continued from the stored turns
    assert again.conversation(identity=BOB, session="trip").history == []  # same name, another user
    assert again.conversation(identity=Identity("globex", user="ann"), session="trip").history == []
    chat.reset()
    assert again.conversation(identity=ANN, session="trip").history == []
    again.close()


def test_persistent_memory_is_recalled_into_the_prompt_for_its_owner_only() -> None:
    calls: list[str] = []
    llm = answering_model(calls)
    rag = make(llm=llm, persistent=PersistentMemoryOptions(min_score=0.1))
    rag.conversation(identity=ANN).ask("What region did the Normans give their name to?")
    assert [i.kind for i in rag.memory.items(identity=ANN)] == ["turn"]  # type: ignore[union-attr]
    assert rag.memory.items(identity=BOB) == []  # type: ignore[union-attr]
    fresh = rag.conversation(identity=ANN)  # a new conversation: no history, but memory
    fresh.ask("Tell me about the Normans in Normandy again")
    assert fresh.last is not None and fresh.last.recalled and "Normans" in fresh.last.recalled[0]
    assert "[Source" not in fresh.last.recalled[0]  # the old answer's citation markers are not kept
    recalled_prompt = llm.calls[-1].messages[0].content
    assert recalled_prompt.startswith(RECALL_PREFIX)
    other = rag.conversation(identity=BOB)
    other.ask("Tell me about the Normans in Normandy again")
    assert other.last is not None and other.last.recalled == ()
    assert not llm.calls[-1].messages[0].content.startswith(RECALL_PREFIX)


def test_modes_needing_a_model_are_refused_without_one() -> None:
    rag = make()
    with pytest.raises(ConfigError, match="needs a chat model"):
        enable_memory(rag, MemoryOptions(summarize="llm"))
    with pytest.raises(ConfigError, match="needs a chat model"):
        enable_memory(rag, MemoryOptions(condense="llm"))
    with pytest.raises(ConfigError, match="session"):
        rag.conversation(session="  ")


def test_a_camel_case_name_is_carried_into_the_follow_up() -> None:
    # names are stemmed as analyze() stems them: "PyPy" and "macOS" stay names, not the stems "pypi"/"maco"
    history = [Message("user", "Is PyPy supported on macOS?"), Message("assistant", "Yes. [Source 1]")]
    out = heuristic_condense("Which versions of it?", history, 3)
    assert out.carried == ("PyPy", "macOS")
