"""Parse untrusted bytes in a worker process with a time and memory budget.

A hostile file (decompression bomb, pathological PDF, parser crash) can take down or hang the process
that parses it. Binary formats are therefore parsed in a separate worker process (forkserver start:
the worker never inherits our threads or open stores) whose address space is capped with
``RLIMIT_AS``; a call that runs past its timeout has its worker killed and replaced. The caller gets a
:class:`~ragwright.errors.LimitExceeded` or :class:`~ragwright.errors.ParseError` — and survives.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import multiprocessing
import threading
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


def _limit_memory(max_memory_mb: int) -> None:  # runs in the worker
    import resource

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
            max_workers=1, mp_context=context, initializer=_limit_memory, initargs=(max_memory_mb,)
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


def shutdown() -> None:
    """Stop the parser worker (also runs at interpreter exit)."""
    with _lock:
        _shutdown_locked()


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
