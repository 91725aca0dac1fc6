"""``ragwright ingest``: files, folders and corpora into the store, with progress, passwords and Ctrl-C.

Exit status: 0 when every document succeeded, 1 when one failed (each listed with its reason, then a
one-line summary), 130 after Ctrl-C (the documents finished before it stay committed; running the
same command again picks up the rest, unchanged documents being skipped). A second Ctrl-C stops at once.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from ragwright.cli.common import State, command, parse_filters, split_groups
from ragwright.cli.config import switch_flags
from ragwright.cli.output import one_line, print_ingest
from ragwright.errors import ConfigError


@click.command()
@click.argument("paths", nargs=-1)
@click.option("--tenant", default=None, help="Tenant of the ingested documents.")
@click.option("--acl", multiple=True, help="ACL group allowed to see them (repeatable; default: public).")
@click.option("--groups", "acl_groups", default=None, help="Comma-separated ACL groups (same as repeating --acl).")
@click.option("--meta", multiple=True, help="key=value metadata for every document (repeatable).")
@click.option("--sync", is_flag=True, help="Also remove documents that disappeared from the given folders/corpora.")
@click.option("--retry-failed", is_flag=True, help="Ingest again the documents that failed before.")
@click.option("--allow-http", is_flag=True, help="Allow http(s):// URLs among PATHS (fetched, size- and time-bounded).")
@click.option(
    "--follow-symlinks", is_flag=True, help="Follow a folder's links to files outside it (refused by default)."
)
@click.option(
    "--password",
    default=None,
    envvar="RAGWRIGHT_PDF_PASSWORD",
    help="Password tried on encrypted PDFs (env RAGWRIGHT_PDF_PASSWORD keeps it out of the process list).",
)
@click.option(
    "--passwords",
    "password_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    default=None,
    help='JSON file of per-file PDF passwords: {"name.pdf" or "path" or "glob*.pdf": "password"}; '
    "the first matching pattern wins, then --password.",
)
@click.option("--graph", "graph", is_flag=True, help="Also build the entity graph (GraphRAG; kept in step afterwards).")
@click.option(
    "--graph-extractor",
    type=click.Choice(["rules", "spacy", "llm"]),
    default=None,
    help="Entity extractor of --graph: rules (default, no model), spacy ([graph-ner]), llm (--llm).",
)
@click.option(
    "--hierarchy",
    "hierarchy",
    is_flag=True,
    help="Also summarise each document and build the summary tree (search/ask --hierarchical).",
)
@switch_flags("ingest")
@command
def ingest(
    state: State,
    paths: tuple[str, ...],
    tenant: str | None,
    acl: tuple[str, ...],
    acl_groups: str | None,
    meta: tuple[str, ...],
    sync: bool,
    retry_failed: bool,
    allow_http: bool,
    follow_symlinks: bool,
    password: str | None,
    password_file: Path | None,
    graph: bool,
    graph_extractor: str | None,
    hierarchy: bool,
    switches: dict[str, Any],
) -> None:
    """Ingest files, folders or JSONL/BEIR corpora (unchanged documents are skipped). Exit status 1 when
    a document failed (each is listed with its reason, and kept by `ragwright status`); Ctrl-C keeps
    the documents already written. --parents, --tags and --chunking (or ragwright.toml) choose what
    ingestion builds: parent chunks, the tag index, the chunking strategy."""
    from ragwright.ingest import IngestReport
    from ragwright.sources import open_source

    if not paths and not retry_failed:
        raise ConfigError("nothing to ingest: give at least one file or folder (or --retry-failed)")
    settings = state.effective(switches)
    options = ingest_options(password, password_file, settings.ingest)
    # Refuse a bad path before any write.
    sources = [open_source(p, allow_http=allow_http, follow_symlinks=follow_symlinks) for p in paths]
    empty = [p for p, s in zip(paths, sources, strict=True) if len(s) == 0]
    access = [*acl, *split_groups(acl_groups)] or None
    with (
        state.open(must_exist=retry_failed and not paths, ingest_options=options, settings=settings) as rag,
        interruptible() as cancel,
    ):
        report = IngestReport()
        _graph(rag, graph or graph_extractor is not None, graph_extractor)
        _hierarchy(rag, hierarchy)
        if sources:
            report.add(_ingest_with_progress(state, rag, sources, tenant, access, parse_filters(meta), sync, cancel))
        if retry_failed and not report.interrupted:
            report.add(rag.retry_failed())
    for path in empty:
        click.echo(f"note: {one_line(path)} holds no file to ingest (empty, or every file excluded)", err=True)
    state.emit(report.to_dict(), lambda: print_ingest(report))
    if report.interrupted:
        click.echo(
            f"interrupted: {report.added + report.updated} documents written before Ctrl-C were kept "
            f"({report.added} added, {report.updated} updated); run the same command again to ingest the rest",
            err=True,
        )
        sys.exit(130)
    if report.failed:
        sys.exit(1)  # a script sees that something failed (the summary line said what)


def _graph(rag: Any, asked: bool, extractor: str | None) -> None:
    """--graph, or a store that already has a graph (which every ingestion then keeps in step)."""
    from ragwright.rag_graph import enable_graph, store_has_graph

    if asked or store_has_graph(rag.store):
        from ragwright.graph import GraphOptions

        enable_graph(rag, GraphOptions(extractor=extractor or "rules"))


def _hierarchy(rag: Any, asked: bool) -> None:
    """--hierarchy, or a store that already has summaries (which every ingestion then keeps in step)."""
    from ragwright.rag_hierarchy import enable_hierarchy, store_has_hierarchy

    if asked or store_has_hierarchy(rag.store):
        enable_hierarchy(rag)


def ingest_options(password: str | None, password_file: Path | None, base: Any = None) -> Any:
    """The ingestion options: *base* (``[ingest]`` of ragwright.toml; ``None``: the defaults) with the
    passwords the flags give."""
    if password is None and password_file is None:
        return base
    import dataclasses

    from ragwright.options import IngestOptions

    passwords: Any = ()
    if password_file is not None:
        try:
            passwords = json.loads(password_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"--passwords {password_file}: not a readable JSON file ({exc})") from None
        if not isinstance(passwords, dict):
            raise ConfigError(f'--passwords {password_file}: expected a JSON object {{"pattern": "password"}}')
    base = base if base is not None else IngestOptions()
    parse = dataclasses.replace(
        base.parse,
        pdf_password=password or base.parse.pdf_password,
        pdf_passwords=passwords if password_file is not None else base.parse.pdf_passwords,
    )
    return dataclasses.replace(base, parse=parse)


@contextmanager
def interruptible() -> Iterator[threading.Event]:
    """An event set by the first Ctrl-C (the run finishes the document in hand and stops); the second
    raises ``KeyboardInterrupt`` as usual. Outside the main thread, just an event."""
    cancel = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield cancel
        return

    def on_interrupt(signum: int, frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        click.echo("\nstopping after the document in hand (Ctrl-C again to stop at once)…", err=True)

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield cancel
    finally:
        signal.signal(signal.SIGINT, previous)


def _ingest_with_progress(
    state: State,
    rag: Any,
    sources: list[Any],
    tenant: str | None,
    acl: list[str] | None,
    meta: dict[str, Any] | None,
    sync: bool,
    cancel: threading.Event,
) -> Any:
    if state.as_json or not sys.stderr.isatty():  # the bar is for a person at a terminal, on stderr
        return rag.ingest(sources, tenant=tenant, acl=acl, metadata=meta, sync=sync, cancel=cancel)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("ingesting"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        console=Console(stderr=True),
    ) as bar:
        task = bar.add_task("ingest", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return rag.ingest(sources, tenant=tenant, acl=acl, metadata=meta, progress=progress, sync=sync, cancel=cancel)
