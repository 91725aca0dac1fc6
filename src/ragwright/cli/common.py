"""Shared pieces of the ``ragwright`` command: state, option parsing, error handling."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from ragwright.errors import ConfigError, RagwrightError, StoreBusyError

DEFAULT_STORE = Path(".ragwright") / "store.db"
F = TypeVar("F", bound=Callable[..., Any])


class State:
    """What the global options (``--store``, ``--json``, ``--debug``, ``--config``, the models) set for a
    command. A model or store option given on the command line wins over ``ragwright.toml``
    (:mod:`ragwright.config`), which wins over the defaults."""

    def __init__(
        self,
        store: Path | str | None,
        as_json: bool,
        debug: bool,
        embedder: str | None,
        analyzer: str | None,
        reranker: str | None = None,
        llm: str | None = None,
        sparse: str | None = None,
        config: str | None = None,
    ) -> None:
        self.as_json, self.debug = as_json, False
        self.config = config
        #: Global options given on the command line (``None``: not given), by configuration key.
        self.given: dict[str, Any] = {}
        for key, value in (
            ("embedder", embedder),
            ("keyword_analyzer", analyzer),
            ("reranker", reranker),
            ("llm", llm),
            ("sparse", sparse),
        ):
            if value is not None:
                self.given[key] = value
        if store is not None:
            self.set_store(store)
        self._settings: Any = None
        if debug:
            self.set_debug()

    # -- the effective configuration -----------------------------------------------------------------
    @property
    def settings(self) -> Any:
        """The effective :class:`~ragwright.config.Settings`: the configuration file (``--config``,
        ``$RAGWRIGHT_CONFIG`` or ``./ragwright.toml``) with the global options given here over it."""
        if self._settings is None:
            from ragwright.config import load_settings

            self._settings = load_settings(self.config, overrides=self.given)
        return self._settings

    def effective(self, flags: dict[str, Any] | None = None) -> Any:
        """The settings with a command's switches (``--hyde``, ``--top-k`` …; ``None`` = not given) applied."""
        return (
            self.settings.with_overrides(flags=flags)
            if flags and any(v is not None for v in flags.values())
            else self.settings
        )

    @property
    def store(self) -> Path | str:
        """The store: ``--store``, else ``store`` in ``ragwright.toml``, else ``.ragwright/store.db``."""
        return _store_location(self.settings.store or DEFAULT_STORE)

    @property
    def embedder(self) -> str | None:
        return self.settings.embedder  # type: ignore[no-any-return]

    @property
    def analyzer(self) -> str:
        return self.settings.keyword_analyzer  # type: ignore[no-any-return]

    @property
    def llm(self) -> str | None:
        return self.settings.llm  # type: ignore[no-any-return]

    @property
    def reranker(self) -> str | None:
        return self.settings.reranker  # type: ignore[no-any-return]

    @property
    def sparse(self) -> str | None:
        value = self.settings.sparse
        return None if value in (None, "", "none") else value

    def set_store(self, store: Path | str) -> None:
        """A store file, or a database server (``postgresql://…``): see :mod:`ragwright.stores.open`."""
        self.given["store"] = str(store)
        self._settings = None

    def set_debug(self) -> None:
        """Tracebacks, and ragwright's own debug logs — not the third-party libraries' (they log at their
        WARNING level and above, as without ``--debug``)."""
        import logging

        self.debug = True
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        logging.getLogger("ragwright").setLevel(logging.DEBUG)

    def set(self, name: str, value: Any) -> None:
        """Apply a global option given after the subcommand (``ragwright search x --json``)."""
        if name == "store":
            self.set_store(value)
        elif name == "debug":
            self.set_debug()
        elif name == "as_json":
            self.as_json = bool(value)
        elif name == "config":
            self.config, self._settings = value, None
        else:
            self.given["keyword_analyzer" if name == "analyzer" else name] = value
            self._settings = None

    def open(
        self,
        *,
        must_exist: bool,
        prompt_observer: Any = None,
        ingest_options: Any = None,
        settings: Any = None,
    ) -> Any:
        """The Rag over the store, built from *settings* (default: :attr:`settings`) as the server builds its own."""
        from ragwright.config.wiring import open_rag

        def upgraded(store: Any) -> None:
            click.echo(
                f"note: the store {self.store} was upgraded to a new schema; the old file is backed up at "
                f"{store.upgrade_backup}",
                err=True,
            )

        return open_rag(
            settings or self.settings,
            self.store,
            must_exist=must_exist,
            prompt_observer=prompt_observer,
            ingest_options=ingest_options,
            on_upgrade=upgraded,
        )

    def emit(self, payload: dict[str, Any], human: Callable[[], None]) -> None:
        if self.as_json:
            click.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        else:
            human()


def _store_location(store: Path | str) -> Path | str:
    from ragwright.stores.open import is_remote, sqlite_path, store_uri

    path = None if is_remote(store) else sqlite_path(store)
    return store_uri(store) if path is None else path


def split_groups(text: str | None) -> list[str]:
    """``"hr, finance"`` → ``["hr", "finance"]``."""
    return [g.strip() for g in (text or "").split(",") if g.strip()]


def caller(tenant: str | None, groups: str | None) -> Any:
    """The caller's identity from ``--tenant``/``--groups``; ``None`` (the default identity: public
    content of the default tenant) when neither is given."""
    if tenant is None and groups is None:
        return None
    from ragwright.model.identity import DEFAULT_TENANT, Identity

    try:
        return Identity(tenant if tenant is not None else DEFAULT_TENANT, tuple(split_groups(groups)))
    except ValueError as exc:
        raise ConfigError(f"--tenant/--groups: {exc}") from exc


def parse_filters(pairs: tuple[str, ...]) -> dict[str, Any] | None:
    """``key=value`` pairs; values are read as JSON when they parse (3 → number, "3" → string)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--filter {pair!r} must look like key=value (e.g. department=finance, page=3)")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        out[key] = value
    return out or None


def warn_unknown_filter_keys(rag: Any, metadata_filter: Any) -> None:
    """A filter on a key no indexed document has matches nothing: say so, with the keys that exist."""
    if not metadata_filter:
        return
    import difflib

    unknown, known = rag.unknown_filter_keys(metadata_filter)
    if not unknown:
        return
    hints = [
        f"{k!r} (did you mean {close[0]!r}?)" if (close := difflib.get_close_matches(k, known, n=1)) else repr(k)
        for k in unknown
    ]
    click.echo(
        f"warning: no indexed document has the metadata key {', '.join(hints)}, so the filter matches nothing; "
        f"keys that exist: {', '.join(known)}",
        err=True,
    )


def reader_gone() -> None:
    """Exit quietly (status 0) when the reader of our output went away (``ragwright status | head``):
    the rest of the output goes nowhere instead of ending in "error: Broken pipe"."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush must not fail again
    except (OSError, ValueError):  # no real stdout (a test runner's buffer): nothing to redirect
        pass
    sys.exit(0)


#: The exit status when the store is busy (another process holds its write lock): ``EX_TEMPFAIL``, "retry".
EXIT_BUSY = 75


@contextmanager
def errors(debug: bool) -> Iterator[None]:
    try:
        yield
    except BrokenPipeError:
        reader_gone()
    except StoreBusyError as exc:  # the store is fine, another process is writing: retry (EX_TEMPFAIL)
        if debug:
            raise
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_BUSY)
    except (RagwrightError, OSError) as exc:
        if debug:
            raise
        message = str(exc) if isinstance(exc, RagwrightError) else f"{exc.strerror or exc}: {exc.filename or ''}"
        click.echo(f"error: {message}", err=True)
        sys.exit(2)
    except Exception as exc:
        if debug:
            raise
        click.echo(f"error: internal error {type(exc).__name__}: {exc} (run with --debug for the traceback)", err=True)
        sys.exit(1)


def command(func: F) -> F:
    """Run a command body inside the error handler."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        state: State = click.get_current_context().obj
        with errors(state.debug):
            return func(state, *args, **kwargs)

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper  # type: ignore[return-value]
