"""Streamed answers: text deltas, then the full :class:`~ragwright.model.results.RagResponse`.

An answerer's ``run(...)`` is a generator that yields ``str`` deltas and *returns* the response; one
body serves both ``ask`` (drained) and ``ask_stream`` (iterated), so the streamed text is the
non-streamed answer. :class:`AnswerStream` iterates it synchronously; :class:`AsyncAnswerStream` is the
async twin (each step runs on the shared thread pool). Both expose ``.response`` once exhausted, and
``response.answer`` always equals the concatenated deltas.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator
from typing import Any, Final

from ragwright._sync import to_thread
from ragwright.errors import GenerationError
from ragwright.model.results import RagResponse

AnswerRun = Generator[str, None, RagResponse]
_DONE: Final = object()


def drain(run: AnswerRun) -> RagResponse:
    """Run an answer generator to the end and return its response."""
    while True:
        try:
            next(run)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]


def single(response: RagResponse) -> AnswerRun:
    """A finished response as an answer run: the whole answer is one delta."""
    if response.answer:
        yield response.answer
    return response


class AnswerStream(Iterator[str]):
    """Iterate for ``str`` deltas; then ``.response`` is the full response.

    ``finish`` (optional) post-processes the response once, e.g. to add retrieval timings.
    """

    def __init__(self, run: AnswerRun, finish: Callable[[RagResponse], RagResponse] | None = None) -> None:
        self._run, self._finish = run, finish
        self._response: RagResponse | None = None
        self._parts: list[str] = []
        self._close_requested = False

    def __iter__(self) -> AnswerStream:
        return self

    def __next__(self) -> str:
        if self._response is not None:
            raise StopIteration
        try:
            delta = next(self._run)
        except StopIteration as stop:
            response: RagResponse = stop.value
            self._response = self._finish(response) if self._finish is not None else response
            raise StopIteration from None
        self._parts.append(delta)
        return delta

    @property
    def done(self) -> bool:
        return self._response is not None

    def collect(self) -> RagResponse:
        """Read the rest of the stream and return the full response."""
        for _ in self:
            pass
        return self.response

    @property
    def text(self) -> str:
        """The text streamed so far."""
        return "".join(self._parts)

    @property
    def response(self) -> RagResponse:
        """The full response; only once the stream is exhausted."""
        if self._response is None:
            raise GenerationError("the answer stream has not finished: iterate it to the end before reading .response")
        return self._response

    def close(self) -> None:
        """Stop early (the model call is abandoned); ``.response`` stays unavailable.

        Safe while another thread is inside a step: the close then happens when that step returns.
        """
        self._close_requested = True
        with contextlib.suppress(ValueError):  # "generator already executing": that step closes it on return
            self._run.close()

    def step(self) -> str | object:
        """The next delta, or a sentinel at the end (for callers on a thread pool, where
        ``StopIteration`` cannot cross a future)."""
        delta = next(self, _DONE)
        if self._close_requested and delta is not _DONE:
            self._run.close()
            return _DONE
        return delta

    def __enter__(self) -> AnswerStream:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._response is None:
            self.close()


class AsyncAnswerStream(AsyncIterator[str]):
    """The async twin of :class:`AnswerStream`: ``async for delta in stream`` then ``stream.response``.

    *start* (retrieval, then the answer run) is awaited on the first step. Awaiting the stream itself
    (``stream = await rag.aask_stream(...)``) runs *start* early and gives the same stream back.
    """

    def __init__(self, start: Callable[[], Awaitable[AnswerStream]]) -> None:
        self._start: Callable[[], Awaitable[AnswerStream]] | None = start
        self._sync: AnswerStream | None = None

    async def _ready(self) -> AnswerStream:
        if self._sync is None:
            if self._start is None:  # pragma: no cover - only after a failed start
                raise GenerationError("the answer stream failed to start")
            start, self._start = self._start, None
            self._sync = await start()
        return self._sync

    def __await__(self) -> Generator[Any, None, AsyncAnswerStream]:
        async def ready() -> AsyncAnswerStream:
            await self._ready()
            return self

        return ready().__await__()

    def __aiter__(self) -> AsyncAnswerStream:
        return self

    async def __anext__(self) -> str:
        stream = await self._ready()
        delta = await to_thread(stream.step)
        if not isinstance(delta, str):
            raise StopAsyncIteration
        return delta

    @property
    def done(self) -> bool:
        return self._sync is not None and self._sync.done

    @property
    def response(self) -> RagResponse:
        """The full response; only once the stream is exhausted."""
        if self._sync is None:
            raise GenerationError("the answer stream has not started: iterate it to the end before reading .response")
        return self._sync.response

    async def aclose(self) -> None:
        """Stop early (also after a cancelled step whose thread is still running)."""
        self._start = None
        if self._sync is not None and not self._sync.done:
            self._sync.close()
