"""A conversation's history fitted to a token budget (a conversation memory pipeline).

:func:`fit_history` counts in ``cl100k_base`` (:mod:`ragwright.chunk.tokens`, offline): each message
costs its content's tokens plus :data:`MESSAGE_OVERHEAD` (the chat format's role and separators). The
*fixed* part — the system prompt, the history's leading system messages (a host's prompt), the
recalled memories and the current question — is never dropped, even when it alone exceeds the budget
(logged ``memory_budget_exceeded``). The rest of the history is grouped into turns (a user message
and the replies after it) and kept newest first, whole turns only, while they fit. The turns that do
not fit are summarised (by the chat model, else extractively: :mod:`ragwright.memory.summarize`) into
one system message when ``summarize`` allows and the summary fits, else dropped. Every drop and
summary is logged with its counts (``memory_turns_dropped``, ``memory_turns_summarised``,
``memory_summary_failed``).

The summary goes first in the returned history, as a system message: the answer prompt places the
history's leading system messages before its own system prompt (the prompt contract's ordering).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ragwright.chunk.tokens import count_tokens
from ragwright.errors import ConfigError, GenerationError
from ragwright.memory.options import MemoryOptions
from ragwright.memory.summarize import clip_tokens, extractive_summary, llm_summary
from ragwright.models.llms.base import ChatModel, Message

log = logging.getLogger(__name__)

#: Tokens a message costs beyond its content (role and separators of the chat format; OpenAI counts
#: 3-4 per message for cl100k models).
MESSAGE_OVERHEAD: Final = 4
#: How the summary message starts (a later call recognises its own summary by it).
SUMMARY_PREFIX: Final = "Summary of the earlier conversation:"
#: A summary budget below this is not worth a message: the turns are dropped instead.
MIN_SUMMARY_TOKENS: Final = 16


def message_tokens(message: Message) -> int:
    """What *message* costs in a prompt: its content's cl100k tokens plus :data:`MESSAGE_OVERHEAD`."""
    return count_tokens(message.content) + MESSAGE_OVERHEAD


def messages_tokens(messages: Sequence[Message]) -> int:
    return sum(message_tokens(m) for m in messages)


@dataclass(frozen=True, slots=True)
class BudgetReport:
    """What fitting did: the budget, the fixed part's tokens, the history's tokens before and after,
    the turns kept, dropped and summarised, the summary's tokens and how it was written
    (``"llm"``, ``"extractive"``, ``"previous"`` — the earlier summary kept as it was — or ``None``)."""

    budget: int
    fixed_tokens: int
    history_tokens_in: int
    history_tokens_out: int
    turns_in: int
    turns_kept: int
    turns_dropped: int
    turns_summarised: int
    summary_tokens: int = 0
    summary_mode: str | None = None
    over_budget: bool = False

    @property
    def total_tokens(self) -> int:
        """The fixed part plus the history as fitted: at most ``budget`` unless ``over_budget``."""
        return self.fixed_tokens + self.history_tokens_out

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget": self.budget,
            "fixed_tokens": self.fixed_tokens,
            "history_tokens_in": self.history_tokens_in,
            "history_tokens_out": self.history_tokens_out,
            "total_tokens": self.total_tokens,
            "turns_in": self.turns_in,
            "turns_kept": self.turns_kept,
            "turns_dropped": self.turns_dropped,
            "turns_summarised": self.turns_summarised,
            "summary_tokens": self.summary_tokens,
            "summary_mode": self.summary_mode,
            "over_budget": self.over_budget,
        }


@dataclass(frozen=True, slots=True)
class FittedHistory:
    """The history to send (``messages``: leading system messages, the summary, the kept turns), the
    new ``summary`` text (``None`` when there is none), the turns kept (``kept``, without the leading
    system messages and the summary) and the :class:`BudgetReport`."""

    messages: tuple[Message, ...]
    summary: str | None
    kept: tuple[Message, ...]
    report: BudgetReport
    dropped: tuple[Message, ...] = field(default=())


def group_turns(messages: Sequence[Message]) -> list[list[Message]]:
    """Messages grouped into turns: each user message with the messages after it up to the next one
    (messages before the first user message form a turn of their own)."""
    turns: list[list[Message]] = []
    for m in messages:
        if m.role == "user" or not turns:
            turns.append([m])
        else:
            turns[-1].append(m)
    return turns


def split_leading_system(history: Sequence[Message]) -> tuple[list[Message], list[Message]]:
    n = 0
    while n < len(history) and history[n].role == "system":
        n += 1
    return list(history[:n]), list(history[n:])


def summary_message(summary: str) -> Message:
    return Message("system", f"{SUMMARY_PREFIX} {summary}")


def _mode(options: MemoryOptions, llm: ChatModel | None) -> str:
    mode = options.summarize
    if mode == "auto":
        return "llm" if llm is not None else "extractive"
    if mode == "llm" and llm is None:
        raise ConfigError(
            "memory.summarize='llm' needs a chat model: configure one (--llm local, llm = \"local\" in "
            "ragwright.toml) or set memory.summarize to 'auto', 'extractive' or 'off'",
            field="memory.summarize",
            value=mode,
        )
    return mode


def fit_history(
    history: Sequence[Message | Mapping[str, Any]],
    *,
    question: str,
    system_prompt: str,
    options: MemoryOptions,
    llm: ChatModel | None = None,
    summary: str | None = None,
    pinned: Sequence[Message] = (),
) -> FittedHistory:
    """Fit *history* (earlier turns, oldest first) with *question*, *system_prompt*, the *pinned* messages
    (recalled memories: kept, counted as fixed) and the earlier *summary* into ``options.budget_tokens``
    (see the module docstring). Raises :class:`ConfigError` only for ``summarize='llm'`` without *llm*."""
    mode = _mode(options, llm)
    messages = [Message.coerce(m) for m in history]
    leading, rest = split_leading_system(messages)
    budget = options.budget_tokens
    fixed = (
        count_tokens(system_prompt)
        + MESSAGE_OVERHEAD
        + messages_tokens(leading)
        + messages_tokens(pinned)
        + count_tokens(question)
        + MESSAGE_OVERHEAD
    )
    turns = group_turns(rest)
    costs = [messages_tokens(t) for t in turns]
    previous = summary.strip() if summary and summary.strip() else None
    previous_cost = message_tokens(summary_message(previous)) if previous else 0
    tokens_in = sum(costs) + previous_cost
    room = budget - fixed
    if room < 0:
        log.warning(
            "memory_budget_exceeded: the system prompt, recalled memories and question take %d tokens, over "
            "the budget of %d; every earlier turn is dropped (raise memory.budget_tokens)",
            fixed,
            budget,
        )
    if tokens_in <= room or not (turns or previous):  # everything fits (or there is nothing to fit)
        out = [*leading, *([summary_message(previous)] if previous else []), *rest]
        report = BudgetReport(
            budget,
            fixed,
            tokens_in,
            tokens_in,
            len(turns),
            len(turns),
            0,
            0,
            previous_cost,
            "previous" if previous else None,
            fixed > budget,
        )
        return FittedHistory(tuple(out), previous, tuple(rest), report)
    # Something must go: reserve the summary's share, keep the newest turns that fit in the rest.
    frame = MESSAGE_OVERHEAD + count_tokens(SUMMARY_PREFIX)  # the summary message without its text
    summarising = mode != "off" and room - frame >= MIN_SUMMARY_TOKENS
    reserve = min(options.summary_max_tokens + frame, room) if summarising else 0
    kept_from, used = len(turns), 0
    while kept_from > 0 and used + costs[kept_from - 1] <= room - reserve:
        kept_from -= 1
        used += costs[kept_from]
    dropped = [m for t in turns[:kept_from] for m in t]
    kept = [m for t in turns[kept_from:] for m in t]
    new_summary, summary_mode, summary_cost = None, None, 0
    if summarising and (dropped or previous):
        cap = min(options.summary_max_tokens, room - used - frame)
        if cap >= MIN_SUMMARY_TOKENS:
            text, summary_mode = _summarise(mode, llm, dropped, cap, previous)
            # token counts are not quite additive across the join: clip until the message fits
            while text and message_tokens(summary_message(text)) > room - used:
                text = clip_tokens(text, count_tokens(text) - 1)
            if text:
                new_summary, summary_cost = text, message_tokens(summary_message(text))
            else:
                summary_mode = None
    out = [*leading, *([summary_message(new_summary)] if new_summary else []), *kept]
    report = BudgetReport(
        budget,
        fixed,
        tokens_in,
        used + summary_cost,
        len(turns),
        len(turns) - kept_from,
        kept_from,
        kept_from if new_summary else 0,
        summary_cost,
        summary_mode,
        fixed > budget,
    )
    if new_summary:
        log.info(
            "memory_turns_summarised: %d of %d turns (%d messages) summarised %s into %d tokens; history %d → %d "
            "tokens, budget %d (fixed %d)",
            kept_from,
            len(turns),
            len(dropped),
            summary_mode,
            summary_cost,
            tokens_in,
            report.history_tokens_out,
            budget,
            fixed,
        )
    else:
        log.info(
            "memory_turns_dropped: %d of %d turns (%d messages) dropped without a summary (summarize=%s); history "
            "%d → %d tokens, budget %d (fixed %d)",
            kept_from,
            len(turns),
            len(dropped),
            options.summarize,
            tokens_in,
            report.history_tokens_out,
            budget,
            fixed,
        )
    return FittedHistory(tuple(out), new_summary, tuple(kept), report, tuple(dropped))


def _summarise(
    mode: str, llm: ChatModel | None, dropped: Sequence[Message], cap: int, previous: str | None
) -> tuple[str, str]:
    if mode == "llm" and llm is not None:
        try:
            return llm_summary(llm, dropped, cap, previous), "llm"
        except GenerationError as exc:
            log.warning(
                "memory_summary_failed: %s; %d dropped messages are summarised extractively instead", exc, len(dropped)
            )
    return extractive_summary(dropped, cap, previous), "extractive"
