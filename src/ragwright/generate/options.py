"""The options of an ``ask`` (answer settings and the retrieval settings an ask may change), beside
the answerers (re-exported by :mod:`ragwright.options`). The retrieval options are read from their
home, :mod:`ragwright.retrieve.options`, when used (never at import: generation sits below retrieval).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack

from ragwright._validate import OptionsBase, check_bool, check_choice, check_float, check_int
from ragwright.errors import ConfigError
from ragwright.model.filters import FilterLike

if TYPE_CHECKING:
    from ragwright.retrieve.options import FeedbackOptions, RetrievalOptions

AnswerMode = Literal["extractive", "llm"]


def _check_history(value: Any) -> tuple[Any, ...]:
    """Conversation history as ``Message`` objects; a malformed turn is refused here, not mid-answer."""
    from ragwright.models.llms.base import Message

    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise ConfigError.invalid("conversation_history", value, "a sequence of messages")
    out = []
    for i, item in enumerate(value):
        try:
            out.append(Message.coerce(item))
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"conversation_history[{i}] is invalid: {exc} (a Message or a dict with 'role' "
                "(system, user, assistant, tool) and 'content' (a string))",
                field="conversation_history",
                value=item,
            ) from exc
    return tuple(out)


@dataclass(frozen=True)
class RagOptions(OptionsBase):
    """Options of one ``ask`` call: retrieval settings plus answer settings.

    The retrieval-related fields are forwarded verbatim to :class:`RetrievalOptions`.
    ``answer_mode``: ``"llm"`` asks the configured chat model (the prompt contract of
    :mod:`ragwright.generate.prompt`), ``"extractive"`` needs no model; ``None`` (default) means ``"llm"``
    when the ``Rag`` has a chat model, else ``"extractive"``. ``system_prompt`` replaces the default
    system prompt whole; ``conversation_history`` (``Message`` objects or ``{"role", "content"}`` dicts,
    checked here) goes between the system prompt and the context/question message, its leading system
    messages before the system prompt; ``send_sources_as_tool_result`` sends the sources as a tool result
    instead of inside the user message. ``max_answer_tokens`` caps each model reply. ``min_relevance``
    (off by default) declines without calling the model when no source reaches it (the reranker's score
    when reranked, else the dense cosine). ``verify_answer`` runs a groundedness check, regenerates once
    with stricter instructions when unsupported, and declines if the retry is still unsupported.
    ``answer_mode="extractive"`` quotes the best supporting sentences with ``[Source N]`` citations;
    ``extractive_min_similarity`` is the cosine a sentence must reach to count as support — below it
    the answer declines honestly (with ``answerability="off"``) — and ``extractive_relative_floor``
    quotes a second unit only when the sentence model scores it at least that fraction of the best one,
    so a strong answer is not padded with weak neighbours.
    ``answerability="model"`` (default) asks the shipped answerability model whether the best evidence
    answers the question (:mod:`ragwright.generate.answerability`): below its threshold
    (``answerability_threshold``, ``None`` = the threshold shipped with the weights) both answer modes
    decline before quoting or generating, ``decline_reason`` naming the signal; ``"off"`` leaves the
    decision to ``extractive_min_similarity`` (extractive) or to the chat model. ``max_answer_sentences``
    caps what the extractive answer quotes (it quotes one unit, two only when the first is not enough).
    ``pair_gate`` (off by default) adds the chat model's own reading to that decision: its yes/no on
    "does this passage state the answer?" over the best evidence, stacked with the model's probability
    (LLM answers only, and only for chat models with shipped stacking weights; one short forward pass).
    """

    top_k: int = 5
    min_score: float = 0.0
    use_hybrid_search: bool = False
    use_lost_in_the_middle_reordering: bool = False
    use_redundancy_filter: bool = False
    redundancy_threshold: float = 0.95
    metadata_filter: FilterLike = None
    max_context_tokens: int | None = None
    feedback: FeedbackOptions | None = None
    system_prompt: str | None = None
    temperature: float | None = None
    conversation_history: tuple[Any, ...] = field(default=())
    send_sources_as_tool_result: bool = False
    answer_mode: AnswerMode | None = None
    max_answer_tokens: int = 512
    min_relevance: float | None = None
    verify_answer: bool = False
    use_corrective_answer: bool = False
    extractive_min_similarity: float = 0.4
    extractive_relative_floor: float = 0.7
    max_answer_sentences: int = 3
    answerability: Literal["model", "off"] = "model"
    answerability_threshold: float | None = None
    pair_gate: bool = False

    def __post_init__(self) -> None:
        # Validates the shared retrieval fields with the same rules and messages.
        self.to_retrieval_options()
        if self.system_prompt is not None and (
            not isinstance(self.system_prompt, str) or not self.system_prompt.strip()
        ):
            raise ConfigError.invalid("system_prompt", self.system_prompt, "a non-empty string or None")
        check_float("temperature", self.temperature, lo=0.0, hi=2.0, optional=True)
        object.__setattr__(self, "conversation_history", _check_history(self.conversation_history))
        check_bool("send_sources_as_tool_result", self.send_sources_as_tool_result)
        if self.answer_mode is not None:
            check_choice("answer_mode", self.answer_mode, ("extractive", "llm"))
        check_int("max_answer_tokens", self.max_answer_tokens, minimum=1)
        check_float("min_relevance", self.min_relevance, optional=True)
        check_bool("verify_answer", self.verify_answer)
        check_bool("use_corrective_answer", self.use_corrective_answer)
        check_float("extractive_min_similarity", self.extractive_min_similarity, lo=0.0, hi=1.0)
        check_float("extractive_relative_floor", self.extractive_relative_floor, lo=0.0, hi=1.0)
        check_int("max_answer_sentences", self.max_answer_sentences, minimum=1)
        check_choice("answerability", self.answerability, ("model", "off"))
        check_float("answerability_threshold", self.answerability_threshold, lo=0.0, hi=1.0, optional=True)
        check_bool("pair_gate", self.pair_gate)

    def merged(self, **overrides: Unpack[RagOverrides]) -> RagOptions:  # type: ignore[override]
        """A copy with *overrides* (typed) applied and validated again; unknown keys are refused."""
        self.check_keys(list(overrides))
        changes: dict[str, Any] = dict(overrides)
        return replace(self, **changes)

    @classmethod
    def retrieval_fields(cls) -> tuple[str, ...]:
        """The fields an ``ask`` shares with :class:`RetrievalOptions` (same names, same rules)."""
        flat = _retrieval().RetrievalOptions.flat_names()
        return tuple(n for n in cls.field_names() if n in flat)

    def to_retrieval_options(self) -> RetrievalOptions:
        """The retrieval half, forwarded verbatim."""
        options: RetrievalOptions = _retrieval().RetrievalOptions()
        return options.merged(**{n: getattr(self, n) for n in self.retrieval_fields()})

    def inactive_requests(self) -> list[str]:
        defaults = RagOptions()
        return sorted(
            name
            for name in _retrieval().NOT_YET_ACTIVE  # read at call time: one list, in its home
            if name in self.field_names() and getattr(self, name) != getattr(defaults, name)
        )


class RagOverrides(TypedDict, total=False):
    """Per-call overrides of :class:`RagOptions` (``Rag.ask(q, top_k=3, verify_answer=True)``), typed."""

    top_k: int
    min_score: float
    use_hybrid_search: bool
    use_lost_in_the_middle_reordering: bool
    use_redundancy_filter: bool
    redundancy_threshold: float
    metadata_filter: FilterLike
    max_context_tokens: int | None
    feedback: FeedbackOptions | None
    system_prompt: str | None
    temperature: float | None
    conversation_history: tuple[Any, ...]
    send_sources_as_tool_result: bool
    answer_mode: AnswerMode | None
    max_answer_tokens: int
    min_relevance: float | None
    verify_answer: bool
    use_corrective_answer: bool
    extractive_min_similarity: float
    extractive_relative_floor: float
    max_answer_sentences: int
    answerability: Literal["model", "off"]
    answerability_threshold: float | None
    pair_gate: bool


def _retrieval() -> Any:
    from ragwright.retrieve import options

    return options
