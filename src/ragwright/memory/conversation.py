"""One conversation's memory: its turns, the summary of the turns it no longer keeps, and the budget.

:class:`ConversationMemory` holds no model and does no I/O: :meth:`~ConversationMemory.fit` fits the
turns to the budget for the next question (:func:`ragwright.memory.budget.fit_history`) and
:meth:`~ConversationMemory.commit` records the answered turn, keeping only what the fit kept (the
dropped turns live on in the summary, or are gone), so the memory stays bounded however long the
conversation runs. :meth:`~ConversationMemory.state` / :meth:`~ConversationMemory.from_state` move it
to and from a stored session.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragwright.memory.budget import FittedHistory, fit_history
from ragwright.memory.options import MemoryOptions
from ragwright.memory.store import SessionState
from ragwright.models.llms.base import ChatModel, Message


class ConversationMemory:
    """The turns of one conversation (oldest first) and the summary of those it dropped."""

    def __init__(
        self, options: MemoryOptions | None = None, *, turns: Sequence[Message] = (), summary: str | None = None
    ) -> None:
        self.options = options or MemoryOptions()
        self.turns: list[Message] = [Message.coerce(m) for m in turns]
        self.summary = summary

    @classmethod
    def from_state(cls, state: SessionState, options: MemoryOptions | None = None) -> ConversationMemory:
        return cls(options, turns=state.turns, summary=state.summary)

    def state(self) -> SessionState:
        return SessionState(tuple(self.turns), self.summary)

    def fit(
        self,
        question: str,
        system_prompt: str,
        *,
        llm: ChatModel | None = None,
        pinned: Sequence[Message] = (),
    ) -> FittedHistory:
        """The history to send with *question* (see :func:`~ragwright.memory.budget.fit_history`)."""
        return fit_history(
            self.turns,
            question=question,
            system_prompt=system_prompt,
            options=self.options,
            llm=llm,
            summary=self.summary,
            pinned=pinned,
        )

    def commit(self, fitted: FittedHistory | None, question: str, answer: str | None) -> None:
        """Record the turn *question* → *answer* (``None``: the question only) after *fitted* (the fit it
        was asked with; ``None``: nothing was fitted, every turn stays)."""
        if fitted is not None:
            self.turns, self.summary = list(fitted.kept), fitted.summary
        self.turns.append(Message("user", question))
        if answer is not None:
            self.turns.append(Message("assistant", answer))

    def clear(self) -> None:
        self.turns, self.summary = [], None
