"""The local model's crash probe: an injected crash in the child is a clear error, a success is cached."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from ragwright.errors import ConfigError, GenerationError
from ragwright.models.llms import probe
from ragwright.models.llms.probe import PORTABLE_CMAKE_ARGS, ensure_model_runs, portable_cmake_args, probe_key

HERE = "tests.models.llms.test_probe"
ROOT = Path(__file__).resolve().parents[3]


# -- probe targets, run in the child process (module-level, imported there by name) ----------------


def segfault(model_path: str, n_threads: int) -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def abort(model_path: str, n_threads: int) -> None:
    os.abort()


def healthy(model_path: str, n_threads: int) -> None:
    # Leaves a trace so a test can count how often the probe really ran.
    with open(os.environ["PROBE_RUNS"], "a", encoding="utf-8") as handle:
        handle.write(f"{model_path} {n_threads}\n")


def raises(model_path: str, n_threads: int) -> None:
    raise ValueError("not a GGUF file")


def hangs(model_path: str, n_threads: int) -> None:
    time.sleep(60)


# -- fixtures ------------------------------------------------------------------------------------------


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGWRIGHT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("RAGWRIGHT_LLM_PROBE", raising=False)
    monkeypatch.delenv("RAGWRIGHT_LLM_PROBE_TIMEOUT", raising=False)
    monkeypatch.setenv("PROBE_RUNS", str(tmp_path / "runs.txt"))
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 60)
    return path


def runs(tmp_path: Path) -> list[str]:
    log = tmp_path / "runs.txt"
    return log.read_text().splitlines() if log.exists() else []


def markers(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "llm-probes").glob("*.ok"))


# -- the probe -----------------------------------------------------------------------------------------


def test_an_injected_segfault_is_a_clear_error_not_the_end_of_the_caller(model: Path, tmp_path: Path) -> None:
    with pytest.raises(GenerationError) as caught:
        ensure_model_runs(model, target=f"{HERE}:segfault", name="llama.cpp:tiny")
    message = str(caught.value)
    assert "llama.cpp:tiny crashed in a probe (signal 11, SIGSEGV)" in message
    assert "CPU instructions this machine does not enable" in message
    # The way out is spelled out: a portable rebuild that pip cannot satisfy from its old wheel.
    assert f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}"' in message or 'CMAKE_ARGS="-DGGML_NATIVE=OFF' in message
    assert "--force-reinstall --no-cache-dir --no-deps llama-cpp-python==" in message
    assert "RAGWRIGHT_LLM_PROBE=0" in message
    assert markers(tmp_path) == []  # a failure is never remembered
    with pytest.raises(GenerationError):  # so the next first load probes (and refuses) again
        ensure_model_runs(model, target=f"{HERE}:segfault")


def test_an_abort_is_caught_too(model: Path) -> None:
    with pytest.raises(GenerationError, match="signal 6, SIGABRT"):
        ensure_model_runs(model, target=f"{HERE}:abort")


def test_a_healthy_probe_passes_once_and_is_cached(model: Path, tmp_path: Path) -> None:
    assert ensure_model_runs(model, n_threads=2, target=f"{HERE}:healthy") == "passed"
    assert runs(tmp_path) == [f"{model} 2"]
    (marker,) = markers(tmp_path)
    record = json.loads(marker.read_text())
    assert record["model"] == str(model) and record["target"] == f"{HERE}:healthy" and record["seconds"] >= 0
    assert ensure_model_runs(model, n_threads=2, target=f"{HERE}:healthy") == "cached"
    assert len(runs(tmp_path)) == 1  # the child ran once
    # A changed model file (size, mtime) is a new key: probed again.
    model.write_bytes(b"GGUF" + b"\1" * 90)
    assert ensure_model_runs(model, target=f"{HERE}:healthy") == "passed"
    assert len(runs(tmp_path)) == 2 and len(markers(tmp_path)) == 2


def test_the_key_covers_model_build_and_cpu(model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = probe_key(model)
    assert key == probe_key(model) and len(key) == 32
    monkeypatch.setattr(probe, "cpu_flags", lambda: frozenset({"sse2", "avx"}))
    assert probe_key(model) != key
    monkeypatch.undo()
    monkeypatch.setattr(probe, "_llama_cpp_build", lambda: "0.3.99|libggml-cpu.so:1:2")
    assert probe_key(model) != key


def test_a_python_error_in_the_child_is_inconclusive_and_not_cached(model: Path, tmp_path: Path) -> None:
    # A bad file raises in the child; the caller's own load then reports it as it always did.
    assert ensure_model_runs(model, target=f"{HERE}:raises") == "inconclusive"
    assert markers(tmp_path) == []


def test_a_hanging_probe_times_out(model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGWRIGHT_LLM_PROBE_TIMEOUT", "2")
    started = time.perf_counter()
    with pytest.raises(GenerationError, match=r"within 2 s.*RAGWRIGHT_LLM_PROBE_TIMEOUT=600"):
        ensure_model_runs(model, target=f"{HERE}:hangs")
    assert time.perf_counter() - started < 30


def test_the_probe_can_be_switched_off(model: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAGWRIGHT_LLM_PROBE", "0")
    assert ensure_model_runs(model, target=f"{HERE}:segfault") == "disabled"
    assert markers(tmp_path) == []


def test_a_bad_timeout_setting_names_the_variable(model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGWRIGHT_LLM_PROBE_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="RAGWRIGHT_LLM_PROBE_TIMEOUT"):
        ensure_model_runs(model, target=f"{HERE}:healthy")


def test_the_first_load_of_a_local_model_probes_before_loading(
    model: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("llama_cpp", reason="needs the llm extra")
    from ragwright.models.llms.local import LlamaCppChat

    monkeypatch.setattr(probe, "DEFAULT_TARGET", f"{HERE}:segfault")
    chat = LlamaCppChat(model)
    with pytest.raises(GenerationError, match=r"llama\.cpp:model crashed in a probe \(signal 11, SIGSEGV\)"):
        chat.load()
    assert chat._llama is None  # nothing was loaded in this process
    # probe=False (or RAGWRIGHT_LLM_PROBE=0) goes straight to the in-process load, which reports the bad file.
    monkeypatch.setattr(probe, "DEFAULT_TARGET", f"{HERE}:healthy")
    with pytest.raises(ConfigError, match=r"llama\.cpp cannot load"):
        LlamaCppChat(model, probe=False).load()
    assert runs(tmp_path) == []


@pytest.mark.slow
def test_the_real_model_passes_the_real_probe_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp", reason="needs the llm-small extra")
    from ragwright.models.llms.gguf import gguf_path

    path = gguf_path("0.5b")  # the assembled model in the user cache; the probe's marker goes to a fresh one
    monkeypatch.setenv("RAGWRIGHT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("RAGWRIGHT_LLM_PROBE", raising=False)
    assert ensure_model_runs(path) == "passed"
    assert ensure_model_runs(path) == "cached"
    assert len(markers(tmp_path)) == 1


# -- portable build flags ------------------------------------------------------------------------------


def test_portable_flags_never_build_for_the_host_cpu() -> None:
    for text in (PORTABLE_CMAKE_ARGS, portable_cmake_args(frozenset({"sse4_2", "avx", "avx2", "fma", "amx_tile"}))):
        assert "-DGGML_NATIVE=OFF" in text and "march" not in text and "NATIVE=ON" not in text
        assert "-DGGML_AMX_TILE=OFF" in text and "-DGGML_AMX_INT8=OFF" in text and "-DGGML_AVX512=OFF" in text
    # A CPU without AVX2 gets a build without it (and without what else it lacks).
    old = portable_cmake_args(frozenset({"sse2", "sse4_2", "avx"}))
    assert "-DGGML_AVX2=OFF" in old and "-DGGML_FMA=OFF" in old and "-DGGML_AVX=ON" in old


def test_ci_and_docs_build_llama_cpp_with_the_same_portable_flags() -> None:
    for doc in (".ci/run", "README.md", "docs/llm.md"):
        assert PORTABLE_CMAKE_ARGS in (ROOT / doc).read_text(encoding="utf-8"), doc
