"""Publishing converted model folders into the user cache, safely under concurrency."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
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
