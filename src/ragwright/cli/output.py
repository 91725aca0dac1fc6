"""Human-readable output of the ``ragwright`` command (``--json`` output is built by each command).

Every value that comes from a document or a source (ids, titles, sections, text, failure reasons) is
printed through :func:`one_line` (or :func:`safe_text` for answers): a raw newline, carriage return or
terminal escape in a file name, a heading or a document's text never starts a line of its own or
drives the terminal, so it cannot forge a result, a source line or a status.
"""

from __future__ import annotations

import re
from typing import Any

import click

#: Line breaks and separators of every kind, C0/C1 controls, and bidi overrides (they reorder a line).
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return _NAMED.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")


def one_line(value: object) -> str:
    """*value* as one printable line: every control, line separator and bidi override is escaped
    (``\\n``, ``\\x1b``, ``\\u2028``), so an id stays recognisable and never breaks the output."""
    return _UNSAFE.sub(_escape, str(value))


def flat(text: object) -> str:
    """Document text on one line: whitespace (newlines included) collapsed, other controls escaped."""
    return one_line(" ".join(str(text).split()))


def safe_text(text: object) -> str:
    """An answer as printed: newlines kept (paragraphs, lists), every other control escaped."""
    return "\n".join(one_line(line) for line in str(text).replace("\r\n", "\n").split("\n"))


def print_ingest(report: Any) -> None:
    """Each failed and skipped document with its reason, then the one-line summary (last, so a long list
    of failures never hides it)."""
    for f in report.failed:
        click.echo(f"  failed: {one_line(f.document)} [{f.stage}] {flat(f.reason)}")
    for f in report.skipped:
        click.echo(f"  skipped: {one_line(f.document)}: {flat(f.reason)}")
    access = f", access updated {report.access_updated}" if report.access_updated else ""
    click.echo(
        f"added {report.added}, updated {report.updated}, unchanged {report.unchanged}{access}, "
        f"deleted {report.deleted}, failed {len(report.failed)}; {report.chunks} chunks in {report.seconds:.1f}s"
    )


def scanned_note(result: Any) -> str:
    """ " — from a scanned page (OCR …)" for a result whose text OCR read (ingest.scanned), else ""."""
    meta = result.chunk.metadata
    if meta.get("scanned") is not True:
        return ""
    confidence = meta.get("ocr_confidence")
    detail = f"OCR, confidence {float(confidence):.2f}" if isinstance(confidence, int | float) else "OCR"
    return f" — from a scanned page ({detail})"


def print_results(results: list[Any]) -> None:
    if not results:
        click.echo("no results")
    for n, r in enumerate(results, start=1):
        where = f" > {flat(r.chunk.section)}" if r.chunk.section else ""
        evidence = ", ".join(f"{arm} #{hit.rank} {hit.score:.3f}" for arm, hit in r.arms.items())
        score = f"{r.fusion} {r.score:.4f}" if r.fusion else f"{r.score:.3f}"
        source = f"{r.source}: " if getattr(r, "source", None) else ""  # a federated search's source
        click.echo(f"{n}. [{score}; {evidence}] {source}{one_line(r.document_id)}{where}{scanned_note(r)}")
        click.echo("   " + flat(r.chunk.text)[:300])


def print_answer(response: Any) -> None:
    click.echo(safe_text(response.answer))
    cited = {c.source for c in response.citations}
    for n, r in enumerate(response.sources, start=1):
        if n in cited or response.declined:
            where = f" > {flat(r.chunk.section)}" if r.chunk.section else ""
            click.echo(f"  [Source {n}] {one_line(r.document_id)}{where} ({r.score:.3f}){scanned_note(r)}")


def print_sources(response: Any, *, show_prompt: bool = False) -> None:
    """After a streamed answer: its outcome, then every source with its score (cited ones marked ``*``)."""
    if show_prompt and response.mode != "llm":
        click.echo("(extractive answer: no model prompt; configure one with --llm)")
    if response.declined:
        click.echo(f"(declined: {flat(response.decline_reason or 'not supported by the sources')})")
    if response.invalid_citations:
        click.echo(f"(warning: cited sources that were not given: {list(response.invalid_citations)})")
    if response.uncited:
        click.echo("(warning: the answer cites no source)")
    cited = {c.source for c in response.citations}
    if response.sources:
        click.echo("sources:")
    for n, r in enumerate(response.sources, start=1):
        where = f" > {flat(r.chunk.section)}" if r.chunk.section else ""
        mark = "*" if n in cited else " "
        click.echo(f" {mark}[Source {n}] {one_line(r.document_id)}{where} ({r.score:.3f}){scanned_note(r)}")


def print_prompt(messages: Any) -> None:
    """The prompt observer of ``ask --show-prompt``: the exact messages, before the answer streams."""
    from ragwright.generate.prompt import render

    click.echo("--- prompt ---")
    click.echo(safe_text(render(messages)))
    click.echo("--- answer ---")


def print_document(doc: Any, indent: str = "") -> None:
    """The element tree: kind, level, page and the first characters of each element."""
    meta = ", ".join(f"{k}={v!r}" for k, v in doc.metadata.items() if isinstance(v, str | int | float))
    head = f"{one_line(doc.id)}  title={doc.title!r}  {len(doc.elements)} elements" + (f"  [{meta}]" if meta else "")
    click.echo(f"{indent}{one_line(head)}")
    for w in doc.warnings:
        click.echo(f"{indent}  warning: {flat(w)}")
    for e in doc.elements:
        level = f" h{e.level}" if e.kind.value == "heading" else (f" l{e.level}" if e.level else "")
        page = f" p{e.page}" if e.page is not None else ""
        text = flat(e.text)
        click.echo(f"{indent}  {e.kind.value}{level}{page}: {text[:100]}{'…' if len(text) > 100 else ''}")
    for child in doc.children:
        click.echo(f"{indent}  child:")
        print_document(child, indent + "    ")
