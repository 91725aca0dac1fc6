"""The ragwright error tree.

Every error the library raises on purpose derives from :class:`RagwrightError`::

    RagwrightError
    ├── ConfigError (ValueError)            an option or argument is invalid; says what to change
    ├── MissingDependencyError (ImportError) an optional dependency is absent; names the pip extra
    ├── ParseError                           a document could not be parsed (dead-lettered by ingest)
    ├── LimitExceeded                        a safety limit (size, pages, time, decompression) was hit
    ├── StoreError                           the store is unreadable, corrupt or misused
    │   └── StoreBusyError                   another process holds the write lock: retry later
    ├── RetrievalError                       retrieval could not run at all
    └── GenerationError                      answer generation failed

Messages are written for the person at the keyboard: what happened, and what to do about it.

Every error pickles whole (message and attributes), whatever its constructor takes: the isolated
parser process (:mod:`ragwright.parse.limits`) sends its errors back to the caller that way.
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
    "StoreBusyError",
    "StoreError",
]


def _rebuild(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> BaseException:
    """Unpickle an error without calling its ``__init__`` (whose signature may differ from ``args``)."""
    exc = cls.__new__(cls, *args)
    exc.args = args
    exc.__dict__.update(state)
    return exc


class RagwrightError(Exception):
    """Root of every error ragwright raises deliberately."""

    def __reduce__(self) -> tuple[Any, ...]:
        # Exception's default pickling calls ``cls(*self.args)``: a subclass whose ``__init__`` takes
        # other arguments (MissingDependencyError's module, extra, purpose) could not be unpickled, and
        # the parser process's real error became "the parser process died".
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


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

    def __init__(self, module: str, extra: str, purpose: str = "", *, install: str | None = None) -> None:
        """*extra* names the pip extra that brings *module*; ``""`` (or ``"base"``) for a base dependency
        (then the message says to repair the install instead). *install* replaces the install line for
        what pip cannot bring (a program: ``apt install tesseract-ocr``). A test ties every extra named in
        an error to ``pyproject.toml``."""
        what = f" (needed for {purpose})" if purpose else ""
        extra = "" if extra == "base" else extra
        if install:
            message = f"{module!r} is not installed{what}; install it with: {install}"
        elif extra:
            message = (
                f"the dependency {module!r} is not installed{what}; install it with: pip install 'ragwright[{extra}]'"
            )
        else:
            message = (
                f"{module!r} is not installed{what}, but ragwright requires it; "
                "repair the install: pip install --force-reinstall ragwright"
            )
        super().__init__(message)
        self.module = module
        self.extra = extra
        self.purpose = purpose


class ParseError(RagwrightError):
    """A document could not be parsed. Ingestion records it in the dead letter and goes on."""


class LimitExceeded(RagwrightError):
    """A safety limit was hit (file size, page count, decompressed size, time)."""


class StoreError(RagwrightError):
    """The store could not be opened, read or written, or was used inconsistently."""


class StoreBusyError(StoreError):
    """Another process held the store's write lock past the busy timeout: nothing was written, the
    store is healthy, and the same call succeeds once that process has finished (the CLI exits 75,
    ``EX_TEMPFAIL``)."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class RetrievalError(RagwrightError):
    """Retrieval could not run at all (optional stages degrade instead of raising this)."""


class GenerationError(RagwrightError):
    """Answer generation failed."""
