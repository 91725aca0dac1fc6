"""Run the async implementation from synchronous code (one implementation, two APIs)."""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import functools
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _shared_executor() -> ThreadPoolExecutor:
    """One small thread pool for blocking work (stores, models), reused across calls and event loops."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=8, thread_name_prefix="ragwright")
        return _executor


async def to_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Like :func:`asyncio.to_thread`, on the shared pool (no thread start-up per call).

    As with ``asyncio.to_thread``, the caller's context variables travel with the call (per-call
    switches such as the embedding-cache bypass are seen by the code running in the thread).
    """
    loop = asyncio.get_running_loop()
    ctx = contextvars.copy_context()
    return await loop.run_in_executor(_shared_executor(), functools.partial(ctx.run, fn, *args, **kwargs))


_local = threading.local()


def _runner() -> asyncio.Runner:
    """This thread's event loop, kept between calls: a fresh loop per sync call cost ~0.5 ms a query."""
    runner: asyncio.Runner | None = getattr(_local, "runner", None)
    if runner is None:
        runner = _local.runner = asyncio.Runner()
        if threading.current_thread() is threading.main_thread():
            atexit.register(runner.close)
    return runner


#: How often the event loop of a sync call wakes while it waits (seconds); see :func:`_wake_regularly`.
WAKE_INTERVAL = 0.2


def _wake_regularly(loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
    """Wake *loop* every :data:`WAKE_INTERVAL` until the returned function is called.

    Python runs a signal's handler (Ctrl-C) in the main thread, the next time that thread executes
    bytecode. The kernel may hand a process's SIGINT to another thread: the thread that sent it
    (``os.kill`` from a worker) may take it itself on its way back from the call, or the main thread
    blocks SIGINT (a native library left it so). The main thread's ``epoll_wait`` is then restarted
    without returning, and a loop waiting on one long ``to_thread`` call (an ingestion run) saw the
    Ctrl-C only when the call ended — with every document written. A wake-up a few times a second
    bounds that delay (and costs nothing a short call can see).
    """
    pending: list[asyncio.TimerHandle] = []

    def tick() -> None:
        pending[:] = [loop.call_later(WAKE_INTERVAL, tick)]

    tick()
    return lambda: pending[0].cancel()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run *coro* to completion; works inside a running event loop too (on a helper thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        runner = _runner()
        stop_waking = _wake_regularly(runner.get_loop())
        try:
            return runner.run(coro)
        finally:
            stop_waking()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, name="ragwright-sync")
    thread.start()
    while thread.is_alive():  # in slices, so that a Ctrl-C another thread took is still seen (see above)
        thread.join(WAKE_INTERVAL)
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
