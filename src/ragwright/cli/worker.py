"""``ragwright worker``: distributed ingestion into a PostgreSQL store.

``ragwright worker --store postgresql://… enqueue PATH…`` queues documents; ``ragwright worker --store
postgresql://…`` (on as many machines as you like) drains the queue; ``… worker --store … status``
shows the queue. SIGTERM or Ctrl-C lets the current batch finish, then the worker exits.
"""

from __future__ import annotations

import signal
import threading
from dataclasses import dataclass
from typing import Any

import click

from ragwright.cli.common import errors, parse_filters
from ragwright.errors import ConfigError


@dataclass
class _WorkerArgs:
    dsn: str
    schema: str


def _open_store(args: _WorkerArgs, analyzer: str = "auto") -> Any:
    from ragwright.stores.open import is_remote, open_store
    from ragwright.stores.postgres import PostgresOptions

    if not is_remote(args.dsn):
        raise ConfigError.invalid(
            "--store", args.dsn, "a PostgreSQL URI: postgresql://user@host:port/database (the queue is shared there)"
        )
    return open_store(args.dsn, keyword_analyzer=analyzer, postgres_options=PostgresOptions(schema=args.schema))


@click.group("worker", invoke_without_command=True)
@click.option("--schema", default="ragwright", show_default=True, help="The store's schema in that database.")
@click.option("--batch", "batch_size", type=int, default=8, show_default=True, help="Documents claimed at once.")
@click.option("--lease", "lease_seconds", type=float, default=120.0, show_default=True, help="Lease per claim (s).")
@click.option("--poll", "poll_seconds", type=float, default=2.0, show_default=True, help="Idle polling interval (s).")
@click.option("--exit-when-empty", is_flag=True, help="Exit once no job is queued or running anywhere.")
@click.option("--id", "worker_id", default=None, help="Worker name in the queue (default: host:pid).")
@click.pass_context
def worker(
    ctx: click.Context,
    schema: str,
    batch_size: int,
    lease_seconds: float,
    poll_seconds: float,
    exit_when_empty: bool,
    worker_id: str | None,
) -> None:
    """Pull documents from the store's queue and ingest them (run several, anywhere); --store names the
    shared PostgreSQL store."""
    state = ctx.obj
    ctx.meta["ragwright.worker.schema"] = schema
    if ctx.invoked_subcommand is not None:
        return  # the subcommand reads --store once its own options (maybe --store) are parsed
    args = _WorkerArgs(str(state.store), schema)
    with errors(state.debug):
        from ragwright.ingest.worker import Worker
        from ragwright.models.embedders import load_embedder
        from ragwright.rag import Rag
        from ragwright.stores.open import embedder_spec_of
        from ragwright.stores.postgres.queue import IngestQueue

        store = _open_store(args, state.analyzer)
        try:
            rag = Rag(store, load_embedder(state.embedder or embedder_spec_of(store)))
        except BaseException:
            store.close()
            raise
        with rag:
            runner = Worker(
                rag.ingestion,
                IngestQueue(store),
                worker_id=worker_id,
                batch_size=batch_size,
                lease_seconds=lease_seconds,
                poll_seconds=poll_seconds,
            )
            stop = threading.Event()
            previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
            try:
                report = runner.run(until_empty=exit_when_empty, stop=stop)
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)
        payload = report.to_dict()
        state.emit(
            payload,
            lambda: click.echo(
                f"worker {report.worker}: {report.jobs_done} jobs done, {report.jobs_failed} failed; "
                f"{report.ingest.added} added, {report.ingest.updated} updated, {report.ingest.unchanged} unchanged, "
                f"{len(report.ingest.failed)} documents failed, {report.ingest.chunks} chunks"
            ),
        )


@worker.command("enqueue")
@click.argument("paths", nargs=-1, required=True)
@click.option("--tenant", default=None, help="Tenant of the queued documents.")
@click.option("--acl", multiple=True, help="ACL group allowed to see them (repeatable; default: public).")
@click.option("--meta", multiple=True, help="key=value metadata for every document (repeatable).")
@click.pass_context
def enqueue(
    ctx: click.Context, paths: tuple[str, ...], tenant: str | None, acl: tuple[str, ...], meta: tuple[str, ...]
) -> None:
    """Queue files, folders or JSONL corpora for the workers."""
    state = ctx.obj
    with errors(state.debug):
        from ragwright.ingest.worker import enqueue as enqueue_sources
        from ragwright.model.identity import DEFAULT_TENANT
        from ragwright.sources import open_source
        from ragwright.stores.postgres.queue import IngestQueue

        sources = [open_source(p) for p in paths]  # refuse a bad path before anything is queued
        store = _open_store(_WorkerArgs(str(state.store), ctx.meta["ragwright.worker.schema"]), state.analyzer)
        with store:
            added = enqueue_sources(
                IngestQueue(store),
                sources,
                tenant=tenant or DEFAULT_TENANT,
                acl=list(acl) or None,
                metadata=parse_filters(meta),
            )
        state.emit({"queued": added}, lambda: click.echo(f"queued {added} documents"))


@worker.command("status")
@click.pass_context
def queue_status(ctx: click.Context) -> None:
    """Jobs by status: queued, running, done, failed."""
    state = ctx.obj
    with errors(state.debug):
        from ragwright.stores.postgres.queue import IngestQueue

        with _open_store(_WorkerArgs(str(state.store), ctx.meta["ragwright.worker.schema"]), state.analyzer) as store:
            counts = IngestQueue(store).counts()
        state.emit(counts, lambda: click.echo(", ".join(f"{k} {v}" for k, v in counts.items())))
