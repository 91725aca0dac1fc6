"""The options of an ``ask`` (answer settings and the retrieval settings an ask may change), beside
the answerers (re-exported by :mod:`ragwright.options`). The retrieval options are read from their
home, :mod:`ragwright.retrieve.options`, when used (never at import: generation sits below retrieval).

:class:`RagOptions` is composed like :class:`~ragwright.retrieve.options.RetrievalOptions`: its
``retrieval`` part *is* a ``RetrievalOptions`` (nothing declared twice), and the retrieval names an ask
may change (:data:`ASK_RETRIEVAL_FIELDS`) stay flat keywords and read-only attributes
(``RagOptions(top_k=3).top_k``), as ``RetrievalOptions`` keeps the seed's names for its parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict, Unpack

from ragwright._validate import OptionsBase, check_bool, check_choice, check_float, check_int
from ragwright.errors import ConfigError
from ragwright.model.filters import FilterLike

if TYPE_CHECKING:
    from ragwright.retrieve.options import FeedbackOptions, RetrievalOptions

AnswerMode = Literal["extractive", "llm"]

#: The retrieval settings an ``ask`` may change, by their flat (seed) names: each is a keyword of
#: :class:`RagOptions` and a read-only attribute read from its ``retrieval`` part. The rest of an ask's
#: retrieval settings (reranking, transforms, strategy switches …) are the ``Rag``'s.
ASK_RETRIEVAL_FIELDS: Final[tuple[str, ...]] = (
    "top_k",
    "min_score",
    "use_hybrid_search",
    "use_lost_in_the_middle_reordering",
    "use_redundancy_filter",
    "redundancy_threshold",
    "metadata_filter",
    "max_context_tokens",
    "feedback",
)


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


@dataclass(frozen=True, init=False)
class RagOptions(OptionsBase):
    """Options of one ``ask`` call: retrieval settings plus answer settings.

    Composed: the ``retrieval`` part (a :class:`RetrievalOptions`) holds the retrieval settings an ask
    may change (:data:`ASK_RETRIEVAL_FIELDS`: ``top_k``, ``min_score``, ``use_hybrid_search``,
    ``metadata_filter`` …), each also accepted as a keyword and readable as an attribute; they are
    forwarded verbatim to the ``Rag``'s retrieval options. A ``retrieval`` part that sets any other
    retrieval field is refused (those are the ``Rag``'s settings).
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

    retrieval: RetrievalOptions = field(default_factory=lambda: _retrieval().RetrievalOptions())
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

    def __init__(self, retrieval: RetrievalOptions | None = None, **values: Unpack[RagFields]) -> None:
        given: dict[str, Any] = dict(values)
        unknown = [k for k in given if k not in _ANSWER_FIELDS and k not in ASK_RETRIEVAL_FIELDS]
        if unknown:
            type(self).check_keys(unknown)  # refused with a suggestion
        home = _retrieval()
        if retrieval is None:
            retrieval = home.RetrievalOptions()
        elif not isinstance(retrieval, home.RetrievalOptions):
            raise ConfigError.invalid("retrieval", retrieval, "a RetrievalOptions or None")
        else:
            _check_ask_part(retrieval, home.RetrievalOptions())
        shared = {k: v for k, v in given.items() if k in ASK_RETRIEVAL_FIELDS}
        # the shared names are validated by RetrievalOptions itself: same rules, same messages
        object.__setattr__(self, "retrieval", retrieval.merged(**shared) if shared else retrieval)
        for f in fields(self):
            if f.name in _ANSWER_FIELDS:
                default = f.default_factory() if f.default_factory is not MISSING else f.default
                object.__setattr__(self, f.name, given.get(f.name, default))
        self.__post_init__()

    def __post_init__(self) -> None:
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
    def field_names(cls) -> tuple[str, ...]:
        """Every name a mapping or an override may use: the flat names (:meth:`flat_names`) and the
        ``retrieval`` part."""
        return (*cls.flat_names(), "retrieval")

    @classmethod
    def flat_names(cls) -> tuple[str, ...]:
        """The names in their flat form (the shared retrieval names, then the answer fields): how a
        configuration file's ``[answers]`` table writes them."""
        return (*ASK_RETRIEVAL_FIELDS, *_ANSWER_FIELDS)

    @classmethod
    def retrieval_fields(cls) -> tuple[str, ...]:
        """The fields an ``ask`` shares with :class:`RetrievalOptions` (same names, same rules)."""
        return ASK_RETRIEVAL_FIELDS

    def to_retrieval_options(self) -> RetrievalOptions:
        """The retrieval part, forwarded verbatim."""
        return self.retrieval

    # -- the shared retrieval names, read from the retrieval part ------------------------------------
    @property
    def top_k(self) -> int:
        return self.retrieval.top_k

    @property
    def min_score(self) -> float:
        return self.retrieval.min_score

    @property
    def use_hybrid_search(self) -> bool:
        return self.retrieval.use_hybrid_search

    @property
    def use_lost_in_the_middle_reordering(self) -> bool:
        return self.retrieval.use_lost_in_the_middle_reordering

    @property
    def use_redundancy_filter(self) -> bool:
        return self.retrieval.use_redundancy_filter

    @property
    def redundancy_threshold(self) -> float:
        return self.retrieval.redundancy_threshold

    @property
    def metadata_filter(self) -> FilterLike:
        return self.retrieval.metadata_filter

    @property
    def max_context_tokens(self) -> int | None:
        return self.retrieval.max_context_tokens

    @property
    def feedback(self) -> FeedbackOptions | None:
        return self.retrieval.feedback

    def inactive_requests(self) -> list[str]:
        defaults = RagOptions()
        return sorted(
            name
            for name in _retrieval().NOT_YET_ACTIVE  # read at call time: one list, in its home
            if name in self.field_names() and getattr(self, name) != getattr(defaults, name)
        )


class RagFields(TypedDict, total=False):
    """The flat keywords of :class:`RagOptions` (the shared retrieval names and the answer fields), typed."""

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


class RagOverrides(RagFields, total=False):
    """Per-call overrides of :class:`RagOptions` (``Rag.ask(q, top_k=3, verify_answer=True)``), typed."""

    retrieval: RetrievalOptions


#: The answer settings: every dataclass field but the ``retrieval`` part.
_ANSWER_FIELDS: Final[tuple[str, ...]] = tuple(f.name for f in fields(RagOptions) if f.name != "retrieval")


def _check_ask_part(part: RetrievalOptions, defaults: RetrievalOptions) -> None:
    """Refuse a ``retrieval`` part that sets what an ask cannot change (it would be ignored silently)."""
    other = [
        n for n in defaults.flat_names() if n not in ASK_RETRIEVAL_FIELDS and getattr(part, n) != getattr(defaults, n)
    ]
    if other:
        raise ConfigError(
            f"RagOptions.retrieval sets {', '.join(other)}, which an ask cannot change: it takes only "
            f"{', '.join(ASK_RETRIEVAL_FIELDS)}; set the others on the Rag (Rag(retrieval_options=…) or "
            "[retrieval] in ragwright.toml)",
            field="retrieval",
        )


def _retrieval() -> Any:
    from ragwright.retrieve import options

    return options
