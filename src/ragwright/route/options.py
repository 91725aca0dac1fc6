"""``RouterOptions``: how queries are routed, validated on construction (the ``[route]`` table)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ragwright._validate import OptionsBase, check_choice, check_int
from ragwright.errors import ConfigError

#: Every route, cheapest first. ``none``: no retrieval (chit-chat); ``hybrid``: the default ``Rag.ask``;
#: ``hierarchical``: documents first, then their chunks; ``graph_local`` / ``graph_global``: the entity
#: graph's local search / community themes; ``agentic``: a capped tool-calling loop.
ROUTES: Final = ("none", "hybrid", "hierarchical", "graph_local", "graph_global", "agentic")
#: ``auto``: the rules; ``llm``: the chat model classifies (the rules when it cannot); ``off``: always hybrid.
MODES: Final = ("auto", "llm", "off")


def _routes(value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ConfigError.invalid("route.routes", value, "a list of routes from " + ", ".join(ROUTES))
    routes = tuple(value)
    for route in routes:
        if route not in ROUTES:
            raise ConfigError.invalid("route.routes", route, "one of " + ", ".join(repr(r) for r in ROUTES))
    if "hybrid" not in routes:
        raise ConfigError(
            f"route.routes={list(routes)!r} is invalid: it must include 'hybrid' (every fallback lands there)",
            field="route.routes",
            value=list(routes),
        )
    return tuple(r for r in ROUTES if r in routes)  # canonical order, no duplicates


@dataclass(frozen=True)
class RouterOptions(OptionsBase):
    """*mode*: ``auto`` (rules, no model call), ``llm`` (one JSON-grammar chat call; the rules decide
    when there is no model or its reply is unusable) or ``off`` (every query to ``hybrid``).
    *routes*: the routes a decision may choose; any other resolves to ``hybrid`` (which must be among
    them). *llm_max_tokens*: the classifier reply's cap."""

    mode: str = "auto"
    routes: tuple[str, ...] = ROUTES
    llm_max_tokens: int = 96

    def __post_init__(self) -> None:
        check_choice("route.mode", self.mode, MODES)
        object.__setattr__(self, "routes", _routes(self.routes))
        check_int("route.llm_max_tokens", self.llm_max_tokens, minimum=16)
