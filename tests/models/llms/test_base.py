"""The chat seam: messages, JSON parsing, the ledger, and the ScriptedChat double."""

from __future__ import annotations

import pytest

from ragwright.errors import GenerationError
from ragwright.models.llms import ChatLedger, ChatModel, Message, Usage, parse_json
from ragwright.testing.doubles import ScriptedChat


def test_message_validation_and_wire_shape() -> None:
    with pytest.raises(ValueError, match="role"):
        Message("robot", "hi")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Message("user", None)  # type: ignore[arg-type]
    m = Message.coerce({"role": "assistant", "content": None, "name": "x"})
    assert m == Message("assistant", "", name="x")
    assert m.to_dict() == {"role": "assistant", "content": "", "name": "x"}
    with pytest.raises(TypeError):
        Message.coerce({"content": "no role"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('Sure! ```json\n{"a": [1, 2]}\n``` hope that helps', {"a": [1, 2]}),
        ('The answer is {"a": 2} as requested', {"a": 2}),
        ("ranking: [3, 1, 2].", [3, 1, 2]),
    ],
)
def test_parse_json_finds_the_value(text: str, expected: object) -> None:
    assert parse_json(text) == expected


def test_parse_json_rejects_garbage_and_invalid_values() -> None:
    with pytest.raises(GenerationError, match="did not reply with JSON"):
        parse_json("no json here")

    def positive(value: object) -> int:
        if not isinstance(value, int) or value <= 0:
            raise ValueError("not a positive int")
        return value

    assert parse_json("7", positive) == 7
    with pytest.raises(GenerationError, match="rejected: not a positive int"):
        parse_json("-3", positive)


def test_ledger_accumulates() -> None:
    ledger = ChatLedger()
    ledger.record(Usage(10, 5), 0.5)
    ledger.record(Usage(1, 1), 0.25)
    ledger.record_failure(1.0)
    assert ledger.snapshot() == {
        "llm_calls": 3,
        "llm_failures": 1,
        "prompt_tokens": 11,
        "completion_tokens": 6,
        "llm_seconds": 1.75,
    }


def test_scripted_chat_consumes_the_script_in_order() -> None:
    chat = ScriptedChat(["first", GenerationError("boom"), lambda msgs: msgs[-1].content[::-1]])
    assert isinstance(chat, ChatModel)
    assert chat.chat([Message("user", "a")], temperature=0.3).text == "first"
    with pytest.raises(GenerationError, match="boom"):
        chat.chat([Message("user", "b")])
    assert chat.chat([{"role": "user", "content": "abc"}], max_tokens=5).text == "cba"  # type: ignore[list-item]
    with pytest.raises(GenerationError, match="exhausted"):
        chat.chat([Message("user", "c")])
    assert [c.last_user for c in chat.calls] == ["a", "b", "abc", "c"]
    assert chat.calls[0].kwargs["temperature"] == 0.3
    assert chat.calls[2].kwargs["max_tokens"] == 5
    assert chat.remaining == 0


def test_scripted_chat_function_default_and_usage() -> None:
    chat = ScriptedChat(lambda msgs: f"{len(msgs)} messages")
    reply = chat.chat([Message("system", "s"), Message("user", "one two three")])
    assert reply.text == "2 messages"
    assert reply.usage == Usage(4, 2)
    assert ScriptedChat(default="ok").chat([Message("user", "x")]).text == "ok"


def test_scripted_chat_streams_word_tokens_that_join_to_the_reply() -> None:
    text = "  Hello,  streaming\nworld! "
    chat = ScriptedChat([text, text])
    pieces = list(chat.stream([Message("user", "x")]))
    assert len(pieces) == 3
    assert "".join(pieces) == text == chat.chat([Message("user", "x")]).text
    assert chat.calls[0].stream and not chat.calls[1].stream
