"""The capability switches of ``search`` / ``ask`` / ``ingest`` (``--hyde``, ``--rerank``, ``--tags`` …) and
``ragwright config show``, which prints the effective configuration (``ragwright.toml`` + flags).

The switches are the table :data:`ragwright.config.overrides.SWITCHES`: each writes into the configuration
tables exactly what the equivalent line of ``ragwright.toml`` would, so a flag and a file mean the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ragwright.cli.common import State, command
from ragwright.config.overrides import CHOICES, for_command


def switch_flags(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the switches of command *name*; the command receives them in one ``switches`` dict (by switch
    name, ``None`` when not given), for :meth:`State.effective`."""
    switches = for_command(name)

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        def collect(*args: Any, **kwargs: Any) -> Any:
            kwargs["switches"] = {s.name: kwargs.pop(s.name) for s in switches}
            return func(*args, **kwargs)

        collect.__name__, collect.__doc__ = func.__name__, func.__doc__
        wrapped: Callable[..., Any] = collect
        for switch in reversed(switches):
            kind: Any = switch.type
            if isinstance(kind, str):
                kind = click.Choice(list(CHOICES[kind]))
            if switch.flag:
                option = click.option(*switch.decls, switch.name, default=None, help=switch.help)
            else:
                option = click.option(*switch.decls, switch.name, type=kind, default=None, help=switch.help)
            wrapped = option(wrapped)
        return wrapped

    return decorate


@click.group("config")
def config_group() -> None:
    """The configuration: ragwright.toml (or --config FILE, or $RAGWRIGHT_CONFIG) and the flags over it."""


@config_group.command("show")
@switch_flags("config")
@command
def show(state: State, switches: dict[str, Any]) -> None:
    """Print the effective configuration as TOML (or JSON with --json): the file, then the global options
    and the switches given here (`ragwright config show --hyde --llm local`). Secrets are left out."""
    from ragwright.config.render import to_toml

    settings = state.effective(switches)
    data = settings.to_dict()
    data["store"] = str(state.store)
    source = data.pop("source")

    def human() -> None:
        origin = f"from {source}" if source else "no configuration file: defaults"
        click.echo(
            to_toml(data, header=f"ragwright effective configuration ({origin}, with the flags given)"), nl=False
        )

    state.emit({"source": source, **data}, human)
