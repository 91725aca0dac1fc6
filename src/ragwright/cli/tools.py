"""The tool commands of ``ragwright``: parse, eval, quickstart."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from ragwright.cli.common import State, command
from ragwright.cli.output import print_answer, print_document


@click.command("parse")
@click.argument("file", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--password", default=None, help="Password of an encrypted PDF.")
@click.option("--no-ocr", is_flag=True, help="Do not OCR image-only pages.")
@command
def parse_command(state: State, file: Path, password: str | None, no_ocr: bool) -> None:
    """Parse one file and print its element tree (--json: the whole document)."""
    from ragwright.options import ParseOptions
    from ragwright.parse import parse_bytes
    from ragwright.sources.base import too_large

    options = ParseOptions(pdf_password=password, ocr=not no_ocr)
    if file.stat().st_size > options.max_file_bytes:  # refused before a byte is read
        raise too_large(file.stat().st_size, options.max_file_bytes)
    doc = parse_bytes(
        file.resolve().as_posix(),
        file.read_bytes(),
        name_hint=file.name,
        source=file.resolve().as_uri(),
        options=options,
    )
    state.emit(doc.to_dict(), lambda: print_document(doc))


@click.command("eval")
@click.argument("dataset", type=click.Path(path_type=Path, exists=True))
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
@click.option(
    "--judge", is_flag=True, help="QA.jsonl: also grade each answer with the --llm chat model (Cohen's kappa)."
)
@command
def eval_command(
    state: State,
    dataset: Path,
    configs: tuple[str, ...],
    split: str,
    limit: int | None,
    report_dir: Path | None,
    eval_store: Path | None,
    base: Path | None,
    judge: bool,
) -> None:
    """Evaluate retrieval configurations on a BEIR dataset, ask() on a RAG benchmark set, or ask() on the
    store's documents for a QA.jsonl file of {question, answers[], unanswerable} records."""
    from ragwright.eval.commands import is_rag_set, run_beir_eval, run_qa_eval, run_rag_eval
    from ragwright.models.embedders import load_embedder

    if dataset.is_file():
        payload, text = run_qa_eval(state, dataset, limit=limit, judge=judge)
        state.emit(payload, lambda: click.echo(text))
        return
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


@click.command()
@command
def quickstart(state: State) -> None:
    """Ingest the bundled sample corpus into a temporary store and ask two questions."""
    from ragwright.models.embedders import load_embedder
    from ragwright.rag import Rag
    from ragwright.sources import FolderSource
    from ragwright.stores.sqlite import SqliteStore

    sample = Path(__file__).parents[1] / "samples" / "quickstart"  # ragwright/samples
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
