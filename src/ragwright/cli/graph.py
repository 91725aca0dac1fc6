"""``ragwright graph``: inspect the entity graph and search it (GraphRAG, issue 24).

``ragwright ingest --graph`` builds it (and every later ingestion keeps it in step);
``ragwright ask --graph local|global`` answers from it; ``ragwright graph show ENTITY`` shows one
entity as the caller (--tenant/--groups) may see it — an entity they may see no mention of is
reported as not found, never as hidden.
"""

from __future__ import annotations

import click

from ragwright.cli.common import State, caller, command
from ragwright.cli.output import one_line


@click.group("graph")
def graph_group() -> None:
    """The entity graph: show an entity, graph statistics."""


@graph_group.command("show")
@click.argument("entity")
@click.option("--tenant", default=None, help="Tenant of the caller (default: the configured identity).")
@click.option("--groups", default=None, help="Comma-separated groups of the caller.")
@command
def show(state: State, entity: str, tenant: str | None, groups: str | None) -> None:
    """An entity: its name, type, the chunks mentioning it and its relations with their evidence."""
    from ragwright.rag_graph import enable_graph

    with state.open(must_exist=True) as rag:
        found, relations = enable_graph(rag).show(entity, identity=caller(tenant, groups))
    if found is None:
        state.emit({"entity": None}, lambda: click.echo(f"no entity {one_line(entity)} in what you may see"))
        return
    payload = {
        "entity": {"name": found.name, "type": found.type, "chunk_ids": list(found.chunk_ids)},
        "relations": [
            {"source": r.source, "type": r.type, "target": r.target, "chunk_id": r.chunk_id, "evidence": r.evidence}
            for r in relations
        ],
    }

    def human() -> None:
        click.echo(f"{one_line(found.name)} ({found.type}), mentioned in {len(found.chunk_ids)} chunks")
        for r in relations:
            click.echo(
                f'  {one_line(r.source)} —{r.type}→ {one_line(r.target)}: "{one_line(r.evidence)}" [{r.chunk_id}]'
            )

    state.emit(payload, human)


@graph_group.command("stats")
@command
def stats(state: State) -> None:
    """Rows in the graph's tables (documents, mentions, relations, aliases, summaries)."""
    from ragwright.rag_graph import enable_graph

    with state.open(must_exist=True) as rag:
        info = enable_graph(rag).index.stats()
    state.emit(info, lambda: click.echo(", ".join(f"{k} {v}" for k, v in info.items())))
