"""Parse untrusted bytes in a worker process with a time and memory budget.

A hostile file (decompression bomb, pathological PDF, parser crash) can take down or hang the process
that parses it. Binary formats are therefore parsed in a separate worker process whose address space
is capped with ``RLIMIT_AS``; a call that runs past its timeout has its worker killed and replaced.
On a machine with cores to spare several workers run at once (:func:`configure`, by default
:func:`default_workers`: one per three cores beyond the first two, at most four), each with its own cap;
ingestion keeps them busy by parsing the next files ahead (:mod:`ragwright.ingest.parse_ahead`).
The caller gets a :class:`~ragwright.errors.LimitExceeded` or :class:`~ragwright.errors.ParseError`
— and survives; an error the parser raised on purpose (a ``MissingDependencyError`` naming the extra
to install, say) comes back as itself.

The worker is a fresh interpreter started as an executable entry point (``python -c`` running
:func:`_worker_main`), never by ``multiprocessing``: the spawn and forkserver start methods re-import
the caller's ``__main__`` in the child, so a plain script without an ``if __name__ == "__main__":``
guard ran again inside the worker and every PDF and Office file failed with a false "process died".
It inherits no threads and no open stores either. Requests and replies are length-prefixed pickles on
two pipes of their own (what a library prints to stdout cannot corrupt them); the worker gets the
caller's ``sys.path``, so any module-level function the caller can import, it can call.

The worker never outlives the process that started it: it watches that process (a thread checking
every :data:`WATCH_INTERVAL_S`) and exits when it is gone — after a crash, a ``SIGKILL``, or a
``SIGTERM`` whose default action skips ``atexit`` (uvicorn re-raises the signal after its graceful
shutdown) — and when its request pipe closes. It ignores ``SIGINT``: Ctrl-C in a terminal reaches the
whole process group, and the caller decides what an interrupt means. :func:`shutdown` stops it at
once (at interpreter exit, and when the HTTP app shuts down).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from ragwright.errors import LimitExceeded, ParseError, RagwrightError

log = logging.getLogger(__name__)
T = TypeVar("T")

#: How often a parser worker checks that the process that started it is still alive.
WATCH_INTERVAL_S = 0.5
#: How long a worker may take to start (import Python and ragwright) before the call counts as failed.
START_TIMEOUT_S = 60.0

_HEADER = struct.Struct(">Q")
_BOOT = (
    "import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
    "from ragwright.parse.limits import _worker_main; _worker_main(sys.argv[2:])"
)
_DIED = (
    "the parser process died (out of memory or crashed) on this file; it was isolated and nothing else "
    "was affected (raise ParseOptions.max_memory_mb if the file is legitimate)"
)


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


# -- the worker side ---------------------------------------------------------------------------------
def _watch(owner: int) -> None:  # runs in the worker, on a daemon thread
    while _alive(owner):
        time.sleep(WATCH_INTERVAL_S)
    os._exit(0)  # the owner is gone: nobody will ever send work or collect results


def _read_exact(fh: Any, size: int) -> bytes | None:
    data = fh.read(size)
    return data if data is not None and len(data) == size else None


def _reply(outcome: tuple[str, Any]) -> bytes:
    """A pickled ``("ok", value)`` / ``("err", exception)``; an error that does not survive pickling is
    sent as ``("raw", type name, message)``, so the caller still learns what went wrong."""
    try:
        data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        if outcome[0] == "err":
            pickle.loads(data)  # an exception whose class cannot be rebuilt on the other side
        return data
    except MemoryError:
        err = LimitExceeded("the parser ran out of its memory budget (raise ParseOptions.max_memory_mb)")
        return pickle.dumps(("err", err))
    except Exception as exc:
        value = outcome[1]
        if outcome[0] == "err":
            return pickle.dumps(("raw", type(value).__name__, str(value)))
        return pickle.dumps(("raw", type(exc).__name__, f"the parser's result could not be sent back: {exc}"))


def _worker_main(argv: list[str]) -> None:  # runs in the worker
    """Serve calls until the request pipe closes: ``[max_memory_mb, owner pid, read fd, write fd]``."""
    import resource

    max_memory_mb, owner, rfd, wfd = (int(a) for a in argv[:4])
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch, args=(owner,), name="ragwright-owner-watch", daemon=True).start()
    limit = max_memory_mb * 1024 * 1024
    with contextlib.suppress(ValueError, OSError):  # a platform without RLIMIT_AS runs unlimited
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    with os.fdopen(rfd, "rb") as requests, os.fdopen(wfd, "wb") as replies:
        replies.write(b"R")  # ready
        replies.flush()
        while True:
            header = _read_exact(requests, _HEADER.size)
            if header is None:
                return  # the owner closed the pipe: shut down
            payload = _read_exact(requests, _HEADER.unpack(header)[0])
            if payload is None:
                return
            outcome: tuple[str, Any]
            try:
                fn, args, kwargs = pickle.loads(payload)
                outcome = ("ok", _call(fn, args, kwargs))
            except BaseException as exc:
                outcome = ("err", exc)
            data = _reply(outcome)
            del outcome, payload
            replies.write(_HEADER.pack(len(data)) + data)
            replies.flush()


def _call(fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:  # runs in the worker
    try:
        return fn(*args, **kwargs)
    except MemoryError as exc:
        raise LimitExceeded("the parser ran out of its memory budget (raise ParseOptions.max_memory_mb)") from exc


# -- the caller's side -------------------------------------------------------------------------------
class _Died(Exception):
    """The worker exited or closed its pipe mid-call."""


class _NotStarted(Exception):
    """The worker did not start (or not in time)."""


class _Worker:
    """One worker process and its two pipes."""

    def __init__(self, max_memory_mb: int) -> None:
        self.max_memory_mb = max_memory_mb
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [
                    sys.executable or "python3",
                    "-c",
                    _BOOT,
                    json.dumps(sys.path),
                    str(max_memory_mb),
                    str(os.getpid()),
                    str(req_r),
                    str(rep_w),
                ],
                pass_fds=(req_r, rep_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                close_fds=True,
            )
        except BaseException:
            for fd in (req_r, req_w, rep_r, rep_w):
                os.close(fd)
            raise
        os.close(req_r)
        os.close(rep_w)
        self.requests, self.replies = req_w, rep_r
        os.set_blocking(self.requests, False)
        self.ready = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def call(self, request: bytes, timeout_s: float) -> bytes:
        """Send *request*, return the reply; ``TimeoutError`` past *timeout_s*, :class:`_Died` when the
        worker is gone. A new worker first gets :data:`START_TIMEOUT_S` to start and say it is ready."""
        if not self.ready:
            try:
                self._receive(1, time.monotonic() + START_TIMEOUT_S)
            except (TimeoutError, _Died):
                raise _NotStarted from None
            self.ready = True
        deadline = time.monotonic() + timeout_s
        self._send(_HEADER.pack(len(request)) + request, deadline)
        header = self._receive(_HEADER.size, deadline)
        return self._receive(_HEADER.unpack(header)[0], deadline)

    def _wait(self, fd: int, deadline: float, *, write: bool) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        ready = select.select([], [fd], [], remaining) if write else select.select([fd], [], [], remaining)
        if not any(ready):
            raise TimeoutError

    def _send(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            self._wait(self.requests, deadline, write=True)
            try:
                sent = os.write(self.requests, view[: 1 << 20])
            except BlockingIOError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                raise _Died from None
            view = view[sent:]

    def _receive(self, size: int, deadline: float) -> bytes:
        parts: list[bytes] = []
        while size:
            self._wait(self.replies, deadline, write=False)
            block = os.read(self.replies, min(size, 1 << 20))
            if not block:
                raise _Died
            parts.append(block)
            size -= len(block)
        return b"".join(parts)

    def stop(self, *, kill: bool) -> None:
        """Close the pipes (the worker exits when its request pipe closes); *kill*: at once."""
        for fd in (self.requests, self.replies):
            with contextlib.suppress(OSError):
                os.close(fd)
        if kill:
            with contextlib.suppress(OSError):
                self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def exit_description(self) -> str:
        """How the worker ended, for the log (a signal, an exit status, or still running)."""
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "still running"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by {signal.Signals(-code).name}"
        return f"exit status {code}"


_lock = threading.Condition()


def default_workers() -> int:
    """The pool size by default: one worker per three cores beyond the first two, at most four.

    Ingestion overlaps parsing with embedding, and the embedder and OCR each want a core: on a 2- or
    4-core machine one worker parses at a time (as before); on 8 cores two, on 16 or more four.
    """
    cores = os.cpu_count() or 1
    return max(1, min(4, (cores - 2) // 3))


_workers: list[_Worker | None] = [None] * default_workers()  # the pool's slots; each starts on first use
_busy: set[int] = set()  # slots with a call in flight


def configure(*, workers: int) -> None:
    """Let up to *workers* isolated parses run at once, each in its own worker process (and memory cap).

    Idle workers beyond the new size are stopped; busy ones finish their call first.
    """
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers={workers!r} is invalid: an integer >= 1")
    with _lock:
        while len(_workers) > workers and len(_workers) - 1 not in _busy:
            worker = _workers.pop()
            if worker is not None:
                worker.stop(kill=True)
        _workers.extend([None] * (workers - len(_workers)))
        _lock.notify_all()


def pool_size() -> int:
    """How many isolated parses may run at once (:func:`configure`)."""
    with _lock:
        return len(_workers)


def _take(max_memory_mb: int) -> tuple[int, _Worker]:
    """A free slot (waiting for one) and its worker, started or restarted as needed."""
    with _lock:
        while True:
            free = next((i for i in range(len(_workers)) if i not in _busy), None)
            if free is not None:
                break
            _lock.wait()
        _busy.add(free)
        worker = _workers[free]
        if worker is not None and (worker.max_memory_mb != max_memory_mb or worker.proc.poll() is not None):
            worker.stop(kill=True)
            worker = None
        if worker is None:
            try:
                worker = _Worker(max_memory_mb)
            except BaseException:
                _busy.discard(free)
                _lock.notify_all()
                raise
            _workers[free] = worker
        return free, worker


def _give_back(slot: int, *, failed: bool) -> None:
    """Free *slot*; a worker whose call failed (timeout, death, interrupt) is killed first."""
    with _lock:
        _busy.discard(slot)
        if slot < len(_workers):
            worker = _workers[slot]
            if failed and worker is not None:
                _workers[slot] = None
                worker.stop(kill=True)
        _lock.notify_all()


def shutdown(*, kill: bool = False) -> None:
    """Stop the parser workers (also runs at interpreter exit); *kill*: at once, even mid-parse. The next
    isolated parse starts a new one."""
    with _lock:
        workers = [w for w in _workers if w is not None]
        _workers[:] = [None] * len(_workers)
    for worker in workers:
        worker.stop(kill=kill)


def worker_pids() -> list[int]:
    """The process ids of the parser workers running now (for tests and diagnostics)."""
    with _lock:
        return [w.pid for w in _workers if w is not None and w.proc.poll() is None]


atexit.register(shutdown)


def run_isolated(
    fn: Callable[..., T], *args: Any, timeout_s: float, max_memory_mb: int, what: str = "the document", **kwargs: Any
) -> T:
    """Run ``fn(*args, **kwargs)`` in a worker; errors come back as ragwright errors.

    *fn* must be a module-level function and its arguments picklable. At most :func:`pool_size` calls
    run at once (one per worker process, each capped at ``max_memory_mb``); the others wait for a free
    worker, which bounds the memory parsing can take.
    """
    request = pickle.dumps((fn, args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
    slot, worker = _take(max_memory_mb)
    failed = True
    try:
        reply = worker.call(request, timeout_s)
        failed = False
    except _NotStarted:
        raise ParseError(
            f"the parser process could not start ({worker.exit_description()}; its error is on stderr); "
            "parse in this process instead with ParseOptions(isolate=False)"
        ) from None
    except TimeoutError:
        log.warning("parse_timeout: %s took longer than %.0fs; worker killed", what, timeout_s)
        raise LimitExceeded(
            f"parsing took longer than {timeout_s:g}s and was stopped (raise ParseOptions.timeout_s)"
        ) from None
    except _Died:
        log.warning("parse_crashed: the parser worker died on %s (%s)", what, worker.exit_description())
        raise ParseError(_DIED) from None
    finally:  # any failure, Ctrl-C mid-call included (its reply would come after the next request): killed
        _give_back(slot, failed=failed)
    try:
        outcome = pickle.loads(reply)
    except Exception as exc:
        raise ParseError(f"the parser's result could not be read: {type(exc).__name__}: {exc}") from exc
    if outcome[0] == "ok":
        return outcome[1]  # type: ignore[no-any-return]
    if outcome[0] == "raw":
        raise ParseError(f"corrupt or unsupported file: {outcome[1]}: {outcome[2]}")
    error = outcome[1]
    if isinstance(error, RagwrightError):
        raise error
    if isinstance(error, MemoryError):
        raise LimitExceeded("the parser ran out of its memory budget") from error
    raise ParseError(f"corrupt or unsupported file: {type(error).__name__}: {error}") from error
