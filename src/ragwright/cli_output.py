"""Human-readable output of the ``ragwright`` command (``--json`` output is built in ``cli.py``)."""

from __future__ import annotations

from typing import Any

import click


def print_ingest(report: Any) -> None:
    click.echo(
        f"added {report.added}, updated {report.updated}, unchanged {report.unchanged}, "
        f"deleted {report.deleted}, failed {len(report.failed)}; {report.chunks} chunks in {report.seconds:.1f}s"
    )
    for f in report.failed:
        click.echo(f"  failed: {f.document} [{f.stage}] {f.reason}")


def print_results(results: list[Any]) -> None:
    if not results:
        click.echo("no results")
    for n, r in enumerate(results, start=1):
        where = f" > {r.chunk.section}" if r.chunk.section else ""
        evidence = ", ".join(f"{arm} #{hit.rank} {hit.score:.3f}" for arm, hit in r.arms.items())
        score = f"{r.fusion} {r.score:.4f}" if r.fusion else f"{r.score:.3f}"
        click.echo(f"{n}. [{score}; {evidence}] {r.document_id}{where}")
        click.echo("   " + " ".join(r.chunk.text.split())[:300])


def print_answer(response: Any) -> None:
    click.echo(response.answer)
    cited = {c.source for c in response.citations}
    for n, r in enumerate(response.sources, start=1):
        if n in cited or response.declined:
            where = f" > {r.chunk.section}" if r.chunk.section else ""
            click.echo(f"  [Source {n}] {r.document_id}{where} ({r.score:.3f})")


def print_sources(response: Any, *, show_prompt: bool = False) -> None:
    """After a streamed answer: its outcome, then every source with its score (cited ones marked ``*``)."""
    if show_prompt and response.mode != "llm":
        click.echo("(extractive answer: no model prompt; configure one with --llm)")
    if response.declined:
        click.echo(f"(declined: {response.decline_reason or 'not supported by the sources'})")
    if response.invalid_citations:
        click.echo(f"(warning: cited sources that were not given: {list(response.invalid_citations)})")
    if response.uncited:
        click.echo("(warning: the answer cites no source)")
    cited = {c.source for c in response.citations}
    if response.sources:
        click.echo("sources:")
    for n, r in enumerate(response.sources, start=1):
        where = f" > {r.chunk.section}" if r.chunk.section else ""
        mark = "*" if n in cited else " "
        click.echo(f" {mark}[Source {n}] {r.document_id}{where} ({r.score:.3f})")


def print_prompt(messages: Any) -> None:
    """The prompt observer of ``ask --show-prompt``: the exact messages, before the answer streams."""
    from ragwright.generate.prompt import render

    click.echo("--- prompt ---")
    click.echo(render(messages))
    click.echo("--- answer ---")


def print_document(doc: Any, indent: str = "") -> None:
    """The element tree: kind, level, page and the first characters of each element."""
    meta = ", ".join(f"{k}={v!r}" for k, v in doc.metadata.items() if isinstance(v, str | int | float))
    click.echo(f"{indent}{doc.id}  title={doc.title!r}  {len(doc.elements)} elements" + (f"  [{meta}]" if meta else ""))
    for w in doc.warnings:
        click.echo(f"{indent}  warning: {w}")
    for e in doc.elements:
        level = f" h{e.level}" if e.kind.value == "heading" else (f" l{e.level}" if e.level else "")
        page = f" p{e.page}" if e.page is not None else ""
        text = " ".join(e.text.split())
        click.echo(f"{indent}  {e.kind.value}{level}{page}: {text[:100]}{'…' if len(text) > 100 else ''}")
    for child in doc.children:
        click.echo(f"{indent}  child:")
        print_document(child, indent + "    ")
