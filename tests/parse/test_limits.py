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


def missing_extra() -> None:
    from ragwright.errors import MissingDependencyError

    raise MissingDependencyError("rapidocr", "ocr", "OCR of scanned pages")


def test_an_error_with_its_own_constructor_comes_back_as_itself() -> None:
    """Issue 22: MissingDependencyError could not be unpickled, so the caller saw "the parser process died"."""
    from ragwright.errors import MissingDependencyError

    with pytest.raises(MissingDependencyError, match=r"pip install 'ragwright\[ocr\]'") as caught:
        run_isolated(missing_extra, timeout_s=30, max_memory_mb=512)
    assert caught.value.extra == "ocr"
    assert run_isolated(sleepy, 0, timeout_s=30, max_memory_mb=512) == "woke"  # the worker survived


_UNGUARDED = """
import sys
from pathlib import Path
from ragwright.parse import parse_bytes
with open(sys.argv[1], "a") as log:
    log.write("ran\\n")
pdf = Path(sys.argv[2])
doc = parse_bytes("doc", pdf.read_bytes(), name_hint=pdf.name)
print("parsed", len(doc.elements))
"""


def test_isolation_works_from_a_script_without_a_main_guard(tmp_path: Path, shared: Path) -> None:
    """Issue 22: the README's script has no ``if __name__ == "__main__":``; multiprocessing re-ran it in
    the worker and every PDF failed with a false "the parser process died"."""
    import subprocess
    import sys

    script, log = tmp_path / "plain.py", tmp_path / "runs.txt"
    script.write_text(_UNGUARDED, encoding="utf-8")
    pdf = shared / "docs-corpus" / "pdf" / "minimal-document.pdf"
    out = subprocess.run(
        [sys.executable, str(script), str(log), str(pdf)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert out.returncode == 0 and out.stdout.startswith("parsed"), out.stderr
    assert log.read_text() == "ran\n"  # the script ran once: the worker never imported it
    assert "bootstrapping phase" not in out.stderr


def test_output_a_parser_prints_does_not_corrupt_the_replies() -> None:
    assert run_isolated(noisy, timeout_s=30, max_memory_mb=512) == "quiet"


def noisy() -> str:
    import os
    import sys

    print("some library chatter")
    sys.stdout.flush()
    os.write(1, b"raw bytes on fd 1\n")
    return "quiet"
