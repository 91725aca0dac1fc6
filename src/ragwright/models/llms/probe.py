"""A crash probe for the local model: a few tokens generated in a child process before the first load.

llama.cpp runs native code inside our process. A build that uses CPU instructions the OS or VM has
not enabled — AMX tile instructions in a VM whose CPU advertises ``amx_tile`` (a native build there
crashes every generation in ``ggml_backend_amx_mul_mat``), AVX-512 or AVX2 on a CPU without them —
kills the process with SIGSEGV or SIGILL, and ``ragwright --llm local ask`` used to exit 139 without
a word. So before a GGUF model is first loaded in-process, :func:`ensure_model_runs` loads it in a
child Python and generates a few tokens; a child killed by a signal (or stuck past the time limit)
becomes a :class:`~ragwright.errors.GenerationError` that says what happened and how to reinstall
llama.cpp portably (:data:`PORTABLE_CMAKE_ARGS`), and the caller lives on.

A success is remembered by a marker file under ``<cache>/llm-probes/`` whose name is a digest of the
model file (path, size, mtime), the llama.cpp build (package version and the size and mtime of its
native libraries, so a rebuild is probed again), the CPU flags and the kernel release: the probe
(a model load plus 4 tokens, 1–5 s) runs once per machine, model and build. Failures are never
remembered. A child that fails with a Python exception (a truncated file, too little memory) is
*inconclusive*: nothing is cached and the in-process load reports the error as it always did.

``RAGWRIGHT_LLM_PROBE=0`` turns the probe off (a build you trust; a platform that cannot start a
child Python); ``RAGWRIGHT_LLM_PROBE_TIMEOUT`` sets its time limit in seconds (default 300).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from ragwright._paths import cache_root
from ragwright.errors import ConfigError, GenerationError

__all__ = [
    "DEFAULT_TARGET",
    "PORTABLE_CMAKE_ARGS",
    "ProbeOutcome",
    "cpu_flags",
    "ensure_model_runs",
    "generate_a_few_tokens",
    "portable_cmake_args",
    "probe_key",
    "reinstall_command",
]

log = logging.getLogger(__name__)

ProbeOutcome = Literal["passed", "cached", "disabled", "inconclusive"]

#: CMake flags for a llama.cpp that runs on every x86-64 CPU with AVX2 (Intel since 2013, AMD since
#: 2015): no tuning for the build CPU, no AVX-512, no AMX. llama-cpp-python installs only the plain
#: ``ggml-cpu`` library, not the per-CPU variants of GGML_CPU_ALL_VARIANTS, so runtime dispatch is
#: not available through it; the probe covers the CPUs this build does not.
PORTABLE_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON "
    "-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
)
#: The child's work, as ``module:function`` (a string, so tests can point it at an injected crash).
DEFAULT_TARGET = "ragwright.models.llms.probe:generate_a_few_tokens"

_PIN = "0.3.36"  # the llama-cpp-python version the extras pin (pyproject.toml)
_ENV_SWITCH = "RAGWRIGHT_LLM_PROBE"
_ENV_TIMEOUT = "RAGWRIGHT_LLM_PROBE_TIMEOUT"
_DEFAULT_TIMEOUT = 300.0
_INCONCLUSIVE = 3  # the child's exit status when its target raised a Python exception
# ~30 tokens: prompt processing (batched matrix products) and decoding both run.
_PROMPT = (
    "Question: which planet is known as the red planet, and why does it look red from Earth?\n"
    "Answer in one short sentence.\nAnswer:"
)
# GGML switches a CPU lacking the feature (a /proc/cpuinfo flag) must turn off.
_ISA_FLAGS = (("AVX", "avx"), ("AVX2", "avx2"), ("FMA", "fma"), ("F16C", "f16c"), ("BMI2", "bmi2"))


def cpu_flags() -> frozenset[str]:
    """The CPU feature flags the kernel reports (``/proc/cpuinfo``); empty where there is none."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith(("flags", "Features")):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def portable_cmake_args(flags: frozenset[str] | None = None) -> str:
    """:data:`PORTABLE_CMAKE_ARGS`, with the instruction sets a known CPU (*flags*) lacks turned off."""
    args = PORTABLE_CMAKE_ARGS
    if flags and "avx2" not in flags and any(f.startswith("sse") for f in flags):  # an x86 CPU before AVX2
        for name, flag in _ISA_FLAGS:
            if flag not in flags:
                args = args.replace(f"-DGGML_{name}=ON", f"-DGGML_{name}=OFF")
    return args


def _llama_cpp_version() -> str:
    try:
        return importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def reinstall_command(flags: frozenset[str] | None = None) -> str:
    """The shell line that rebuilds llama-cpp-python portably (``--no-cache-dir``: pip would otherwise
    reuse the wheel it compiled before, whatever ``CMAKE_ARGS`` says)."""
    version = _llama_cpp_version()
    pin = version if version != "unknown" else _PIN
    return (
        f'CMAKE_ARGS="{portable_cmake_args(flags)}" '
        f"pip install --force-reinstall --no-cache-dir --no-deps llama-cpp-python=={pin}"
    )


def _llama_cpp_build() -> str:
    """Package version plus the identity (name, size, mtime) of its native libraries; nothing imported."""
    parts = [_llama_cpp_version()]
    with contextlib.suppress(ImportError, ValueError):
        spec = importlib.util.find_spec("llama_cpp")
        for location in (spec.submodule_search_locations or []) if spec else []:
            lib = Path(location) / "lib"
            with contextlib.suppress(OSError):
                for path in sorted(lib.iterdir()):
                    if ".so" in path.name or path.suffix in (".dylib", ".dll"):
                        st = path.stat()
                        parts.append(f"{path.name}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


def probe_key(model_path: str | os.PathLike[str], target: str = DEFAULT_TARGET) -> str:
    """The digest a probe's success is remembered under (see the module docstring)."""
    path = Path(model_path).expanduser().resolve()
    st = path.stat()
    flags = cpu_flags()
    cpu = " ".join(sorted(flags)) if flags else f"{platform.machine()} {platform.processor()}"
    fields = [str(path), str(st.st_size), str(st.st_mtime_ns), _llama_cpp_build(), cpu, platform.release(), target]
    return hashlib.sha256("\n".join(fields).encode("utf-8")).hexdigest()[:32]


def _enabled() -> bool:
    return os.environ.get(_ENV_SWITCH, "1").strip().lower() not in ("0", "off", "false", "no")


def _timeout(value: float | None) -> float:
    if value is not None:
        return value
    raw = os.environ.get(_ENV_TIMEOUT, "").strip()
    if not raw:
        return _DEFAULT_TIMEOUT
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ConfigError.invalid(_ENV_TIMEOUT, raw, "a positive number of seconds")
    return seconds


def _marker(key: str) -> Path:
    return cache_root() / "llm-probes" / f"{key}.ok"


def _remember(marker: Path, record: dict[str, Any]) -> None:
    tmp: str | None = None
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".probe-", suffix=".tmp", dir=marker.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=1)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the cache is shared by the user's processes
        os.replace(tmp, marker)
    except OSError as exc:  # the probe passed; only its memory is lost
        log.warning("llm_probe_not_cached: %s (%s); the probe will run again next time", marker, exc)
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


# faulthandler's stack dump in the child's stderr: kept in the log, left out of the error message.
_DUMP = ("  File ", "Current thread", "Thread 0x", "Stack (most recent call first)", "Extension modules:")


def _tail(text: str, lines: int = 8, *, dump: bool = True) -> str:
    kept = [line for line in text.strip().splitlines() if line.strip() and (dump or not line.startswith(_DUMP))]
    return "\n".join(kept[-lines:])


def ensure_model_runs(
    model_path: str | os.PathLike[str],
    *,
    n_threads: int = 1,
    timeout: float | None = None,
    target: str | None = None,
    name: str | None = None,
) -> ProbeOutcome:
    """Check, once per machine and build, that *model_path* generates in a child process.

    Returns ``"cached"`` (passed before), ``"passed"`` (passed now; remembered), ``"disabled"``
    (``RAGWRIGHT_LLM_PROBE=0``) or ``"inconclusive"`` (the child raised a Python error: nothing
    remembered, the caller's own load will report it). Raises :class:`GenerationError` when the
    child died by a signal, exited abnormally or ran past *timeout* seconds (default
    ``$RAGWRIGHT_LLM_PROBE_TIMEOUT`` or 300). *target* (``module:function``, called with the model
    path and ``n_threads``; default :data:`DEFAULT_TARGET`) is what the child runs.
    """
    target = target or DEFAULT_TARGET
    if not _enabled():
        log.info("llm_probe_skipped: %s=0", _ENV_SWITCH)
        return "disabled"
    limit = _timeout(timeout)
    path = Path(model_path).expanduser()
    label = name or path.name
    marker = _marker(probe_key(path, target))
    if marker.is_file():
        return "cached"
    if not sys.executable:
        log.warning("llm_probe_skipped: no Python executable to start a child process with")
        return "inconclusive"
    code = f"import sys; from {__name__} import _child; sys.exit(_child(sys.argv[1:]))"
    command = [sys.executable, "-X", "faulthandler", "-c", code, target, str(path), str(n_threads)]
    # The child sees what this process sees: its import path first (as multiprocessing's spawn does).
    python_path = os.pathsep.join([p for p in sys.path if p] + [os.environ.get("PYTHONPATH", "")]).strip(os.pathsep)
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=limit,
            check=False,
            env={**os.environ, _ENV_SWITCH: "0", "PYTHONPATH": python_path},
        )
    except subprocess.TimeoutExpired as exc:
        log.error("llm_probe_timeout: %s after %.0f s", label, limit)
        raise GenerationError(
            f"the local model {label} did not finish a 4-token probe generation in a child process within "
            f"{limit:.0f} s: the llama.cpp build may hang on this machine, or the machine is very busy. "
            f"Set {_ENV_TIMEOUT}=600 to allow longer, {_ENV_SWITCH}=0 to skip the probe, or reinstall "
            f"llama.cpp portably: {reinstall_command(cpu_flags())}"
        ) from exc
    seconds = time.perf_counter() - started
    stderr = done.stderr.decode("utf-8", "replace")
    if done.returncode == 0:
        record = {
            "model": str(path),
            "llama_cpp_python": _llama_cpp_version(),
            "target": target,
            "seconds": round(seconds, 2),
            "probed_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        _remember(marker, record)
        log.info("llm_probe_passed: %s in %.1f s", label, seconds)
        return "passed"
    if done.returncode == _INCONCLUSIVE:
        log.warning("llm_probe_inconclusive: %s: %s", label, _tail(stderr, 3))
        return "inconclusive"
    raise _crash_error(label, done.returncode, stderr)


def _crash_error(label: str, returncode: int, stderr: str) -> GenerationError:
    flags = cpu_flags()
    if returncode < 0:
        try:
            how = f"signal {-returncode}, {signal.Signals(-returncode).name}"
        except ValueError:
            how = f"signal {-returncode}"
    else:
        how = f"exit status {returncode}"
    log.error("llm_probe_crashed: %s died by %s; child stderr:\n%s", label, how, _tail(stderr, 20))
    if returncode == -signal.SIGKILL:
        cause = "it was killed — most often by the out-of-memory killer: free memory or use the smaller model"
    else:
        amx = " (it advertises AMX, which native builds use and VMs often do not enable)" if "amx_tile" in flags else ""
        cause = f"your llama.cpp build uses CPU instructions this machine does not enable{amx}"
    detail = _tail(stderr, 2, dump=False).replace("\n", " | ")
    return GenerationError(
        f"the local model {label} crashed in a probe ({how}) in a child process, so it was not loaded here: "
        f"{cause}. Reinstall llama.cpp portably: {reinstall_command(flags)}; or use a remote model "
        f"(--llm openai:MODEL). {_ENV_SWITCH}=0 skips the probe."
        + (f" Child's last words: {detail[:300]}" if detail else "")
    )


def generate_a_few_tokens(model_path: str, n_threads: int = 1) -> None:
    """The probe's work in the child: load the model and generate 4 tokens after a ~30-token prompt."""
    import llama_cpp

    llm = llama_cpp.Llama(
        model_path=model_path,
        n_ctx=256,
        n_threads=n_threads,
        n_threads_batch=n_threads,
        n_batch=64,
        seed=0,
        verbose=False,
    )
    llm.create_completion(_PROMPT, max_tokens=4, temperature=0.0)


def _child(argv: list[str]) -> int:
    """The child's entry point: ``argv`` is ``MODULE:FUNCTION MODEL_PATH N_THREADS``."""
    target, model_path, n_threads = argv
    module, _, function = target.partition(":")
    try:
        work = getattr(importlib.import_module(module), function)
        work(model_path, int(n_threads))
    except Exception as exc:  # a Python-level failure: inconclusive, the caller's own load reports it
        print(f"probe-error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return _INCONCLUSIVE
    return 0
