"""``AgentOptions``: the agent loop's hard caps and tool settings, validated on construction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from ragwright._validate import OptionsBase, check_bool, check_choice, check_float, check_int
from ragwright.errors import ConfigError

TOOL_MODES: Final = ("auto", "json", "native")
ToolMode = Literal["auto", "json", "native"]


@dataclass(frozen=True)
class AgentOptions(OptionsBase):
    """The caps and knobs of the agent loop (:mod:`ragwright.agent.loop`).

    Hard caps — the loop never goes past them, whatever the model asks for:

    * ``max_rounds``: model turns that may call tools (when they are spent, one last turn may only
      answer, from the evidence gathered so far);
    * ``max_tool_calls``: tools run in the whole loop (a repeated search is not run and not counted);
    * ``max_tokens``: cl100k tokens sent to and received from the model, every turn's whole prompt
      counted (the cost of the loop); a turn that would go past it is not made.

    Tools: ``search_top_k`` passages per search, each shown to the model cut to ``passage_tokens``
    cl100k tokens; ``fetch_neighbours`` chunks on each side of a fetched chunk; ``step_tokens``: the
    most the model may write in one turn. ``max_repeats``: repeated searches (a normalised query already
    searched) tolerated before the loop stops (``agent_repeated_search``). ``first_search``: search for
    the question itself before the first turn (one tool call; the model starts from that evidence).
    ``context_tokens``: when a turn's prompt is longer, the oldest tool results are cut to their source
    labels (the passages stay citable and fetchable), so the prompt fits the local model's 4,096-token
    window. ``tool_mode``: ``"json"`` (one JSON action per turn, enforced by the local model's grammar),
    ``"native"`` (OpenAI-compatible tool calling) or ``"auto"`` (native when the chat model supports it).
    """

    max_rounds: int = 4
    max_tool_calls: int = 6
    max_tokens: int = 12_000
    search_top_k: int = 4
    passage_tokens: int = 160
    fetch_neighbours: int = 1
    step_tokens: int = 256
    max_repeats: int = 2
    first_search: bool = True
    context_tokens: int = 3_000
    tool_mode: ToolMode = "auto"
    temperature: float = 0.0

    def __post_init__(self) -> None:
        for name, low, high in (
            ("max_rounds", 1, 32),
            ("max_tool_calls", 1, 64),
            ("max_tokens", 500, 2_000_000),
            ("search_top_k", 1, 20),
            ("passage_tokens", 20, 4_000),
            ("fetch_neighbours", 0, 5),
            ("step_tokens", 16, 8_192),
            ("max_repeats", 1, 16),
            ("context_tokens", 500, 1_000_000),
        ):
            value = getattr(self, name)
            check_int(f"agent.{name}", value, minimum=low)
            if value > high:
                raise ConfigError.invalid(f"agent.{name}", value, f"an integer from {low} to {high}")
        check_choice("agent.tool_mode", self.tool_mode, TOOL_MODES)
        check_bool("agent.first_search", self.first_search)
        check_float("agent.temperature", self.temperature, lo=0.0, hi=2.0)
        if self.step_tokens >= self.max_tokens:
            raise ConfigError.invalid(
                "agent.step_tokens", self.step_tokens, f"fewer than agent.max_tokens ({self.max_tokens})"
            )
