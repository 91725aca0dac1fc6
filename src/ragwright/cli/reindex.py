"""``ragwright reindex``: blue/green rebuild with a new embedder or chunker, gated, alias switched."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ragwright.cli.common import State, command
from ragwright.cli.output import flat
from ragwright.errors import ConfigError


@click.command("reindex")
@click.option("--embedder", "new_embedder", default=None, help="New embedder: default | wordllama | PATH.")
@click.option(
    "--chunker",
    type=click.Choice(["structural", "recursive", "semantic"]),
    default=None,
    help="New chunking strategy.",
)
@click.option("--max-tokens", type=int, default=None, help="New chunk budget in cl100k tokens.")
@click.option(
    "--eval",
    "eval_dataset",
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    default=None,
    help="BEIR dataset to evaluate the new collection on before switching.",
)
@click.option("--min-ndcg", type=float, default=None, help="Switch only if nDCG@10 reaches this.")
@click.option("--max-drop", type=float, default=None, help="Switch only if nDCG@10 is at most this below the live.")
@click.option(
    "--eval-config", default="hybrid", show_default=True, help="Retrieval config to evaluate (eval --config)."
)
@click.option("--eval-limit", type=int, default=None, help="Evaluate only the first N judged queries.")
@click.option("--drop-old", is_flag=True, help="Drop the replaced collection(s) once the switch succeeded.")
@click.option("--list", "list_only", is_flag=True, help="List the store's collections and exit.")
@command
def reindex_command(
    state: State,
    new_embedder: str | None,
    chunker: str | None,
    max_tokens: int | None,
    eval_dataset: Path | None,
    min_ndcg: float | None,
    max_drop: float | None,
    eval_config: str,
    eval_limit: int | None,
    drop_old: bool,
    list_only: bool,
) -> None:
    """Rebuild the index beside the live one (new --embedder / --chunker), optionally evaluate it, and
    switch only on success; queries keep working throughout. Exit status 1 when rejected."""
    from ragwright.ingest import EvalGate

    rebuild = new_embedder is not None or chunker is not None or max_tokens is not None
    if eval_dataset is None and (min_ndcg is not None or max_drop is not None):
        raise ConfigError("--min-ndcg / --max-drop need --eval DATASET")
    if eval_dataset is not None and not rebuild:
        raise ConfigError("--eval gates a reindex: give --embedder and/or --chunker / --max-tokens")
    if not (rebuild or drop_old or list_only):
        raise ConfigError("give --embedder and/or --chunker / --max-tokens (or --drop-old, --list)")
    gate = (
        EvalGate(eval_dataset, min_ndcg=min_ndcg, max_drop=max_drop, config=eval_config, limit=eval_limit)
        if eval_dataset is not None
        else None
    )
    with state.open(must_exist=True) as rag:
        payload: dict[str, Any] = {}
        if rebuild and not list_only:
            report = rag.reindex(_embedder(new_embedder), _chunking(rag, chunker, max_tokens), gate, drop_old=drop_old)
            payload = report.to_dict()
        elif drop_old and not list_only:
            payload = {"dropped": [c["name"] for c in rag.collections() if not c["live"]]}
            for name in payload["dropped"]:
                rag.drop_collection(name)
        payload["collections"] = rag.collections()
    state.emit(payload, lambda: _print(payload))
    if payload.get("switched") is False:
        sys.exit(1)


def _embedder(spec: str | None) -> Any:
    if spec is None:
        return None
    from ragwright.models.embedders import load_embedder

    return load_embedder(spec)


def _chunking(rag: Any, strategy: str | None, max_tokens: int | None) -> Any:
    if strategy is None and max_tokens is None:
        return None
    from ragwright.options import ChunkingOptions

    current = getattr(rag.chunker, "options", None) or ChunkingOptions()
    changes: dict[str, Any] = {}
    if strategy is not None:
        changes["strategy"] = strategy
    if max_tokens is not None:
        changes["max_tokens"] = max_tokens
    return current.merged(**changes)


def _print(payload: dict[str, Any]) -> None:
    if "switched" in payload:
        build = payload["build"]
        if payload["switched"]:
            click.echo(
                f"reindexed into {payload['collection']} ({payload['embedding_model']}): {build['added']} documents, "
                f"{build['chunks']} chunks in {payload['seconds']:.1f}s; live alias switched from {payload['previous']}"
            )
        else:
            click.echo(f"reindex rejected: {flat(payload['reason'])}", err=True)
        if payload.get("evaluation"):
            ev = payload["evaluation"]
            live = f" (live {ev['live_ndcg@10']:.4f})" if "live_ndcg@10" in ev else ""
            click.echo(f"  evaluation {ev['config']} on {ev['dataset']}: nDCG@10 {ev['ndcg@10']:.4f}{live}")
    for name in payload.get("dropped", []):
        click.echo(f"  dropped collection {name}")
    for c in payload["collections"]:
        mark = "*" if c.get("live") else " "
        click.echo(
            f"{mark} {c['name']}: {c.get('documents', '?')} documents, {c.get('chunks', '?')} chunks, "
            f"model {c.get('embedding_model')}"
        )
