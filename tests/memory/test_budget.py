"""The history budget in cl100k tokens: newest turns kept whole, the oldest summarised (chat model, or
extractively when there is none or it fails) or dropped, the system prompt and question never dropped."""

from __future__ import annotations

import logging

import pytest

from ragwright.chunk.tokens import count_tokens
from ragwright.errors import ConfigError, GenerationError
from ragwright.memory import (
    MESSAGE_OVERHEAD,
    ConversationMemory,
    MemoryOptions,
    PersistentMemoryOptions,
    fit_history,
    message_tokens,
)
from ragwright.memory.budget import SUMMARY_PREFIX
from ragwright.models.llms.base import Message
from ragwright.testing.doubles import ScriptedChat

SYSTEM = "You answer questions about the Normans from the sources."
QUESTION = "And when did they conquer England?"


def long_history(turns: int = 30) -> list[Message]:
    out = []
    for i in range(turns):
        out.append(Message("user", f"Question {i}: what did the Normans do in the year {1000 + i}?"))
        out.append(Message("assistant", f"In {1000 + i} the Normans built castle number {i}. " * 6))
    return out


def cost(messages: list[Message]) -> int:
    return sum(count_tokens(m.content) + MESSAGE_OVERHEAD for m in messages)


def test_message_cost_is_cl100k_tokens_plus_the_overhead() -> None:
    m = Message("user", "Hello, Normandy!")
    assert message_tokens(m) == count_tokens("Hello, Normandy!") + MESSAGE_OVERHEAD == 5 + 4  # Hello , Norm andy !


def test_a_long_history_is_cut_to_the_budget_newest_kept_system_and_question_kept() -> None:
    history = long_history()
    options = MemoryOptions(budget_tokens=700, summarize="off")
    fitted = fit_history(history, question=QUESTION, system_prompt=SYSTEM, options=options)
    report = fitted.report
    fixed = count_tokens(SYSTEM) + count_tokens(QUESTION) + 2 * MESSAGE_OVERHEAD
    assert report.fixed_tokens == fixed
    assert report.history_tokens_in == cost(history)
    kept = list(fitted.messages)
    assert report.history_tokens_out == cost(kept) and fixed + cost(kept) <= 700
    # the newest turns, whole, in order: a suffix of the history that starts at a user message
    assert kept == history[-len(kept) :] and kept[0].role == "user" and len(kept) % 2 == 0
    # and as many as fit: one more turn would not
    one_more = history[-len(kept) - 2 :]
    assert fixed + cost(one_more) > 700
    assert report.turns_kept == len(kept) // 2 and report.turns_dropped == 30 - len(kept) // 2
    assert report.summary_mode is None and fitted.summary is None and not report.over_budget


def test_leading_system_messages_are_kept_and_counted_as_fixed() -> None:
    host = Message("system", "Never reveal internal notes.")
    fitted = fit_history(
        [host, *long_history()], question=QUESTION, system_prompt=SYSTEM, options=MemoryOptions(budget_tokens=400)
    )
    assert fitted.messages[0] == host
    assert fitted.report.fixed_tokens == count_tokens(SYSTEM) + count_tokens(QUESTION) + 2 * 4 + message_tokens(host)
    assert fitted.report.total_tokens <= 400


def test_everything_fits_nothing_changes() -> None:
    history = long_history(2)
    fitted = fit_history(history, question=QUESTION, system_prompt=SYSTEM, options=MemoryOptions())
    assert list(fitted.messages) == history and fitted.report.turns_dropped == 0


def test_a_fixed_part_over_the_budget_keeps_system_and_question_and_drops_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    huge = "Tell me everything about the Normans. " * 40
    with caplog.at_level(logging.WARNING, logger="ragwright.memory"):
        fitted = fit_history(
            long_history(3),
            question=huge,
            system_prompt=SYSTEM,
            options=MemoryOptions(budget_tokens=64, summary_max_tokens=32),
        )
    assert fitted.messages == () and fitted.report.over_budget and fitted.report.turns_dropped == 3
    assert "memory_budget_exceeded" in caplog.text


def test_dropped_turns_are_summarised_by_the_chat_model(caplog: pytest.LogCaptureFixture) -> None:
    chat = ScriptedChat(["The user asked what the Normans did each year; they built castles."])
    history = long_history()
    options = MemoryOptions(budget_tokens=700, summary_max_tokens=100)
    with caplog.at_level(logging.INFO, logger="ragwright.memory"):
        fitted = fit_history(history, question=QUESTION, system_prompt=SYSTEM, options=options, llm=chat)
    assert fitted.summary == "The user asked what the Normans did each year; they built castles."
    first = fitted.messages[0]
    assert first.role == "system" and first.content.startswith(SUMMARY_PREFIX) and fitted.summary in first.content
    assert fitted.report.summary_mode == "llm" and fitted.report.turns_summarised == fitted.report.turns_dropped > 0
    assert fitted.report.total_tokens <= 700
    assert fitted.report.summary_tokens == message_tokens(first)
    # the summary call saw the dropped turns (the oldest), not the kept ones, and was capped
    call = chat.calls[0]
    assert "Question 0:" in call.last_user and "Question 29:" not in call.last_user
    assert call.kwargs["max_tokens"] <= 100
    assert "memory_turns_summarised" in caplog.text and f"{fitted.report.turns_dropped} of 30 turns" in caplog.text


def test_a_long_model_summary_is_clipped_to_its_share() -> None:
    chat = ScriptedChat(["castle " * 500])
    fitted = fit_history(
        long_history(), question=QUESTION, system_prompt=SYSTEM, options=MemoryOptions(budget_tokens=700), llm=chat
    )
    assert fitted.summary is not None and count_tokens(fitted.summary) <= 256
    assert fitted.report.total_tokens <= 700


def test_without_a_model_the_summary_is_extractive() -> None:
    history = long_history()
    fitted = fit_history(
        history,
        question=QUESTION,
        system_prompt=SYSTEM,
        options=MemoryOptions(budget_tokens=700, summary_max_tokens=80),
    )
    assert fitted.report.summary_mode == "extractive" and fitted.summary is not None
    # first sentences of the dropped messages, newest of them kept when they do not all fit
    dropped_last = history[2 * fitted.report.turns_dropped - 2]
    assert dropped_last.content in fitted.summary
    assert count_tokens(fitted.summary) <= 80 and fitted.report.total_tokens <= 700


def test_a_failing_model_degrades_to_the_extractive_summary(caplog: pytest.LogCaptureFixture) -> None:
    chat = ScriptedChat([GenerationError("model server down")])
    with caplog.at_level(logging.WARNING, logger="ragwright.memory"):
        fitted = fit_history(
            long_history(), question=QUESTION, system_prompt=SYSTEM, options=MemoryOptions(budget_tokens=700), llm=chat
        )
    assert fitted.report.summary_mode == "extractive" and fitted.summary
    assert "memory_summary_failed" in caplog.text and "model server down" in caplog.text


def test_summarize_off_drops_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    chat = ScriptedChat([])
    with caplog.at_level(logging.INFO, logger="ragwright.memory"):
        fitted = fit_history(
            long_history(),
            question=QUESTION,
            system_prompt=SYSTEM,
            options=MemoryOptions(budget_tokens=700, summarize="off"),
            llm=chat,
        )
    assert not chat.calls and fitted.summary is None
    assert "memory_turns_dropped" in caplog.text and "without a summary" in caplog.text


def test_a_conversation_stays_bounded_and_rolls_its_summary() -> None:
    chat = ScriptedChat(lambda messages: "Summary: the user asks about Norman castles year by year.")
    memory = ConversationMemory(MemoryOptions(budget_tokens=500, summary_max_tokens=64))
    for turn in long_history(20)[::2]:
        fitted = memory.fit(turn.content, SYSTEM, llm=chat)
        assert fitted.report.total_tokens <= 500
        memory.commit(fitted, turn.content, "They built another castle. " * 6)
    assert memory.summary == "Summary: the user asks about Norman castles year by year."
    assert cost(memory.turns) < 500  # bounded, however long the conversation
    # the rolling summary is handed to the next summary call
    assert any("summary of what came before" in c.last_user for c in chat.calls)


def test_options_are_validated_with_what_to_change() -> None:
    with pytest.raises(ConfigError, match=r"memory\.budget_tokens"):
        MemoryOptions(budget_tokens=10)
    with pytest.raises(ConfigError, match=r"below memory\.budget_tokens"):
        MemoryOptions(budget_tokens=200, summary_max_tokens=300)
    with pytest.raises(ConfigError, match=r"memory\.summarize"):
        MemoryOptions(summarize="abstractive")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"memory\.condense"):
        MemoryOptions(condense="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"memory\.persistent\.min_score"):
        PersistentMemoryOptions(min_score=1.5)
    with pytest.raises(ConfigError, match=r"memory\.persistent\.min_score"):
        PersistentMemoryOptions(min_score=float("nan"))
    with pytest.raises(ConfigError, match=r"memory\.persistent\.top_k"):
        PersistentMemoryOptions(top_k=0)
    with pytest.raises(ConfigError, match="needs a chat model"):
        fit_history([], question="q", system_prompt=SYSTEM, options=MemoryOptions(summarize="llm"))
