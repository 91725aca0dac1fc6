"""The ragwright error tree.

Every error the library raises on purpose derives from :class:`RagwrightError`::

    RagwrightError
    ├── ConfigError (ValueError)            an option or argument is invalid; says what to change
    ├── MissingDependencyError (ImportError) an optional dependency is absent; names the pip extra
    ├── ParseError                           a document could not be parsed (dead-lettered by ingest)
    ├── LimitExceeded                        a safety limit (size, pages, time, decompression) was hit
    ├── StoreError                           the store is unreadable, corrupt or misused
    ├── RetrievalError                       retrieval could not run at all
    └── GenerationError                      answer generation failed

Messages are written for the person at the keyboard: what happened, and what to do about it.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ConfigError",
    "GenerationError",
    "LimitExceeded",
    "MissingDependencyError",
    "ParseError",
    "RagwrightError",
    "RetrievalError",
    "StoreError",
]


class RagwrightError(Exception):
    """Root of every error ragwright raises deliberately."""


class ConfigError(RagwrightError, ValueError):
    """An option or argument is invalid.

    Raised at configuration time, never in the middle of a query.
    """

    def __init__(self, message: str, *, field: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value

    @classmethod
    def invalid(cls, field: str, value: Any, accepted: str) -> ConfigError:
        """Build the standard message: field, the value given, and what is accepted."""
        return cls(f"{field}={value!r} is invalid: {accepted}", field=field, value=value)


class MissingDependencyError(RagwrightError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, module: str, extra: str, purpose: str = "") -> None:
        """*extra* names the pip extra that brings *module*; ``""`` for a base dependency (then the message
        says to repair the install instead)."""
        what = f" (needed for {purpose})" if purpose else ""
        if extra:
            message = (
                f"the optional dependency {module!r} is not installed{what}; "
                f"install it with: pip install 'ragwright[{extra}]'"
            )
        else:
            message = (
                f"{module!r} is not installed{what}, but ragwright requires it; "
                "repair the install: pip install --force-reinstall ragwright"
            )
        super().__init__(message)
        self.module = module
        self.extra = extra


class ParseError(RagwrightError):
    """A document could not be parsed. Ingestion records it in the dead letter and goes on."""


class LimitExceeded(RagwrightError):
    """A safety limit was hit (file size, page count, decompressed size, time)."""


class StoreError(RagwrightError):
    """The store could not be opened, read or written, or was used inconsistently."""


class RetrievalError(RagwrightError):
    """Retrieval could not run at all (optional stages degrade instead of raising this)."""


class GenerationError(RagwrightError):
    """Answer generation failed."""
