"""Shared pieces of the ``ragwright`` command: state, option parsing, error handling."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from ragwright.errors import ConfigError, RagwrightError

DEFAULT_STORE = Path(".ragwright") / "store.db"
F = TypeVar("F", bound=Callable[..., Any])


class State:
    """What the global options (``--store``, ``--json``, ``--debug``, the models) set for a command."""

    def __init__(
        self,
        store: Path | str,
        as_json: bool,
        debug: bool,
        embedder: str | None,
        analyzer: str,
        reranker: str | None = None,
        llm: str | None = None,
        sparse: str | None = None,
    ) -> None:
        self.store: Path | str = DEFAULT_STORE
        self.set_store(store)
        self.as_json, self.debug, self.embedder = as_json, False, embedder
        self.sparse = None if sparse in (None, "", "none") else sparse  # --sparse: the SPLADE arm
        self.analyzer = analyzer
        self.reranker = reranker
        self.llm = llm
        if debug:
            self.set_debug()

    def set_store(self, store: Path | str) -> None:
        """A store file, or a database server (``postgresql://…``): see :mod:`ragwright.stores.open`."""
        from ragwright.stores.open import is_remote, sqlite_path, store_uri

        path = None if is_remote(store) else sqlite_path(store)
        self.store = store_uri(store) if path is None else path

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
        elif name == "sparse":
            self.sparse = None if value in ("", "none") else value
        else:
            setattr(self, name, value)

    def load_llm(self) -> Any:
        """The chat model named by ``--llm`` / ``RAGWRIGHT_LLM`` (``None`` for none: extractive answers)."""
        from ragwright.models.llms import load_chat

        return load_chat(self.llm)

    def load_reranker(self) -> Any:
        """The configured reranker, loaded now so a bad model fails here, not as a silent fallback later."""
        from ragwright.models.rerankers import load_reranker

        reranker = load_reranker(self.reranker)
        return reranker.load() if reranker is not None else None

    def open(self, *, must_exist: bool, prompt_observer: Any = None, ingest_options: Any = None) -> Any:
        from ragwright.models.embedders import load_embedder
        from ragwright.rag import Rag
        from ragwright.stores.open import open_store

        store: Any = open_store(self.store, keyword_analyzer=self.analyzer, must_exist=must_exist)
        if getattr(store, "upgrade_backup", None) is not None:
            click.echo(
                f"note: the store {self.store} was upgraded to a new schema; the old file is backed up at "
                f"{store.upgrade_backup}",
                err=True,
            )
        spec = self.embedder or spec_for(store.embedding_model)
        try:
            return Rag(
                store,
                load_embedder(spec),
                reranker=self.load_reranker(),
                llm=self.load_llm(),
                prompt_observer=prompt_observer,
                sparse_encoder=self.sparse,
                ingest_options=ingest_options,
            )
        except BaseException:
            store.close()
            raise

    def emit(self, payload: dict[str, Any], human: Callable[[], None]) -> None:
        if self.as_json:
            click.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        else:
            human()


def spec_for(bound: tuple[str, int] | None) -> str:
    """The embedder a store was built with, when the CLI knows it by name; else the default."""
    if bound is not None and bound[0].startswith("wordllama"):
        return "wordllama"
    return "default"


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


@contextmanager
def errors(debug: bool) -> Iterator[None]:
    try:
        yield
    except BrokenPipeError:
        reader_gone()
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
