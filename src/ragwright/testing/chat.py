"""The conformance suite of :class:`~ragwright.models.llms.base.ChatModel` (chat backends).

Subclass it with a ``chat`` fixture giving a ready backend (return one loaded by a module-scoped
fixture to load a real model once)::

    class TestMyChat(ChatModelConformance):
        @pytest.fixture
        def chat(self, my_loaded_chat):
            return my_loaded_chat

The checks ask the model to count (:data:`COUNT`): a model that follows instructions does, and a test
double can be scripted to (``ScriptedChat(lambda messages: "1, 2, 3, …", honour_limits=True)``). They
check: the protocol; ``chat`` returns a :class:`~ragwright.models.llms.base.ChatResponse` with text and
non-negative usage; at temperature 0, ``"".join(stream(…)) == chat(…).text`` (complete and stream
agree); ``max_tokens`` bounds the reply (its reported completion tokens, and its words) in both;
``stop`` ends the reply before the stop string in both; and a call without messages raises
:class:`~ragwright.errors.GenerationError` (typed, so optional stages can degrade on it).
"""

from __future__ import annotations

from typing import Any

import pytest

from ragwright.errors import GenerationError
from ragwright.models.llms.base import ChatModel, ChatResponse, Message

COUNT = [
    Message("system", "You follow instructions exactly."),
    Message("user", "Count from 1 to 30, separated by commas and spaces. Reply with the numbers only."),
]


class ChatModelConformance:
    """Subclass and provide a ``chat`` fixture."""

    #: Generous cap for the replies the suite reads whole (keeps a real model's calls short).
    reply_tokens: int = 64
    #: The cap the ``max_tokens`` check sets.
    small_cap: int = 5
    #: A stop string the count reaches.
    stop: str = ", 5"

    def test_satisfies_the_protocol(self, chat: Any) -> None:
        assert isinstance(chat, ChatModel)
        assert isinstance(chat.name, str) and chat.name.strip()

    def test_chat_returns_text_and_usage(self, chat: Any) -> None:
        reply = chat.chat(COUNT, temperature=0.0, max_tokens=self.reply_tokens)
        assert isinstance(reply, ChatResponse)
        assert isinstance(reply.text, str) and reply.text.strip()
        assert reply.usage.prompt_tokens >= 0 and reply.usage.completion_tokens >= 0
        assert "1" in reply.text and "2" in reply.text, f"the model did not count: {reply.text!r}"

    def test_chat_and_stream_agree(self, chat: Any) -> None:
        reply = chat.chat(COUNT, temperature=0.0, max_tokens=self.reply_tokens)
        pieces = list(chat.stream(COUNT, temperature=0.0, max_tokens=self.reply_tokens))
        assert all(isinstance(p, str) for p in pieces)
        assert "".join(pieces) == reply.text

    def test_max_tokens_bounds_the_reply(self, chat: Any) -> None:
        whole = chat.chat(COUNT, temperature=0.0, max_tokens=self.reply_tokens)
        capped = chat.chat(COUNT, temperature=0.0, max_tokens=self.small_cap)
        assert len(capped.text.split()) <= self.small_cap < len(whole.text.split())
        assert capped.usage.completion_tokens <= self.small_cap
        assert whole.text.startswith(capped.text.strip())
        streamed = "".join(chat.stream(COUNT, temperature=0.0, max_tokens=self.small_cap))
        assert len(streamed.split()) <= self.small_cap

    def test_stop_ends_the_reply_before_the_stop_string(self, chat: Any) -> None:
        whole = chat.chat(COUNT, temperature=0.0, max_tokens=self.reply_tokens)
        assert self.stop in whole.text, f"precondition: the count reaches {self.stop!r}: {whole.text!r}"
        stopped = chat.chat(COUNT, temperature=0.0, max_tokens=self.reply_tokens, stop=[self.stop])
        assert self.stop not in stopped.text and stopped.text.strip()
        assert whole.text.startswith(stopped.text)
        streamed = "".join(chat.stream(COUNT, temperature=0.0, max_tokens=self.reply_tokens, stop=[self.stop]))
        assert streamed == stopped.text

    def test_no_messages_is_a_generation_error(self, chat: Any) -> None:
        with pytest.raises(GenerationError):
            chat.chat([], max_tokens=self.small_cap)
        with pytest.raises(GenerationError):
            list(chat.stream([], max_tokens=self.small_cap))
