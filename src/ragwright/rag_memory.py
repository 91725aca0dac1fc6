"""Conversation memory on the facade: ``rag.conversation()`` and ``rag.memory``.

>>> rag = Rag.open("store.db")                                          # doctest: +SKIP
>>> chat = rag.conversation()                                           # doctest: +SKIP
>>> chat.ask("Who founded the duchy of Normandy?").answer              # doctest: +SKIP
>>> chat.ask("When did he die?").answer          # "he" resolved from the history  # doctest: +SKIP
>>> rag.conversation(session="support-42").ask("And the refund?")       # stored in the store's file  # doctest: +SKIP

Each :meth:`Conversation.ask` condenses a follow-up into a standalone question
(:mod:`ragwright.memory.condense`), recalls the caller's remembered items when persistent memory is
on (:class:`~ragwright.memory.PersistentMemoryOptions`), fits the history to the token budget
(:mod:`ragwright.memory.budget`: newest turns kept, oldest summarised or dropped), answers through
:meth:`Rag.aask <ragwright.rag.Rag.aask>` with the fitted history as ``conversation_history`` (the
chat model sees it; ``[Source N]`` citations as always) and records the turn. A named session is kept
in the store (SQLite file, or in process for the in-memory store), per identity: the same name under
another user or tenant is another session.

:meth:`RagMemory.aprepare_chat` is the same budget (and recall) for a caller that brings its whole
message list each time (the HTTP server's OpenAI-compatible chat endpoint).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Unpack

from ragwright._sync import run_sync, to_thread
from ragwright.errors import ConfigError
from ragwright.generate.prompt import DEFAULT_SYSTEM_PROMPT
from ragwright.memory import (
    BudgetReport,
    ConversationMemory,
    FittedHistory,
    MemoryBackend,
    MemoryHit,
    MemoryItem,
    MemoryOptions,
    MemoryScope,
    PersistentMemoryOptions,
    condense_question,
    fit_history,
    open_memory,
    recall,
    recall_text,
)
from ragwright.model.identity import Identity
from ragwright.model.results import RagResponse
from ragwright.models.llms.base import Message
from ragwright.options import RagOptions, RagOverrides

if TYPE_CHECKING:
    from ragwright.rag import Rag

log = logging.getLogger(__name__)
_CITATION = re.compile(r"\s*\[Source \d+\]")

__all__ = [
    "ChatTurn",
    "Conversation",
    "PreparedChat",
    "RagMemory",
    "RememberingEvents",
    "abudget_chat",
    "aremember_chat",
    "enable_memory",
    "memory_of",
]


def enable_memory(rag: Rag, options: MemoryOptions | None = None) -> RagMemory:
    """Give *rag* conversation memory with *options* (the defaults when ``None``); an existing one is
    replaced when *options* are given, else kept."""
    if rag.memory is None or options is not None:
        if rag.memory is not None:
            rag.memory.close()
        rag.memory = RagMemory(rag, options or MemoryOptions())
    return rag.memory


def memory_of(rag: Rag) -> RagMemory:
    """*rag*'s conversation memory (the defaults, switched on now, when it has none)."""
    return rag.memory if rag.memory is not None else enable_memory(rag)


async def abudget_chat(
    rag: Rag,
    identity: Identity,
    question: str,
    history: Sequence[Message | Mapping[str, Any]],
    *,
    named: bool,
    system_prompt: Any = None,
) -> PreparedChat:
    """A chat request's *history* fitted to *rag*'s memory budget (the HTTP server's chat endpoint).
    Persistent memory is recalled only for a *named* caller (an API key with a name: its ``user``), so
    callers who share a tenant but not a name never share a memory."""
    prompt = system_prompt if isinstance(system_prompt, str) and system_prompt.strip() else None
    persistent = named and identity.user is not None
    return await memory_of(rag).aprepare_chat(
        question, history, identity=identity, system_prompt=prompt, persistent=persistent
    )


async def aremember_chat(
    rag: Rag, identity: Identity, question: str, answer: Mapping[str, Any], *, named: bool
) -> None:
    """Store a chat request's answered turn in *identity*'s persistent memory (a named caller only; when
    persistent memory and ``remember_turns`` are on; declines are not stored)."""
    memory = memory_of(rag)
    options = memory.options.persistent
    if not named or identity.user is None or options is None or not options.remember_turns:
        return
    if answer.get("declined") or not str(answer.get("answer", "")).strip():
        return
    cited = [str(c["chunk_id"]) for c in answer.get("citations", ())] or [
        str(s["chunk_id"]) for s in answer.get("sources", ())
    ]
    text = " ".join(_CITATION.sub("", str(answer["answer"])).split())
    await to_thread(memory.remember, f"Q: {question}\nA: {text}", identity=identity, kind="turn", sources=cited)


class RememberingEvents:
    """A streamed chat answer's events (``(event, data)`` pairs: ``sources``, ``citations``, ``done`` …),
    passed through unchanged; after ``done`` the turn is remembered (:func:`aremember_chat`). A failure
    to remember is logged (``memory_remember_failed``) and never breaks the stream."""

    def __init__(self, events: Any, rag: Rag, identity: Identity, question: str, *, named: bool) -> None:
        self.events, self.rag, self.identity, self.question, self.named = events, rag, identity, question, named

    async def __aiter__(self) -> AsyncIterator[tuple[str, Any]]:
        answer: dict[str, Any] = {}
        async for event, data in self.events:
            if event in ("sources", "citations", "done") and isinstance(data, Mapping):
                answer.update(data)
            yield event, data
            if event == "done":
                try:
                    await aremember_chat(self.rag, self.identity, self.question, answer, named=self.named)
                except Exception as exc:
                    log.warning("memory_remember_failed: %s: %s", type(exc).__name__, exc)

    async def release(self) -> None:
        await self.events.release()


@dataclass(frozen=True, slots=True)
class ChatTurn:
    """What one :meth:`Conversation.ask` did: the question, the standalone question retrieval used and
    how it was made, the budget's report, the recalled items' texts, and the response."""

    question: str
    standalone: str
    condensed_by: str
    budget: BudgetReport
    recalled: tuple[str, ...]
    response: RagResponse

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "standalone": self.standalone,
            "condensed_by": self.condensed_by,
            "budget": self.budget.to_dict(),
            "recalled": list(self.recalled),
            **self.response.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class PreparedChat:
    """A whole message list fitted to the budget: the ``history`` to send (dicts in OpenAI's shape), the
    report, and what was recalled."""

    history: list[dict[str, Any]]
    report: BudgetReport
    recalled: tuple[str, ...] = field(default=())


class RagMemory:
    """The conversation memory of a :class:`~ragwright.rag.Rag`: its options and its backend (opened on
    first use: tables in the SQLite store's file, or in process for the in-memory store)."""

    def __init__(self, rag: Rag, options: MemoryOptions) -> None:
        if not isinstance(options, MemoryOptions):
            raise ConfigError.invalid("memory", options, "a MemoryOptions")
        if options.summarize == "llm" and rag.llm is None:
            raise ConfigError(
                "memory.summarize='llm' needs a chat model: Rag(..., llm=load_chat('local')), --llm local, or set "
                "memory.summarize to 'auto', 'extractive' or 'off'",
                field="memory.summarize",
            )
        if options.condense == "llm" and rag.llm is None:
            raise ConfigError(
                "memory.condense='llm' needs a chat model: Rag(..., llm=load_chat('local')), --llm local, or set "
                "memory.condense to 'auto', 'heuristic' or 'off'",
                field="memory.condense",
            )
        self.rag, self.options = rag, options
        self._backend: MemoryBackend | None = None
        self._lock = threading.Lock()

    @property
    def backend(self) -> MemoryBackend:
        with self._lock:
            if self._backend is None:
                self._backend = open_memory(self.rag.store)
            return self._backend

    def _who(self, identity: Identity | None) -> Identity:
        return identity or self.rag.identity

    def _persistent(self) -> PersistentMemoryOptions:
        if self.options.persistent is None:
            raise ConfigError(
                "persistent memory is off: enable it with MemoryOptions(persistent=PersistentMemoryOptions()) "
                "or a [memory.persistent] table in ragwright.toml",
                field="memory.persistent",
            )
        return self.options.persistent

    # -- conversations -----------------------------------------------------------------------------------
    def conversation(
        self, *, identity: Identity | None = None, session: str | None = None, options: MemoryOptions | None = None
    ) -> Conversation:
        """A conversation as *identity* (else the Rag's); *session* names one kept in the store."""
        return Conversation(self, identity=self._who(identity), session=session, options=options)

    def sessions(self, *, identity: Identity | None = None) -> list[str]:
        """The stored sessions of *identity*."""
        return self.backend.sessions(MemoryScope.of(self._who(identity)))

    # -- persistent memory -------------------------------------------------------------------------------
    def remember(
        self,
        text: str,
        *,
        identity: Identity | None = None,
        kind: str = "fact",
        session: str | None = None,
        sources: Sequence[str] = (),
    ) -> MemoryItem:
        """Remember *text* for *identity* (embedded with the Rag's embedder); *sources*: the chunk ids it
        was drawn from (recalled only while the caller may still see them all)."""
        options = self._persistent()
        item = MemoryItem(text, MemoryScope.of(self._who(identity)), kind, session, sources=tuple(sources))
        vector = self.rag.embedder.embed_documents([text])[0]
        self.backend.add(item, vector, self.rag.embedder.name, max_items=options.max_items)
        return item

    def recall(self, query: str, *, identity: Identity | None = None) -> list[MemoryHit]:
        """The items *identity* has remembered that are most similar to *query* (min score and top-k of
        :class:`~ragwright.memory.PersistentMemoryOptions`), less those drawn from a chunk *identity* may
        no longer see (its access changed, or the document went): checked through the store, as the caller."""
        who = self._who(identity)
        hits = recall(self.backend, self.rag.embedder, query, MemoryScope.of(who), self._persistent())
        kept = [h for h in hits if not h.item.sources or self._visible(h.item.sources, who)]
        if len(kept) < len(hits):
            log.info(
                "memory_recall_hidden: %d remembered items left out (their sources are no longer visible)",
                len(hits) - len(kept),
            )
        return kept

    def _visible(self, chunk_ids: Sequence[str], who: Identity) -> bool:
        return len(self.rag.store.get_chunks(list(dict.fromkeys(chunk_ids)), who)) == len(set(chunk_ids))

    def items(self, *, identity: Identity | None = None) -> list[MemoryItem]:
        return self.backend.items(MemoryScope.of(self._who(identity)))

    def forget(
        self, *, identity: Identity | None = None, session: str | None = None, item_ids: Sequence[str] = ()
    ) -> int:
        """Forget *item_ids*, or a *session* (its turns and the items it stored), or — with neither —
        everything *identity* has in memory. Returns how many rows went."""
        removed = self.backend.forget(MemoryScope.of(self._who(identity)), session=session, item_ids=item_ids)
        log.info("memory_forgotten: %d rows (session=%s, items=%d)", removed, session, len(item_ids))
        return removed

    def record_turn(
        self, question: str, response: RagResponse, *, identity: Identity | None = None, session: str | None = None
    ) -> MemoryItem | None:
        """Store an answered question in persistent memory (when on, ``remember_turns`` set, not declined)."""
        options = self.options.persistent
        if options is None or not options.remember_turns or response.declined or not response.answer.strip():
            return None
        answer = " ".join(_CITATION.sub("", response.answer).split())  # [Source N] named this answer's sources only
        cited = [c.chunk_id for c in response.citations] or [r.chunk_id for r in response.sources]
        text = f"Q: {question}\nA: {answer}"
        return self.remember(text, identity=identity, kind="turn", session=session, sources=cited)

    def _recalled(self, query: str, identity: Identity) -> list[MemoryHit]:
        if self.options.persistent is None:
            return []
        return self.recall(query, identity=identity)

    # -- whole message lists (the HTTP server) -------------------------------------------------------------
    async def aprepare_chat(
        self,
        question: str,
        history: Sequence[Message | Mapping[str, Any]],
        *,
        identity: Identity | None = None,
        system_prompt: str | None = None,
        persistent: bool = True,
    ) -> PreparedChat:
        """*history* (every earlier message of a chat) fitted to the budget with *question*; with
        persistent memory on and *persistent*, the caller's recalled items go first as a system message."""
        who = self._who(identity)
        hits = await to_thread(self._recalled, question, who) if persistent else []
        memo = recall_text(hits)
        pinned = [Message("system", memo)] if memo else []
        fitted = await to_thread(
            fit_history,
            history,
            question=question,
            system_prompt=system_prompt or DEFAULT_SYSTEM_PROMPT,
            options=self.options,
            llm=self.rag.llm,
            pinned=pinned,
        )
        messages = [*pinned, *fitted.messages]
        return PreparedChat([m.to_dict() for m in messages], fitted.report, tuple(h.item.text for h in hits))

    def close(self) -> None:
        with self._lock:
            if self._backend is not None:
                self._backend.close()
                self._backend = None


class Conversation:
    """A conversation with a :class:`~ragwright.rag.Rag` (see the module docstring). Not thread-safe: one
    conversation answers one question at a time."""

    def __init__(
        self,
        memory: RagMemory,
        *,
        identity: Identity,
        session: str | None = None,
        options: MemoryOptions | None = None,
    ) -> None:
        if session is not None and (not isinstance(session, str) or not session.strip()):
            raise ConfigError.invalid("session", session, "a non-empty session name, or None")
        self.rag_memory, self.identity, self.session = memory, identity, session
        self.scope = MemoryScope.of(identity)
        opts = options or memory.options
        state = memory.backend.load_session(self.scope, session) if session is not None else None
        self.memory = ConversationMemory.from_state(state, opts) if state is not None else ConversationMemory(opts)
        self.turns: list[ChatTurn] = []

    @property
    def last(self) -> ChatTurn | None:
        """The latest turn asked through this object (``None`` before the first)."""
        return self.turns[-1] if self.turns else None

    @property
    def history(self) -> list[Message]:
        """The turns kept (the summary of older ones is :attr:`summary`)."""
        return list(self.memory.turns)

    @property
    def summary(self) -> str | None:
        return self.memory.summary

    async def aask(
        self, question: str, options: RagOptions | None = None, **overrides: Unpack[RagOverrides]
    ) -> RagResponse:
        """Answer *question* in this conversation (see the module docstring); :attr:`last` has the details."""
        if not isinstance(question, str) or not question.strip():
            raise ConfigError.invalid("question", question, "a non-empty string")
        rag, memory = self.rag_memory.rag, self.memory
        opts = options or rag.rag_options
        if overrides:
            opts = opts.merged(**overrides)
        condensed = await to_thread(condense_question, question, memory.turns, memory.options, rag.llm)
        if condensed.method in ("heuristic", "llm"):
            log.info("memory_condensed (%s): %r → %r", condensed.method, question[:80], condensed.text[:120])
        hits = await to_thread(self.rag_memory._recalled, condensed.text, self.identity)
        memo = recall_text(hits)
        pinned = [Message("system", memo)] if memo else []
        fitted: FittedHistory = await to_thread(
            memory.fit, condensed.text, opts.system_prompt or DEFAULT_SYSTEM_PROMPT, llm=rag.llm, pinned=pinned
        )
        history = (*pinned, *fitted.messages)
        response = await rag.aask(condensed.text, opts.merged(conversation_history=history), identity=self.identity)
        memory.commit(fitted, question, response.answer)
        if self.session is not None:
            await to_thread(self.rag_memory.backend.save_session, self.scope, self.session, memory.state())
        await to_thread(self.rag_memory.record_turn, question, response, identity=self.identity, session=self.session)
        self.turns.append(
            ChatTurn(
                question, condensed.text, condensed.method, fitted.report, tuple(h.item.text for h in hits), response
            )
        )
        return response

    def ask(self, question: str, options: RagOptions | None = None, **overrides: Unpack[RagOverrides]) -> RagResponse:
        return run_sync(self.aask(question, options, **overrides))

    def reset(self) -> None:
        """Start over: this conversation's turns and summary (and its stored session) are forgotten."""
        self.memory.clear()
        if self.session is not None:
            self.rag_memory.backend.forget(self.scope, session=self.session)
