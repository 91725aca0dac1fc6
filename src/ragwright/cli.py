"""The ``ragwright`` command.

Every command takes ``--json`` and then prints one JSON document with stable keys (see README).
Errors print one line (``error: …``) and exit with status 2; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from ragwright.cli_output import print_answer, print_document, print_ingest, print_results
from ragwright.errors import ConfigError, RagwrightError

DEFAULT_STORE = Path(".ragwright") / "store.db"
F = TypeVar("F", bound=Callable[..., Any])


MODES: dict[str, dict[str, Any]] = {
    "hybrid": {"use_hybrid_search": True},
    "dense": {"use_hybrid_search": False},
    "bm25": {"use_dense_search": False, "use_keyword_search": True},
}


class _State:
    def __init__(self, store: Path, as_json: bool, debug: bool, embedder: str | None, analyzer: str) -> None:
        self.store, self.as_json, self.debug, self.embedder = store, as_json, debug, embedder
        self.analyzer = analyzer

    def open(self, *, must_exist: bool) -> Any:
        if must_exist and not self.store.exists():
            raise ConfigError(f"no store at {self.store}; ingest something first (ragwright ingest PATH)")
        from ragwright.models.embedders import load_embedder
        from ragwright.rag import Rag
        from ragwright.stores.sqlite import SqliteStore

        store = SqliteStore(self.store, keyword_analyzer=self.analyzer)
        spec = self.embedder or _spec_for(store.embedding_model)
        try:
            return Rag(store, load_embedder(spec))
        except BaseException:
            store.close()
            raise

    def emit(self, payload: dict[str, Any], human: Callable[[], None]) -> None:
        if self.as_json:
            click.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        else:
            human()


def _spec_for(bound: tuple[str, int] | None) -> str:
    """The embedder a store was built with, when the CLI knows it by name; else the default."""
    if bound is not None and bound[0].startswith("wordllama"):
        return "wordllama"
    return "default"


def _parse_filters(pairs: tuple[str, ...]) -> dict[str, Any] | None:
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
def _errors(debug: bool) -> Iterator[None]:
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


def _command(func: F) -> F:
    """Run a command body inside the error handler."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        state: _State = click.get_current_context().obj
        with _errors(state.debug):
            return func(state, *args, **kwargs)

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper  # type: ignore[return-value]


class _Group(click.Group):
    """A click group whose usage errors are one line (``error: …``, exit 2), like every other error."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("error: aborted", err=True)
            sys.exit(1)
        except click.ClickException as exc:
            hint = ""
            if isinstance(exc, click.UsageError) and exc.ctx is not None:
                hint = f" (see: {exc.ctx.command_path} --help)"
            click.echo(f"error: {exc.format_message()}{hint}", err=True)
            sys.exit(exc.exit_code)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--store", type=click.Path(path_type=Path), default=DEFAULT_STORE, show_default=True, help="The store file."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
@click.option("--embedder", default=None, help="default | wordllama | PATH to a local model folder.")
@click.option(
    "--keyword-analyzer",
    "analyzer",
    type=click.Choice(["default", "english"]),
    default="default",
    show_default=True,
    help="BM25 analyzer: Unicode words + CJK bigrams, or English stemming + stop words.",
)
@click.version_option(package_name="ragwright")
@click.pass_context
def main(ctx: click.Context, store: Path, as_json: bool, debug: bool, embedder: str | None, analyzer: str) -> None:
    """ragwright: ingest documents, search them, and ask questions with cited answers."""
    if debug:
        import logging

        logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s: %(message)s")
    ctx.obj = _State(store, as_json, debug, embedder, analyzer)


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--tenant", default=None, help="Tenant of the ingested documents.")
@click.option("--acl", multiple=True, help="ACL group allowed to see them (repeatable; default: public).")
@click.option("--meta", multiple=True, help="key=value metadata for every document (repeatable).")
@_command
def ingest(
    state: _State, paths: tuple[str, ...], tenant: str | None, acl: tuple[str, ...], meta: tuple[str, ...]
) -> None:
    """Ingest files, folders or JSONL/BEIR corpora (unchanged documents are skipped)."""
    from ragwright.sources import open_source

    sources = [open_source(p) for p in paths]  # refuse a bad path before anything is written
    with state.open(must_exist=False) as rag:
        report = _ingest_with_progress(state, rag, sources, tenant, list(acl) or None, _parse_filters(meta))
    state.emit(report.to_dict(), lambda: print_ingest(report))


def _ingest_with_progress(
    state: _State, rag: Any, sources: list[Any], tenant: str | None, acl: list[str] | None, meta: dict[str, Any] | None
) -> Any:
    if state.as_json:
        return rag.ingest(sources, tenant=tenant, acl=acl, metadata=meta)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("ingesting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True
    ) as bar:
        task = bar.add_task("ingest", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return rag.ingest(sources, tenant=tenant, acl=acl, metadata=meta, progress=progress)


@main.command()
@click.argument("query")
@click.option("--top-k", type=int, default=5, show_default=True)
@click.option("--min-score", type=float, default=0.0, show_default=True)
@click.option("--filter", "filters", multiple=True, help="key=value metadata filter (repeatable, AND).")
@click.option(
    "--mode",
    type=click.Choice(list(MODES)),
    default="hybrid",
    show_default=True,
    help="Search arms: dense + BM25 fused with RRF, dense only, or BM25 only.",
)
@_command
def search(state: _State, query: str, top_k: int, min_score: float, filters: tuple[str, ...], mode: str) -> None:
    """Search the store and print the best chunks."""
    from ragwright.options import RetrievalOptions

    options = RetrievalOptions(top_k=top_k, min_score=min_score, metadata_filter=_parse_filters(filters), **MODES[mode])
    with state.open(must_exist=True) as rag:
        results = rag.search(query, options)
    state.emit({"results": [r.to_dict() for r in results]}, lambda: print_results(results))


@main.command()
@click.argument("question")
@click.option("--top-k", type=int, default=5, show_default=True)
@click.option("--min-score", type=float, default=0.0, show_default=True)
@click.option("--filter", "filters", multiple=True, help="key=value metadata filter (repeatable, AND).")
@click.option(
    "--mode",
    type=click.Choice(list(MODES)),
    default="hybrid",
    show_default=True,
    help="Search arms: dense + BM25 fused with RRF, dense only, or BM25 only.",
)
@_command
def ask(state: _State, question: str, top_k: int, min_score: float, filters: tuple[str, ...], mode: str) -> None:
    """Answer a question from the store, with [Source N] citations."""
    from ragwright.options import RagOptions

    if mode == "bm25":
        raise ConfigError("ask needs the dense arm: use --mode hybrid or --mode dense")
    options = RagOptions(
        top_k=top_k, min_score=min_score, metadata_filter=_parse_filters(filters), use_hybrid_search=mode == "hybrid"
    )
    with state.open(must_exist=True) as rag:
        response = rag.ask(question, options)
    state.emit(response.to_dict(), lambda: print_answer(response))


@main.command()
@_command
def status(state: _State) -> None:
    """Registry counts: indexed, failed and deleted documents, chunks, embedding model."""
    with state.open(must_exist=True) as rag:
        info = rag.status()
    info["store"] = str(state.store)

    def human() -> None:
        click.echo(
            f"store {info['store']}: {info['indexed']} documents indexed, {info['chunks']} chunks, "
            f"{info['failed']} failed, {info['deleted']} deleted; model {info['embedding_model']}"
        )
        for f in info["failed_documents"]:
            click.echo(f"  failed: {f['document']} [{f['stage']}] {f['reason']}")

    state.emit(info, human)


@main.command()
@click.argument("document_id")
@_command
def remove(state: _State, document_id: str) -> None:
    """Remove a document and all its chunks."""
    with state.open(must_exist=True) as rag:
        removed = rag.remove(document_id)
    state.emit(
        {"document_id": document_id, "chunks_removed": removed},
        lambda: click.echo(f"removed {document_id} ({removed} chunks)"),
    )


@main.command("parse")
@click.argument("file", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--password", default=None, help="Password of an encrypted PDF.")
@click.option("--no-ocr", is_flag=True, help="Do not OCR image-only pages.")
@_command
def parse_command(state: _State, file: Path, password: str | None, no_ocr: bool) -> None:
    """Parse one file and print its element tree (--json: the whole document)."""
    from ragwright.options import ParseOptions
    from ragwright.parse import parse_bytes

    options = ParseOptions(pdf_password=password, ocr=not no_ocr)
    doc = parse_bytes(
        file.resolve().as_posix(),
        file.read_bytes(),
        name_hint=file.name,
        source=file.resolve().as_uri(),
        options=options,
    )
    state.emit(doc.to_dict(), lambda: print_document(doc))


@main.command("eval")
@click.argument("dataset", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--config", "configs", multiple=True, help="PRESET or PRESET+key=value… (repeatable; default dense).")
@click.option("--split", default="test", show_default=True, help="qrels split of a BEIR dataset.")
@click.option("--limit", type=int, default=None, help="Evaluate only the first N judged queries.")
@click.option(
    "--report",
    "report_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Write report.md / report.html / report.json with plots here.",
)
@click.option(
    "--eval-store",
    type=click.Path(path_type=Path),
    default=None,
    help="Store for the dataset's corpus (default: a cache store reused across runs).",
)
@click.option(
    "--base",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder that a RAG set's corpus paths are relative to (default: ../shared beside the set's repo).",
)
@_command
def eval_command(
    state: _State,
    dataset: Path,
    configs: tuple[str, ...],
    split: str,
    limit: int | None,
    report_dir: Path | None,
    eval_store: Path | None,
    base: Path | None,
) -> None:
    """Evaluate retrieval configurations on a BEIR dataset (or ask() on a RAG benchmark set)."""
    from ragwright.eval.commands import is_rag_set, run_beir_eval, run_rag_eval
    from ragwright.models.embedders import load_embedder

    embedder = load_embedder(state.embedder or "default")
    if is_rag_set(dataset):
        payload, text = run_rag_eval(dataset, embedder=embedder, base=base or _default_base(dataset))
    else:
        payload, text = run_beir_eval(
            dataset,
            configs,
            embedder=embedder,
            split=split,
            store_path=eval_store,
            limit=limit,
            report_dir=report_dir,
            keyword_analyzer=state.analyzer,
        )
    state.emit(payload, lambda: click.echo(text + (f"\nreport: {payload['report']}" if "report" in payload else "")))


def _default_base(dataset: Path) -> Path:
    """``../shared`` next to the repository that holds *dataset*, when there is one."""
    for parent in dataset.resolve().parents:
        if (parent.parent / "shared").is_dir():
            return parent.parent / "shared"
    return dataset


QUICKSTART_QUESTIONS = (
    "How long do customers have to request a refund?",
    "Which encryption protects customer data at rest?",
)


@main.command()
@_command
def quickstart(state: _State) -> None:
    """Ingest the bundled sample corpus into a temporary store and ask two questions."""
    from ragwright.models.embedders import load_embedder
    from ragwright.rag import Rag
    from ragwright.sources import FolderSource
    from ragwright.stores.sqlite import SqliteStore

    sample = Path(__file__).parent / "samples" / "quickstart"
    embedder = load_embedder(state.embedder or "default")
    with (
        tempfile.TemporaryDirectory(prefix="ragwright-quickstart-") as tmp,
        Rag(SqliteStore(Path(tmp) / "store.db"), embedder) as rag,
    ):
        report = rag.ingest(FolderSource(sample, include=("*.md",)))
        answers = [(q, rag.ask(q)) for q in QUICKSTART_QUESTIONS]
    payload = {
        "ingest": report.to_dict(),
        "answers": [{"question": q, **a.to_dict()} for q, a in answers],
    }

    def human() -> None:
        click.echo(f"Ingested {report.added} sample documents ({report.chunks} chunks) in {report.seconds:.1f}s.\n")
        for q, a in answers:
            click.echo(f"Q: {q}")
            click.echo("A: ", nl=False)
            print_answer(a)
            click.echo()

    state.emit(payload, human)


if __name__ == "__main__":  # pragma: no cover
    main()
