"""Rerankers driven by a language model: pointwise yes/no logits, and listwise JSON rankings.

* :class:`LlmPointwiseReranker` asks, for each (query, passage) pair, "is this passage relevant?"
  and reads P(yes) from the next-token distribution of **one forward pass** — no decoding. It needs a
  backend that exposes next-token probabilities (:class:`~ragwright.models.llms.base.YesNoScorer`,
  i.e. :class:`~ragwright.models.llms.local.LlamaCppChat`). The query comes before the passage in the
  prompt so the backend reuses the evaluated prefix (instruction + query) across a query's passages.
  This is the offline default reranker when the ``llm`` extra is installed (no PyPI package
  ships cross-encoder weights).
* :class:`LlmListwiseReranker` shows any :class:`~ragwright.models.llms.base.ChatModel` the numbered
  passages and asks for a JSON ranking. The reply is validated: integers in range (anything else
  rejects the reply), repeats ignored, passages it left out appended in their original order. A
  rejected reply raises :class:`~ragwright.errors.GenerationError`, so
  :func:`ragwright.postprocess.rerank.rerank` keeps the retrieval order and logs ``rerank_failed``.

Both score at most ``max_candidates`` passages (default 20, the cost cap); passages beyond the cap
keep their order after the scored ones with the score :data:`UNSCORED` (−1).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ragwright.errors import ConfigError, GenerationError
from ragwright.models.llms.base import ChatModel, Message, YesNoScorer, parse_json

__all__ = ["UNSCORED", "LlmListwiseReranker", "LlmPointwiseReranker", "validate_ranking"]

log = logging.getLogger(__name__)

UNSCORED = -1.0

POINTWISE_SYSTEM = "You judge whether a passage is relevant to a search query. Answer with a single word: yes or no."
POINTWISE_USER = (
    "Query: {query}\n\nPassage: {passage}\n\nDoes the passage contain information that answers the query? "
    "Answer yes or no."
)
LISTWISE_SYSTEM = "You rank search results by how well they answer a query. Reply with JSON only."
LISTWISE_USER = (
    "Query: {query}\n\nPassages:\n{passages}\n\nRank the {count} passages from most to least relevant to the "
    'query. Reply with JSON: {{"ranking": [passage numbers, most relevant first]}}.'
)
RANKING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ranking": {"type": "array", "items": {"type": "integer"}}},
    "required": ["ranking"],
}


def _check_cap(value: int, field: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError.invalid(field, value, "a positive integer")
    return value


class LlmPointwiseReranker:
    """Relevance = P(yes) of a yes/no question, one forward pass per pair (scores in [0, 1])."""

    def __init__(
        self,
        model: YesNoScorer,
        *,
        max_candidates: int = 20,
        max_passage_tokens: int = 384,
        max_query_tokens: int = 64,
        system: str = POINTWISE_SYSTEM,
        template: str = POINTWISE_USER,
    ) -> None:
        if not isinstance(model, YesNoScorer):
            raise ConfigError(
                f"{getattr(model, 'name', type(model).__name__)} cannot score yes/no logits; pointwise LLM "
                "reranking needs the local llama.cpp model (load_chat('local')), or use LlmListwiseReranker"
            )
        for placeholder in ("{query}", "{passage}"):
            if placeholder not in template:
                raise ConfigError.invalid("template", template, f"a prompt containing {placeholder}")
        self.model = model
        self.max_candidates = _check_cap(max_candidates, "max_candidates")
        self.max_passage_tokens = _check_cap(max_passage_tokens, "max_passage_tokens")
        self.max_query_tokens = _check_cap(max_query_tokens, "max_query_tokens")
        self.system, self.template = system, template

    @property
    def name(self) -> str:
        return f"llm-pointwise:{self.model.name}"

    def load(self) -> LlmPointwiseReranker:
        """Load the model's weights now (when it has a ``load()``), so a bad model fails here. Returns ``self``."""
        load = getattr(self.model, "load", None)
        if callable(load):
            load()
        return self

    def prompt(self, query: str, passage: str) -> str:
        """The full formatted prompt for one pair (query and passage truncated to their budgets)."""
        user = self.template.format(
            query=self.model.truncate(query.strip(), self.max_query_tokens),
            passage=self.model.truncate(passage.strip(), self.max_passage_tokens),
        )
        return self.model.format_chat([Message("system", self.system), Message("user", user)])

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        head = list(passages[: self.max_candidates])
        if not head:
            return []
        probabilities = self.model.yes_probabilities([self.prompt(query, p) for p in head])
        if len(probabilities) != len(head):
            raise GenerationError(f"{self.model.name} returned {len(probabilities)} scores for {len(head)} prompts")
        return [float(p) for p in probabilities] + [UNSCORED] * (len(passages) - len(head))


def validate_ranking(value: Any, count: int) -> list[int]:
    """0-based passage order from a model's ranking (1-based numbers), completed with the passages left out.

    Accepts ``{"ranking": [...]}`` or a bare list. Non-integers or numbers outside ``1..count`` raise
    ``ValueError`` (the whole reply is rejected); repeats are ignored; missing passages are appended
    in their original order. An empty ranking is rejected.
    """
    if isinstance(value, dict):
        value = value.get("ranking", value.get("order"))
    if not isinstance(value, list) or not value:
        raise ValueError(f"expected a non-empty list of passage numbers, got {value!r:.120}")
    order: list[int] = []
    seen: set[int] = set()
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int | str):
            raise ValueError(f"passage number {item!r} is not an integer")
        if isinstance(item, str):
            text = item.strip().strip("[]")
            if not text.isdigit():
                raise ValueError(f"passage number {item!r} is not an integer")
            item = int(text)
        if not 1 <= item <= count:
            raise ValueError(f"passage number {item} is out of range 1..{count}")
        if item - 1 in seen:
            continue
        seen.add(item - 1)
        order.append(item - 1)
    order.extend(i for i in range(count) if i not in seen)
    return order


class LlmListwiseReranker:
    """Any chat model ranks the numbered passages in one call; the reply is validated (see module doc)."""

    def __init__(
        self,
        model: ChatModel,
        *,
        max_candidates: int = 20,
        max_passage_chars: int = 800,
        max_tokens: int | None = None,
        system: str = LISTWISE_SYSTEM,
        template: str = LISTWISE_USER,
    ) -> None:
        for placeholder in ("{query}", "{passages}", "{count}"):
            if placeholder not in template:
                raise ConfigError.invalid("template", template, f"a prompt containing {placeholder}")
        self.model = model
        self.max_candidates = _check_cap(max_candidates, "max_candidates")
        self.max_passage_chars = _check_cap(max_passage_chars, "max_passage_chars")
        self.max_tokens = max_tokens
        self.system, self.template = system, template

    @property
    def name(self) -> str:
        return f"llm-listwise:{self.model.name}"

    def messages(self, query: str, passages: Sequence[str]) -> list[Message]:
        listed = "\n".join(
            f"[{i}] {' '.join(p.split())[: self.max_passage_chars]}" for i, p in enumerate(passages, start=1)
        )
        user = self.template.format(query=query.strip(), passages=listed, count=len(passages))
        return [Message("system", self.system), Message("user", user)]

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        head = list(passages[: self.max_candidates])
        if not head:
            return []
        budget = self.max_tokens if self.max_tokens is not None else 16 + 6 * len(head)
        reply = self.model.chat(
            self.messages(query, head), temperature=0.0, max_tokens=budget, json_schema=RANKING_SCHEMA
        )
        order = parse_json(reply.text, lambda v: validate_ranking(v, len(head)))
        scores = [0.0] * len(head)
        for position, index in enumerate(order):
            scores[index] = float(len(head) - position) / len(head)
        return scores + [UNSCORED] * (len(passages) - len(head))
