"""Isolation: a hostile parse cannot hang, exhaust or crash the caller."""

import os
import signal
import time
from pathlib import Path

import pytest

from ragwright.errors import LimitExceeded, ParseError
from ragwright.options import ParseOptions
from ragwright.parse import parse_bytes
from ragwright.parse.limits import run_isolated


def sleepy(seconds: float) -> str:
    time.sleep(seconds)
    return "woke"


def hungry(megabytes: int) -> int:
    block = bytearray(megabytes * 1024 * 1024)
    return len(block)


def crash() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def broken() -> None:
    raise KeyError("missing /Root")


def test_returns_values() -> None:
    assert run_isolated(sleepy, 0, timeout_s=30, max_memory_mb=1024) == "woke"


def test_timeout_kills_the_worker_and_the_next_call_works() -> None:
    with pytest.raises(LimitExceeded, match="longer than"):  # sleepy(30) would otherwise return "woke"
        run_isolated(sleepy, 30, timeout_s=1, max_memory_mb=1024)
    assert run_isolated(sleepy, 0, timeout_s=30, max_memory_mb=1024) == "woke"


def test_memory_budget() -> None:
    with pytest.raises((LimitExceeded, ParseError)):
        run_isolated(hungry, 3000, timeout_s=30, max_memory_mb=512)
    assert run_isolated(hungry, 10, timeout_s=30, max_memory_mb=512) == 10 * 1024 * 1024


def test_a_crashing_parser_does_not_take_the_caller_down() -> None:
    with pytest.raises(ParseError, match="died"):
        run_isolated(crash, timeout_s=30, max_memory_mb=512)
    assert run_isolated(sleepy, 0, timeout_s=30, max_memory_mb=512) == "woke"


def test_library_errors_become_parse_errors() -> None:
    with pytest.raises(ParseError, match="KeyError"):
        run_isolated(broken, timeout_s=30, max_memory_mb=512)


def test_hostile_corpus_files_fail_cleanly(shared: Path) -> None:
    hostile = shared / "docs-corpus" / "hostile"
    with pytest.raises(ParseError, match="ZIP archive"):
        parse_bytes("bomb", (hostile / "zipbomb_1G.zip").read_bytes(), name_hint="zipbomb_1G.zip")
    with pytest.raises(ParseError, match="legacy Excel"):
        parse_bytes("xls", (hostile / "OOM_alloc.xls").read_bytes(), name_hint="OOM_alloc.xls")
    for name in ("xmlbomb.xml", "quadratic.xml", "external.xml"):  # read as text: entities never expanded
        doc = parse_bytes(name, (hostile / name).read_bytes(), name_hint=name)
        assert sum(len(e.text) for e in doc.elements) <= (hostile / name).stat().st_size


def test_size_limit_and_encrypted_ooxml(shared: Path) -> None:
    with pytest.raises(LimitExceeded, match="max_file_bytes"):
        parse_bytes("big", b"x" * 100, options=ParseOptions(max_file_bytes=10))
    with pytest.raises(ParseError, match=r"^encrypted"):
        parse_bytes("x", (shared / "docs-corpus" / "xlsx" / "pass_protected.xlsx").read_bytes(), name_hint="a.xlsx")


def _gone(pid: int, within_s: float) -> bool:
    from ragwright.parse.limits import _alive

    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


_OWNER = """
import os, signal, sys
from ragwright.parse.limits import run_isolated, worker_pids
run_isolated(os.getpid, timeout_s=60, max_memory_mb=1024)
print(worker_pids()[0], flush=True)
os.kill(os.getpid(), getattr(signal, sys.argv[1]))
"""


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
def test_the_worker_never_outlives_its_owner(how: str) -> None:
    """Issue 21 item 10: a crash or a signal that skips atexit leaves no parser process behind."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _OWNER, how], capture_output=True, text=True, timeout=60)
    assert out.returncode == -getattr(signal, how), out.stderr
    worker = int(out.stdout.split()[0])
    assert _gone(worker, 10), f"parser worker {worker} survived its owner's {how}"
