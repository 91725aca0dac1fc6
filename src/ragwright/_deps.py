"""Import optional dependencies at the point of use, with an error that names the extra."""

from __future__ import annotations

import importlib
from types import ModuleType

from ragwright.errors import MissingDependencyError


def require(module: str, extra: str, purpose: str = "") -> ModuleType:
    """Import *module* or raise :class:`MissingDependencyError` naming the pip extra *extra* that brings it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised through monkeypatching in tests
        raise MissingDependencyError(module, extra, purpose) from exc
