"""A follow-up question made standalone for retrieval: by the chat model, or a heuristic (no model).

With ``condense="llm"`` the query rewriter's condensing call is reused
(:func:`ragwright.retrieve.transforms.rewrite.rewrite_query`, asked for the standalone question only);
a failure falls back to the heuristic (logged ``memory_condense_failed``). The default (``"auto"``) is
the heuristic: the local chat models' condensing lost to it on held-out data.

The heuristic (:func:`heuristic_condense`): a question that refers back — a personal pronoun (it,
they, his …), a leading "and"/"what about", or no name and at most two content words — gets the names (else
the content words) of the nearest earlier user message that has some, and of the latest one that set
the topic itself, appended in parentheses: "When did they build it?" after "Who founded the Normans'
duchy?" becomes "When did they build it? (Normans)". A question that already names what it asks about
is kept as it is. (Chosen over the topic-setter alone on SQuAD 2.0 test articles — follow-ups made by
replacing an article's subject with a pronoun — not on the dev articles ``benchmarks/conversation_memory.py``
reports: nDCG@10 equal to the nearest message alone, and the subject survives a chain of follow-ups.)
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ragwright.generate.question import analyze, stem, words
from ragwright.memory.options import MemoryOptions
from ragwright.models.llms.base import ChatModel, Message

log = logging.getLogger(__name__)

# Personal pronouns only: "that", "this", "there" … are as often relative or existential ("the belief
# that …", "is there …") as they are anaphoric, and would mark most questions as follow-ups.
_REFERRING_WORDS: Final = (
    "it its it's itself they them their theirs themselves he him his himself she her hers herself former latter"
)
_REFERRING: Final = frozenset(_REFERRING_WORDS.split())
_CONTINUING: Final = re.compile(r"^\s*(?:and|also|what about|how about|and what|what else|why not)\b", re.I)
#: At most this many names are carried over, or this many content words when there are none.
MAX_CARRIED: Final = 4
MAX_CARRIED_WORDS: Final = 6
#: A question with no name and at most this many content words leans on the history ("Why?", "How much?").
SHORT_QUESTION: Final = 2


@dataclass(frozen=True, slots=True)
class Condensed:
    """The standalone question, how it was made (``llm``, ``heuristic``, ``unchanged``, ``off``) and the
    terms carried over from the history (heuristic)."""

    text: str
    method: str
    carried: tuple[str, ...] = ()


def refers_back(question: str) -> bool:
    """Whether *question* seems to lean on earlier turns (see the module docstring)."""
    tokens = [w.casefold() for w in words(question)]
    if any(t in _REFERRING for t in tokens) or _CONTINUING.search(question):
        return True
    q = analyze(question)
    return not q.entities and len(q.terms) <= SHORT_QUESTION


def _carry(message: str) -> tuple[str, ...]:
    q = analyze(message)
    stems = set(q.terms)
    names = [" ".join(_trim(e.split())) for e in q.entities]
    names = [n for n in names if n]
    if names:
        return tuple(dict.fromkeys(names))[:MAX_CARRIED]
    content = [w for w in words(message) if len(w) > 3 and w.casefold() not in _REFERRING]
    # the content words, in order: analyze() gives stems, carry the words as written
    return tuple(dict.fromkeys(w for w in content if stem(w) in stems))[:MAX_CARRIED_WORDS]


def _trim(name: list[str]) -> list[str]:
    """A name without the sentence's capitalised function words around it ("In Newton's" → "Newton's")."""
    while name and stem(name[0]) not in set(analyze(name[0]).terms):
        name = name[1:]
    return name


def _leans_back(text: str) -> bool:
    """A personal pronoun or a continuing opener: the message leans on an earlier one."""
    return any(w.casefold() in _REFERRING for w in words(text)) or bool(_CONTINUING.search(text))


def heuristic_condense(question: str, history: Sequence[Message], turns: int) -> Condensed:
    """The heuristic standalone question (see the module docstring). The carried terms are those of the
    latest of the last *turns* user messages that has some (the nearest antecedent), then the names of
    the latest user message that set the topic itself (no pronoun; anywhere in the kept history), so a
    chain of follow-ups keeps its subject."""
    if turns <= 0 or not refers_back(question):
        return Condensed(question, "unchanged")
    asked = [m for m in history if m.role == "user" and m.content.strip()]
    own = {w.casefold() for w in words(question)}

    def fresh(message: Message) -> list[str]:
        return [c for c in _carry(message.content) if c.casefold() not in own]

    latest = next((terms for m in reversed(asked[-turns:]) if (terms := fresh(m))), [])
    setter = next((m for m in reversed(asked) if not _leans_back(m.content)), None)
    carried = tuple(dict.fromkeys([*latest, *(fresh(setter) if setter is not None else [])]))
    if not carried:
        return Condensed(question, "unchanged")
    return Condensed(f"{question.rstrip()} ({', '.join(carried)})", "heuristic", carried)


def condense_question(
    question: str, history: Sequence[Message], options: MemoryOptions, llm: ChatModel | None = None
) -> Condensed:
    """*question* made standalone with *history* (earlier turns, oldest first) as ``options.condense`` says."""
    mode = options.condense
    chat = [m for m in history if m.role in ("user", "assistant") and m.content.strip()]
    if mode == "off" or not chat:
        return Condensed(question, "off" if mode == "off" else "unchanged")
    if mode == "llm" and llm is not None:  # opt-in: "auto" is the heuristic (see MemoryOptions.condense)
        from ragwright.errors import GenerationError
        from ragwright.retrieve.transforms.options import RewriteOptions
        from ragwright.retrieve.transforms.rewrite import rewrite_query

        opts = RewriteOptions(
            history_turns=options.history_turns, decompose=False, keywords=False, classify=False, max_tokens=160
        )
        try:
            return Condensed(rewrite_query(llm, question, chat, opts).standalone, "llm")
        except GenerationError as exc:
            log.warning("memory_condense_failed: %s; the follow-up is condensed heuristically", exc)
    return heuristic_condense(question, chat, options.history_turns)
