"""The ``ragwright`` command.

Every command takes ``--json`` and then prints one JSON document with stable keys (see README).
Errors print one line (``error: …``) and exit with status 2; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from ragwright.cli.common import State, caller, command, parse_filters, reader_gone, warn_unknown_filter_keys
from ragwright.cli.config import config_group, switch_flags
from ragwright.cli.globals import accept_after, top_level
from ragwright.cli.output import (
    flat,
    one_line,
    print_prompt,
    print_results,
    print_sources,
    safe_text,
)
from ragwright.errors import ConfigError


def retrieval_flags(func: Callable[..., Any]) -> Callable[..., Any]:
    """The per-call flags ``search`` and ``ask`` share besides the switches: --filter, --tenant, --groups."""
    for option in reversed(
        (
            click.option("--filter", "filters", multiple=True, help="key=value metadata filter (repeatable, AND)."),
            click.option(
                "--tenant",
                default=None,
                help="The caller's tenant (default: [identity] in ragwright.toml, else 'default').",
            ),
            click.option("--groups", default=None, help="The caller's comma-separated ACL groups."),
        )
    ):
        func = option(func)
    return func


class _Group(click.Group):
    """A click group whose usage errors are one line (``error: …``, exit 2), like every other error."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except BrokenPipeError:
            reader_gone()
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
@top_level
@click.version_option(package_name="ragwright")
@click.pass_context
def main(
    ctx: click.Context,
    store: str,
    as_json: bool,
    debug: bool,
    embedder: str | None,
    analyzer: str,
    reranker: str | None,
    llm: str | None,
    sparse: str | None,
    config: str | None,
) -> None:
    """ragwright: ingest documents, search them, and ask questions with cited answers.

    The options below are global: each may also come after the command
    (`ragwright search "x" --json`, `ragwright ingest docs/ --store s.db`).
    """
    ctx.obj = State(store, as_json, debug, embedder, analyzer, reranker, llm, sparse, config)


@main.command()
@click.argument("query")
@retrieval_flags
@click.option(
    "--hierarchical",
    is_flag=True,
    help="Documents first (by their summaries), then chunks inside the best ones (ingest --hierarchy).",
)
@switch_flags("search")
@command
def search(
    state: State,
    query: str,
    filters: tuple[str, ...],
    tenant: str | None,
    groups: str | None,
    hierarchical: bool,
    switches: dict[str, Any],
) -> None:
    """Search the store and print the best chunks, as the caller --tenant/--groups (public content otherwise).

    The switches (--hyde, --rerank, --tags, --time-decay, --mmr …) turn capabilities on or off for this
    call, over ragwright.toml; `ragwright config show` with the same flags shows what they set."""
    settings = state.effective(switches)
    options = settings.retrieval
    if filters:
        options = options.merged(metadata_filter=parse_filters(filters))
    if hierarchical:  # --hierarchical: documents by summary first, then chunks inside the best ones
        from ragwright.rag_hierarchy import hierarchical_search

        with state.open(must_exist=True, settings=settings) as rag:
            ranked = hierarchical_search(rag, query, options, identity=caller(tenant, groups))
        state.emit(ranked.to_dict(), lambda: print_results(ranked.results))
        return
    with state.open(must_exist=True, settings=settings) as rag:
        warn_unknown_filter_keys(rag, options.metadata_filter)
        extra: dict[str, Any] = {}
        if settings.federation is not None:  # --collections / --federate / [federation]
            from ragwright.rag_federation import failure_notes, open_federation

            with open_federation(rag, settings.federation) as fed:
                found = fed.search(query, options, identity=caller(tenant, groups))
            for note in failure_notes(found.failures):
                click.echo(f"warning: {note}", err=True)
            results, extra = list(found), {"federation": found.summary()}
        else:
            results = rag.search(query, options, identity=caller(tenant, groups))
    state.emit({"results": [r.to_dict() for r in results], **extra}, lambda: print_results(results))


@main.command()
@click.argument("question")
@retrieval_flags
@click.option("--show-prompt", is_flag=True, help="Print the exact messages sent to the chat model.")
@click.option(
    "--hierarchical",
    is_flag=True,
    help="Answer from documents found by their summaries, then chunks inside them (ingest --hierarchy).",
)
@click.option(
    "--route",
    "route_mode",
    type=click.Choice(["auto", "llm", "off"]),
    default=None,
    help="Route the question (no retrieval, hybrid, hierarchical, graph, agentic): auto (rules), llm, off.",
)
@click.option(
    "--graph",
    "graph_mode",
    type=click.Choice(["local", "global"]),
    default=None,
    help="Answer from the entity graph (ingest --graph): local (entities, hops, evidence) or global (themes).",
)
@click.option(
    "--session",
    default=None,
    help="Continue the named conversation kept in the store (per identity): follow-ups understood (see `chat`).",
)
@switch_flags("ask")
@command
def ask(
    state: State,
    question: str,
    filters: tuple[str, ...],
    tenant: str | None,
    groups: str | None,
    show_prompt: bool,
    hierarchical: bool,
    route_mode: str | None,
    graph_mode: str | None,
    session: str | None,
    switches: dict[str, Any],
) -> None:
    """Answer a question from the store, with [Source N] citations (streamed with --llm).

    Takes the switches of `search` (--hyde, --rerank, --parents, --crag …) and --verify, --corrective,
    --answer-mode, --system-prompt."""
    settings = state.effective(switches)
    if settings.mode == "bm25":
        raise ConfigError("ask needs the dense arm: use --mode hybrid or --mode dense")
    options = settings.answers
    if filters:
        options = options.merged(metadata_filter=parse_filters(filters))
    prompts: list[Any] = []
    observer = (prompts.append if state.as_json else print_prompt) if show_prompt else None
    route = route_mode or (settings.route.mode if settings.route is not None else None)
    if route not in (None, "off"):  # --route auto|llm / [route]: ragwright.rag_route decides, says why
        if graph_mode is not None:
            raise ConfigError("--route and --graph are two ways to choose the answer path: give one")
        from dataclasses import replace

        from ragwright.rag_route import route_ask
        from ragwright.route import RouterOptions

        with state.open(must_exist=True, prompt_observer=observer, settings=settings) as rag:
            warn_unknown_filter_keys(rag, options.metadata_filter)
            router = replace(settings.route or RouterOptions(), mode=route)
            routed = route_ask(rag, question, identity=caller(tenant, groups), options=router, answer_options=options)
        if not state.as_json:
            click.echo(safe_text(routed.answer))
            click.echo(f"route: {routed.route} ({flat(routed.route_reason or '')})", err=True)
        payload = routed.to_dict() | ({"prompts": [[m.to_dict() for m in p] for p in prompts]} if show_prompt else {})
        state.emit(payload, lambda: print_sources(routed, show_prompt=show_prompt))
        return
    with state.open(must_exist=True, prompt_observer=observer, settings=settings) as rag:
        warn_unknown_filter_keys(rag, options.metadata_filter)
        if settings.agent is not None:  # --agent / [agent]
            if graph_mode is not None:
                raise ConfigError("--agent and --graph are two ways to answer: give one")
            from ragwright.rag_agent import enable_agent

            agent = enable_agent(rag, settings.agent)
            response = agent.ask(question, identity=caller(tenant, groups), rag_options=options)
            if not state.as_json:
                click.echo(safe_text(response.answer))
        elif graph_mode is not None:
            from ragwright.rag_graph import enable_graph

            graph = enable_graph(rag)
            response = graph.ask(question, mode=graph_mode, identity=caller(tenant, groups))
            if not state.as_json:
                click.echo(safe_text(response.answer))
        elif hierarchical:  # --hierarchical: documents by summary first, then chunks inside them
            from ragwright.rag_hierarchy import enable_hierarchy

            response = enable_hierarchy(rag).ask(question, identity=caller(tenant, groups), options=options)
            if not state.as_json:
                click.echo(safe_text(response.answer))
        elif session is not None:
            from ragwright.cli.memory import ask_in_session

            response = ask_in_session(rag, question, options, caller(tenant, groups), session)
            if not state.as_json:
                click.echo(safe_text(response.answer))
        elif settings.federation is not None:  # --collections / --federate / [federation]
            from ragwright.rag_federation import failure_notes, open_federation

            with open_federation(rag, settings.federation) as fed:
                answered = fed.ask(question, options, identity=caller(tenant, groups))
            for note in failure_notes(answered.failures):
                click.echo(f"warning: {note}", err=True)
            response = answered
            if not state.as_json:
                click.echo(safe_text(response.answer))
        elif state.as_json:
            response = rag.ask(question, options, identity=caller(tenant, groups))
        else:
            stream = rag.ask_stream(question, options, identity=caller(tenant, groups))
            for delta in stream:
                click.echo(safe_text(delta), nl=False)
            click.echo()
            response = stream.response
    payload = response.to_dict()
    if show_prompt:
        payload["prompts"] = [[m.to_dict() for m in messages] for messages in prompts]
    state.emit(payload, lambda: print_sources(response, show_prompt=show_prompt))


@main.command()
@click.option("--model", "model", default=None, help="List the documents embedded with this model.")
@click.option(
    "--documents",
    "list_status",
    type=click.Choice(["indexed", "failed", "deleted"]),
    default=None,
    help="List the documents with this status.",
)
@click.option("--check", is_flag=True, help="Check the store's integrity (exit 1 when a problem is found).")
@command
def status(state: State, model: str | None, list_status: str | None, check: bool) -> None:
    """Registry counts: indexed, failed and deleted documents, chunks, embedding model."""
    with state.open(must_exist=True) as rag:
        info = rag.status()
        if model is not None or list_status is not None:
            info["matching_documents"] = [r.to_dict() for r in rag.documents(status=list_status, embedding_model=model)]
        if check:
            info["problems"] = rag.check()
    info["store"] = str(state.store)

    def human() -> None:
        click.echo(
            f"store {info['store']}: {info['indexed']} documents indexed, {info['chunks']} chunks, "
            f"{info['failed']} failed, {info['deleted']} deleted; model {info['embedding_model']}, "
            f"keyword analyzer {info['keyword_analyzer']}"
        )
        for f in info["failed_documents"]:
            access = _access(f["tenant"], f["acl"])
            click.echo(f"  failed: {one_line(f['document'])} [{f['stage']}] {flat(f['reason'])} ({one_line(access)})")
        listed = {f["document"] for f in info["failed_documents"]}
        for r in info.get("matching_documents", []):
            if r["status"] == "failed" and r["document_id"] in listed:
                continue  # listed above, with its stage and reason: each failure once
            click.echo(
                f"  {r['status']}: {one_line(r['document_id'])} ({r['chunk_count']} chunks, {r['embedding_model']})"
            )
        if check:
            click.echo("integrity: " + ("ok" if not info["problems"] else flat("; ".join(info["problems"]))))

    state.emit(info, human)
    if check and info["problems"]:
        sys.exit(1)


def _access(tenant: str, acl: list[str]) -> str:
    who = "public" if "*" in acl else ("groups " + ",".join(acl) if acl else "visible to nobody")
    return f"tenant {tenant}, {who}"


@main.command()
@click.argument("document_id")
@click.option("--group", "groups", multiple=True, help="Group allowed to see it (repeatable).")
@click.option("--public", is_flag=True, help="Visible to everyone in its tenant.")
@click.option("--tenant", default=None, help="Move it to this tenant.")
@command
def acl(state: State, document_id: str, groups: tuple[str, ...], public: bool, tenant: str | None) -> None:
    """Change who may see a document, without re-embedding it."""
    if public == bool(groups):
        raise ConfigError("give either --public or at least one --group")
    with state.open(must_exist=True) as rag:
        updated = rag.update_acl(document_id, groups=None if public else list(groups), tenant=tenant)
    state.emit(
        {"document_id": document_id, "chunks_updated": updated},
        lambda: click.echo(f"{one_line(document_id)}: access updated on {updated} chunks"),
    )


@main.command()
@click.argument("document_id")
@command
def remove(state: State, document_id: str) -> None:
    """Remove a document and all its chunks."""
    with state.open(must_exist=True) as rag:
        removed = rag.remove(document_id)
    state.emit(
        {"document_id": document_id, "chunks_removed": removed},
        lambda: click.echo(f"removed {one_line(document_id)} ({removed} chunks)"),
    )


from ragwright.cli.ingest import ingest  # noqa: E402  (registered below)
from ragwright.cli.tools import eval_command, parse_command, quickstart  # noqa: E402

main.add_command(ingest)
main.add_command(parse_command)
main.add_command(eval_command)
main.add_command(quickstart)
main.add_command(config_group)
main.add_command(__import__("ragwright.cli.reindex", fromlist=["reindex_command"]).reindex_command)
main.add_command(__import__("ragwright.cli.server", fromlist=["serve"]).serve)
main.add_command(__import__("ragwright.cli.worker", fromlist=["worker"]).worker)
main.add_command(__import__("ragwright.cli.mcp", fromlist=["mcp_command"]).mcp_command)
main.add_command(__import__("ragwright.cli.graph", fromlist=["graph_group"]).graph_group)
main.add_command(__import__("ragwright.cli.memory", fromlist=["chat"]).chat)
main.add_command(__import__("ragwright.cli.memory", fromlist=["memory_group"]).memory_group)
for _command in main.commands.values():
    accept_after(_command)

if __name__ == "__main__":  # pragma: no cover
    main()
