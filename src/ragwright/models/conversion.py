"""Publishing converted model folders into the user cache, safely under concurrency."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def build_folder(target: Path, marker: str) -> Iterator[Path]:
    """Yield a temporary folder beside *target*; when the block succeeds it is renamed to *target*.

    A reader never sees a half-built folder. If another process published *target* first (its copy is
    identical, being keyed by content), the rename fails and ours is discarded — unless *target*
    lacks *marker*, the file a finished build always has, which means something else is wrong.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        yield work
        try:
            work.rename(target)
        except OSError:
            if not (target / marker).is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def write_config(folder: Path, config: dict[str, Any]) -> None:
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def content_key(seed: str, folder: Path, names: Iterable[str]) -> str:
    """A sha256 hex digest of *seed* and the named files of *folder* (missing ones skipped).

    Converted folders are cached under this key, so a changed source file (or a new *seed*, which
    carries the conversion's format version) gives a fresh conversion.
    """
    digest = hashlib.sha256(seed.encode())
    for name in names:
        path = folder / name
        if not path.is_file():
            continue
        digest.update(f"\0{name}\0".encode())
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()
