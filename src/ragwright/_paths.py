"""Where ragwright keeps derived files (converted models, evaluation stores)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$RAGWRIGHT_CACHE_DIR``, else ``$XDG_CACHE_HOME/ragwright``, else ``~/.cache/ragwright``."""
    root = os.environ.get("RAGWRIGHT_CACHE_DIR")
    if root:
        return Path(root).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "ragwright"
