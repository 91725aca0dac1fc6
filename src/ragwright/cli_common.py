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
        from ragwright.stores.postgres.connection import is_dsn

        # A store file, or a PostgreSQL server (``postgresql://…``: the scale-out backend).
        self.store: Path | str = str(store) if is_dsn(str(store)) else Path(store)
        self.as_json, self.debug, self.embedder = as_json, debug, embedder
        self.sparse = None if sparse in (None, "", "none") else sparse  # --sparse: the SPLADE arm
        self.analyzer = analyzer
        self.reranker = reranker
        self.llm = llm

    def load_llm(self) -> Any:
        """The chat model named by ``--llm`` / ``RAGWRIGHT_LLM`` (``None`` for none: extractive answers)."""
        from ragwright.models.llms import load_chat

        return load_chat(self.llm)

    def load_reranker(self) -> Any:
        """The configured reranker, loaded now so a bad model fails here, not as a silent fallback later."""
        from ragwright.models.rerankers import load_reranker

        reranker = load_reranker(self.reranker)
        return reranker.load() if reranker is not None else None

    def open(self, *, must_exist: bool, prompt_observer: Any = None) -> Any:
        from ragwright.models.embedders import load_embedder
        from ragwright.rag import Rag

        store: Any
        if isinstance(self.store, str):
            from ragwright.stores.postgres import PostgresStore

            store = PostgresStore(self.store, keyword_analyzer=self.analyzer)
        else:
            if must_exist and not self.store.exists():
                raise ConfigError(f"no store at {self.store}; ingest something first (ragwright ingest PATH)")
            from ragwright.stores.sqlite import SqliteStore

            store = SqliteStore(self.store, keyword_analyzer=self.analyzer)
            if store.upgrade_backup is not None:
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


@contextmanager
def errors(debug: bool) -> Iterator[None]:
    try:
        yield
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
