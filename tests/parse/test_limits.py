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
