"""Limits of the HTTP server: request body size (counted while it streams in) and bounded work.

:class:`BodyLimit` is a plain ASGI middleware: a declared ``Content-Length`` over the limit is refused
before a byte is read, and a streamed body is counted chunk by chunk and cut off with 413 as soon as it
passes the limit — whatever the framework was doing with it. :class:`WorkLimiter` bounds the embedding /
LLM work running at once (a semaphore; a request waits up to ``queue_timeout_s`` for a slot, then 503)
and each piece of work in time (504).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyTooLarge(Exception):
    """The request body passed its limit (raised from ``receive`` while the body streams in)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"request body too large: the limit is {limit} bytes")
        self.limit = limit


class Saturated(Exception):
    """Every work slot stayed busy for the whole queue timeout (→ 503)."""


class WorkTimeout(Exception):
    """A piece of work ran past its time limit (→ 504)."""


def _too_large_message(limit: int, upload: bool) -> str:
    what = "upload" if upload else "request body"
    return f"{what} too large: the limit is {limit} bytes ({limit / (1 << 20):.1f} MiB)"


class BodyLimit:
    """ASGI middleware: refuse bodies over ``limit_for(path)`` bytes with ``413 {"error": …}``."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], tuple[int, bool]]) -> None:
        self.app, self.limit_for = app, limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit, upload = self.limit_for(scope.get("path", ""))
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _send_413(send, _too_large_message(limit, upload))
            return
        state = {"received": 0, "exceeded": False, "started": False, "replaced": False}

        async def limited_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                state["received"] += len(message.get("body", b""))
                if state["received"] > limit:
                    state["exceeded"] = True
                    raise BodyTooLarge(limit)
            return message

        async def guarded_send(message: Message) -> None:
            if state["replaced"]:
                return
            if message["type"] == "http.response.start":
                if state["exceeded"]:  # whatever the app answers to a cut-off body, it is a 413
                    state["replaced"] = True
                    await _send_413(send, _too_large_message(limit, upload))
                    return
                state["started"] = True
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except BodyTooLarge:
            if not state["started"] and not state["replaced"]:
                await _send_413(send, _too_large_message(limit, upload))
            return
        except Exception:
            if state["exceeded"] and not state["started"]:
                if not state["replaced"]:
                    await _send_413(send, _too_large_message(limit, upload))
                return
            raise


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _send_413(send: Send, message: str) -> None:
    body = json.dumps({"error": message}).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class WorkLimiter:
    """At most ``max_concurrency`` pieces of work at once; waiting is bounded, and so is running."""

    def __init__(self, max_concurrency: int, queue_timeout_s: float, request_timeout_s: float) -> None:
        self.max_concurrency = max_concurrency
        self.queue_timeout_s = queue_timeout_s
        self.request_timeout_s = request_timeout_s
        self.active = 0
        self.rejected = 0
        #: The same two counts per owner (the caller's tenant): what ``GET /status`` shows a caller.
        self.active_by: Counter[str] = Counter()
        self.rejected_by: Counter[str] = Counter()
        self._sem: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._sem is None or self._loop is not loop:  # one semaphore per event loop
            self._sem, self._loop = asyncio.Semaphore(self.max_concurrency), loop
        return self._sem

    @asynccontextmanager
    async def slot(self, owner: str = "") -> AsyncIterator[None]:
        """Hold one work slot for *owner*; :class:`Saturated` when none frees up within the queue timeout."""
        sem = self._semaphore()
        if sem.locked() and self.queue_timeout_s <= 0:
            self._reject(owner)
        try:
            await asyncio.wait_for(sem.acquire(), timeout=self.queue_timeout_s or None)
        except TimeoutError:
            self._reject(owner)
        self.active += 1
        self.active_by[owner] += 1
        try:
            yield
        finally:
            self.active -= 1
            self.active_by[owner] -= 1
            if not self.active_by[owner]:
                del self.active_by[owner]
            sem.release()

    def _reject(self, owner: str) -> NoReturn:
        self.rejected += 1
        self.rejected_by[owner] += 1
        raise Saturated(self._busy_message()) from None

    async def run(self, work: Callable[[], Awaitable[T]], timeout_s: float | None = None, *, owner: str = "") -> T:
        """Run ``work()`` in a slot of *owner*, within *timeout_s* (default: the request timeout).

        *work* is a factory so nothing starts (and no coroutine is left unawaited) when no slot frees up.
        """
        limit = timeout_s if timeout_s is not None else self.request_timeout_s
        async with self.slot(owner):
            try:
                return await asyncio.wait_for(work(), timeout=limit)
            except TimeoutError:
                raise WorkTimeout(f"the request took longer than {limit:g} s and was stopped") from None

    def _busy_message(self) -> str:
        return f"the server is busy ({self.max_concurrency} requests already running); retry in a few seconds"
