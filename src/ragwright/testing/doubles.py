"""Test doubles. These are for *unit tests* only and are never used by the product itself.

:class:`HashingEmbedder` maps words to hashed dimensions (a bag of words), which makes similarity
predictable in tests without loading a model. :class:`ScriptedChat` is a chat model replying from a
script and recording every call.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from ragwright.errors import GenerationError
from ragwright.models.llms.base import ChatLedger, ChatResponse, Message, Usage

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_WORD = re.compile(r"\w+", re.UNICODE)
_TOKEN = re.compile(r"\s*\S+\s*|\s+")


class HashingEmbedder:
    """A deterministic bag-of-words embedder for tests (not a product feature)."""

    def __init__(self, dimension: int = 256, max_tokens: int = 128, name: str = "test/hashing") -> None:
        self._dimension, self._max_tokens, self._name = dimension, max_tokens, name
        self.calls = 0

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def count_tokens(self, text: str) -> int:
        return len(_WORD.findall(text))

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        import numpy as np

        vec = np.zeros(self._dimension, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            vec[h % self._dimension] += 1.0
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[0] = 1.0
            return vec
        return vec / norm

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        self.calls += 1
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._vector(text)


Reply: TypeAlias = "str | BaseException | Callable[[list[Message]], str]"


@dataclass(frozen=True, slots=True)
class ChatCall:
    """One recorded call of :class:`ScriptedChat`: the messages and the keyword arguments."""

    messages: list[Message]
    kwargs: dict[str, Any]
    stream: bool = False

    @property
    def last_user(self) -> str:
        """The content of the last user message ("" when there is none)."""
        return next((m.content for m in reversed(self.messages) if m.role == "user"), "")


class ScriptedChat:
    """A :class:`~ragwright.models.llms.base.ChatModel` for tests that replies from a script.

    *script* is either a list consumed in order — each item a reply string, an exception to raise, or
    a callable ``f(messages) -> str`` — or a single callable used for every call. When the list runs
    out, *default* is replied (or :class:`GenerationError` raised when *default* is ``None``).
    Every call is recorded in :attr:`calls`. ``stream`` splits the reply into word tokens (each word
    with its following whitespace), so ``"".join(stream(...)) == chat(...).text``.

    With ``honour_limits=True`` it behaves like a real backend towards ``stop`` and ``max_tokens``: a
    reply is cut before the first stop string, then to ``max_tokens`` word tokens (``finish_reason``
    ``"length"``), and usage counts those tokens. Off by default, so scripts written for a stage are
    replied whole whatever budget the stage asks for. An empty message list raises
    :class:`~ragwright.errors.GenerationError`, as every backend does.
    """

    def __init__(
        self,
        script: Sequence[Reply] | Callable[[list[Message]], str] = (),
        *,
        default: str | None = None,
        name: str = "test/scripted",
        honour_limits: bool = False,
    ) -> None:
        self._fn: Callable[[list[Message]], str] | None = None
        self._queue: list[Reply] = []
        if callable(script):
            self._fn = script
        else:
            self._queue = list(script)
        self._default, self._name = default, name
        self.honour_limits = honour_limits
        self._lock = threading.Lock()
        self.calls: list[ChatCall] = []
        self.ledger = ChatLedger()

    @property
    def name(self) -> str:
        return self._name

    @property
    def remaining(self) -> int:
        """Scripted replies not consumed yet."""
        return len(self._queue)

    def _reply(self, messages: Sequence[Message | Mapping[str, Any]], kwargs: dict[str, Any], stream: bool) -> str:
        msgs = [Message.coerce(m) for m in messages]
        if not msgs:
            raise GenerationError("a chat call needs at least one message")
        with self._lock:
            self.calls.append(ChatCall(msgs, kwargs, stream))
            if self._fn is not None:
                item: Reply = self._fn
            elif self._queue:
                item = self._queue.pop(0)
            elif self._default is not None:
                item = self._default
            else:
                raise GenerationError(f"ScriptedChat: script exhausted after {len(self.calls) - 1} calls")
        if isinstance(item, BaseException):
            raise item
        text = item(msgs) if callable(item) else item
        if not isinstance(text, str):
            raise TypeError(f"ScriptedChat: a scripted reply must be a string, got {type(text).__name__}")
        return text

    def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
        stop: Sequence[str] | None = None,
    ) -> ChatResponse:
        kwargs = {"temperature": temperature, "max_tokens": max_tokens, "json_schema": json_schema, "stop": stop}
        text = self._reply(messages, kwargs, stream=False)
        finish = "stop"
        completion = len(_WORD.findall(text))
        if self.honour_limits:
            pieces, finish = self._limited(text, max_tokens, stop)
            text, completion = "".join(pieces), len(pieces)
        prompt_tokens = sum(len(_WORD.findall(Message.coerce(m).content)) for m in messages)
        usage = Usage(prompt_tokens, completion)
        self.ledger.record(usage, 0.0)
        return ChatResponse(text=text, usage=usage, model=self._name, finish_reason=finish)

    @staticmethod
    def _limited(text: str, max_tokens: int | None, stop: Sequence[str] | None) -> tuple[list[str], str]:
        """*text*'s word tokens cut before the first stop string, then to *max_tokens*; and the finish reason."""
        cuts = [i for i in (text.find(s) for s in stop or () if s) if i >= 0]
        if cuts:
            text = text[: min(cuts)]
        pieces = _TOKEN.findall(text)
        if max_tokens is not None and len(pieces) > max_tokens:
            return pieces[:max_tokens], "length"
        return pieces, "stop"

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Sequence[str] | None = None,
    ) -> Iterator[str]:
        kwargs = {"temperature": temperature, "max_tokens": max_tokens, "stop": stop}
        text = self._reply(messages, kwargs, stream=True)
        if self.honour_limits:
            return iter(self._limited(text, max_tokens, stop)[0])
        return iter(_TOKEN.findall(text))
