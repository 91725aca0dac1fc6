"""Parse untrusted bytes in a worker process with a time and memory budget.

A hostile file (decompression bomb, pathological PDF, parser crash) can take down or hang the process
that parses it. Binary formats are therefore parsed in a separate worker process (forkserver start:
the worker never inherits our threads or open stores) whose address space is capped with
``RLIMIT_AS``; a call that runs past its timeout has its worker killed and replaced. The caller gets a
:class:`~ragwright.errors.LimitExceeded` or :class:`~ragwright.errors.ParseError` — and survives.

The worker never outlives the process that started it: it watches that process (a thread checking
every :data:`WATCH_INTERVAL_S`) and exits when it is gone — after a crash, a ``SIGKILL``, or a
``SIGTERM`` whose default action skips ``atexit`` (uvicorn re-raises the signal after its graceful
shutdown). Its exit closes the last ends of the forkserver's and resource tracker's pipes, so they go
too. :func:`shutdown` stops it at once (at interpreter exit, and when the HTTP app shuts down).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from ragwright.errors import LimitExceeded, ParseError, RagwrightError

log = logging.getLogger(__name__)
T = TypeVar("T")

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_pool_memory: int | None = None


#: How often a parser worker checks that the process that started it is still alive.
WATCH_INTERVAL_S = 0.5


def _alive(pid: int) -> bool:
    """Whether process *pid* runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else: not ours any more (the pid was reused)
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return True  # no /proc: the signal check is all there is


def _watch(owner: int) -> None:  # runs in the worker, on a daemon thread
    while _alive(owner):
        time.sleep(WATCH_INTERVAL_S)
    os._exit(0)  # the owner is gone: nobody will ever send work or collect results


def _init_worker(max_memory_mb: int, owner: int) -> None:  # runs in the worker
    import resource

    threading.Thread(target=_watch, args=(owner,), name="ragwright-owner-watch", daemon=True).start()
    limit = max_memory_mb * 1024 * 1024
    with contextlib.suppress(ValueError, OSError):  # a platform without RLIMIT_AS runs unlimited
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _call(fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:  # runs in the worker
    try:
        return fn(*args, **kwargs)
    except MemoryError as exc:
        raise LimitExceeded("the parser ran out of its memory budget (raise ParseOptions.max_memory_mb)") from exc


def _get_pool(max_memory_mb: int) -> ProcessPoolExecutor:
    global _pool, _pool_memory
    if _pool is None or _pool_memory != max_memory_mb:
        _shutdown_locked()
        context = multiprocessing.get_context("forkserver")
        _pool = ProcessPoolExecutor(
            max_workers=1, mp_context=context, initializer=_init_worker, initargs=(max_memory_mb, os.getpid())
        )
        _pool_memory = max_memory_mb
    return _pool


def _shutdown_locked(kill: bool = False) -> None:
    global _pool, _pool_memory
    if _pool is None:
        return
    if kill:
        for proc in list(getattr(_pool, "_processes", {}).values()):
            proc.kill()
    _pool.shutdown(wait=not kill, cancel_futures=True)
    _pool, _pool_memory = None, None


def shutdown(*, kill: bool = False) -> None:
    """Stop the parser worker (also runs at interpreter exit); *kill*: at once, even mid-parse. The next
    isolated parse starts a new one."""
    with _lock:
        _shutdown_locked(kill=kill)


def worker_pids() -> list[int]:
    """The process ids of the parser workers running now (for tests and diagnostics)."""
    with _lock:
        return sorted(getattr(_pool, "_processes", None) or {}) if _pool is not None else []


atexit.register(shutdown)


def run_isolated(
    fn: Callable[..., T], *args: Any, timeout_s: float, max_memory_mb: int, what: str = "the document", **kwargs: Any
) -> T:
    """Run ``fn(*args, **kwargs)`` in the worker; errors come back as ragwright errors.

    *fn* must be a module-level function and its arguments picklable. Calls are serialised (one worker),
    which bounds the memory parsing can take to ``max_memory_mb``.
    """
    with _lock:
        pool = _get_pool(max_memory_mb)
        future = pool.submit(_call, fn, args, kwargs)
        try:
            return future.result(timeout=timeout_s)
        except FutureTimeout:
            log.warning("parse_timeout: %s took longer than %.0fs; worker killed", what, timeout_s)
            _shutdown_locked(kill=True)
            raise LimitExceeded(
                f"parsing took longer than {timeout_s:g}s and was stopped (raise ParseOptions.timeout_s)"
            ) from None
        except BrokenProcessPool:
            log.warning("parse_crashed: the parser worker died on %s", what)
            _shutdown_locked(kill=True)
            raise ParseError(
                "the parser process died (out of memory or crashed) on this file; it was isolated and "
                "nothing else was affected (raise ParseOptions.max_memory_mb if the file is legitimate)"
            ) from None
        except RagwrightError:
            raise
        except MemoryError as exc:
            raise LimitExceeded("the parser ran out of its memory budget") from exc
        except Exception as exc:  # a library error on a corrupt file
            raise ParseError(f"corrupt or unsupported file: {type(exc).__name__}: {exc}") from exc
