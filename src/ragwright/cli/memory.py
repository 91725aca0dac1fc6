"""``ragwright chat`` and ``ragwright memory``: conversations with memory (issue 25 item 6).

``ragwright chat`` reads questions from stdin, one per line, until EOF (``/reset`` starts over), and
answers each in one conversation: follow-ups are condensed with the history, the history is kept to
``[memory] budget_tokens`` (cl100k). ``--session NAME`` keeps the conversation in the store, per
identity, so a later ``ragwright chat --session NAME`` — or ``ragwright ask --session NAME "…"`` —
continues it. ``ragwright memory sessions`` lists the caller's sessions; ``ragwright memory forget``
forgets one session (``--session``) or everything the caller has in memory.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import click

from ragwright.cli.common import State, caller, command
from ragwright.cli.output import flat, one_line, print_sources, safe_text


def identity(state: State, tenant: str | None, groups: str | None, user: str | None) -> Any:
    """The caller: --tenant/--groups (else [identity] in ragwright.toml, else the default), with --user
    (else the configured identity's user) as the owner of the memory."""
    from ragwright.model.identity import Identity

    who = caller(tenant, groups) or state.settings.identity or Identity()
    return dataclasses.replace(who, user=user) if user is not None else who


def ask_in_session(rag: Any, question: str, options: Any, who: Any, session: str) -> Any:
    """``ask --session NAME``: *question* asked in the stored conversation *session*; the response."""
    return rag.conversation(identity=who, session=session).ask(question, options)


_who_options = (
    click.option("--tenant", default=None, help="The caller's tenant (default: [identity] in ragwright.toml)."),
    click.option("--groups", default=None, help="The caller's comma-separated ACL groups."),
    click.option("--user", default=None, help="Whose memory (default: the configured identity's user)."),
)


def who_flags(func: Any) -> Any:
    for option in reversed(_who_options):
        func = option(func)
    return func


@click.command("chat")
@click.option("--session", default=None, help="Keep the conversation in the store under this name (per identity).")
@who_flags
@command
def chat(state: State, session: str | None, tenant: str | None, groups: str | None, user: str | None) -> None:
    """Answer questions read from stdin, one per line, as one conversation (follow-ups understood).

    An empty line is skipped, `/reset` forgets the conversation so far; EOF (Ctrl-D) ends. With --json,
    one JSON document with every turn is printed at the end."""
    settings = state.settings
    if settings.mode == "bm25":
        from ragwright.errors import ConfigError

        raise ConfigError("chat needs the dense arm: use --mode hybrid or --mode dense")
    interactive = sys.stdin.isatty()
    turns: list[dict[str, Any]] = []
    with state.open(must_exist=True, settings=settings) as rag:
        conversation = rag.conversation(identity=identity(state, tenant, groups, user), session=session)
        while True:
            if interactive:
                click.echo("> ", nl=False, err=True)
            line = sys.stdin.readline()
            if not line:
                break
            question = line.strip()
            if not question:
                continue
            if question == "/reset":
                conversation.reset()
                if not state.as_json:
                    click.echo("(conversation reset)")
                continue
            response = conversation.ask(question, settings.answers)
            turn = conversation.last
            assert turn is not None
            turns.append(turn.to_dict())
            if not state.as_json:
                if turn.standalone != question:
                    click.echo(f"(searching: {one_line(turn.standalone)})")
                click.echo(safe_text(response.answer))
                print_sources(response)
                if turn.budget.turns_dropped:
                    how = f"summarised ({turn.budget.summary_mode})" if turn.budget.summary_mode else "dropped"
                    click.echo(f"(memory: {turn.budget.turns_dropped} earlier turns {how} to fit the budget)")
                click.echo()
    if state.as_json:
        state.emit({"session": session, "turns": turns}, lambda: None)


@click.group("memory")
def memory_group() -> None:
    """Conversation memory: sessions and remembered items, per identity."""


@memory_group.command("sessions")
@who_flags
@command
def sessions(state: State, tenant: str | None, groups: str | None, user: str | None) -> None:
    """The caller's stored sessions."""
    with state.open(must_exist=True) as rag:
        from ragwright.rag_memory import memory_of

        names = memory_of(rag).sessions(identity=identity(state, tenant, groups, user))
    state.emit({"sessions": names}, lambda: click.echo("\n".join(one_line(n) for n in names) or "(no sessions)"))


@memory_group.command("forget")
@click.option("--session", default=None, help="Forget this session only (else everything of the caller).")
@who_flags
@command
def forget(state: State, session: str | None, tenant: str | None, groups: str | None, user: str | None) -> None:
    """Forget a session, or everything the caller has in memory (sessions and remembered items)."""
    with state.open(must_exist=True) as rag:
        from ragwright.rag_memory import memory_of

        removed = memory_of(rag).forget(identity=identity(state, tenant, groups, user), session=session)
    what = f"session {flat(session)}" if session is not None else "all memory"
    state.emit({"session": session, "removed": removed}, lambda: click.echo(f"forgot {what} ({removed} rows)"))
