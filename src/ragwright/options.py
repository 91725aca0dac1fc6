"""Every option class, re-exported from beside its stage, plus the answer options of ``ask``.

Retrieval's options live in :mod:`ragwright.retrieve.options` (composed: search arms,
post-processing, transform and strategy switches; the flat seed names kept), the transforms' and
strategies' beside them, the cache's in :mod:`ragwright.cache.options`, the validation toolkit in
:mod:`ragwright._validate` (the bottom layer). Code inside the package imports each from its home;
this module is the public place to import them from.

Typed, frozen options with the seeds' defaults, validated on construction.

A bad value raises :class:`~ragwright.errors.ConfigError` naming the field, the value and the
accepted range, at configuration time, never in the middle of a query. Unknown keys given through
:meth:`RetrievalOptions.from_dict` / :meth:`RagOptions.from_dict` are refused with a suggestion.

Stages that do not exist yet accept their options now (so code written against them keeps working)
and say so: :data:`NOT_YET_ACTIVE` lists them, and retrieval logs ``option_not_active`` once per
option when a call asks for one of them with a non-default value. Each later stage turns its options on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict

from ragwright import _validate
from ragwright.errors import ConfigError
from ragwright.model.filters import FilterLike

__all__ = [
    "DEFAULT_WEIGHTS",
    "FLAT_FIELDS",
    "NOT_YET_ACTIVE",
    "PRESETS",
    "AdaptiveOptions",
    "AllowedField",
    "AnswerMode",
    "CacheOptions",
    "ChunkingOptions",
    "CompressionMode",
    "CragFallbackMode",
    "CragOptions",
    "DeepResearchOptions",
    "EnsembleOptions",
    "FeedbackOptions",
    "FlatRetrievalFields",
    "FusionMethod",
    "HydeOptions",
    "IngestOptions",
    "MultiQueryOptions",
    "OptionsBase",
    "ParentMode",
    "ParentOptions",
    "ParseOptions",
    "PostprocessOptions",
    "RagOptions",
    "RagOverrides",
    "RetrievalOptions",
    "RetrievalOverrides",
    "RewriteOptions",
    "ScoreNormalization",
    "SearchOptions",
    "SelfQueryOptions",
    "StrategyOptions",
    "StrategySwitches",
    "TagRetrievalOptions",
    "TimeWeightedOptions",
    "TransformOptions",
    "TransformSwitches",
    "check_bool",
    "check_choice",
    "check_float",
    "check_int",
]

# Retrieval's options live beside retrieval (ragwright.retrieve.options); re-exported here on first use,
# so this module stays in its layer (nothing above it loads with it).
_RETRIEVAL_OPTIONS: Final = (
    "DEFAULT_WEIGHTS",
    "FLAT_FIELDS",
    "NOT_YET_ACTIVE",
    "PRESETS",
    "CompressionMode",
    "CragFallbackMode",
    "EnsembleOptions",
    "FeedbackOptions",
    "FlatRetrievalFields",
    "FusionMethod",
    "ParentMode",
    "PostprocessOptions",
    "RetrievalOptions",
    "RetrievalOverrides",
    "ScoreNormalization",
    "SearchOptions",
    "StrategySwitches",
    "TransformSwitches",
)
if TYPE_CHECKING:
    from ragwright.retrieve.options import DEFAULT_WEIGHTS as DEFAULT_WEIGHTS
    from ragwright.retrieve.options import FLAT_FIELDS as FLAT_FIELDS
    from ragwright.retrieve.options import NOT_YET_ACTIVE as NOT_YET_ACTIVE
    from ragwright.retrieve.options import PRESETS as PRESETS
    from ragwright.retrieve.options import CompressionMode as CompressionMode
    from ragwright.retrieve.options import CragFallbackMode as CragFallbackMode
    from ragwright.retrieve.options import EnsembleOptions as EnsembleOptions
    from ragwright.retrieve.options import FeedbackOptions as FeedbackOptions
    from ragwright.retrieve.options import FlatRetrievalFields as FlatRetrievalFields
    from ragwright.retrieve.options import FusionMethod as FusionMethod
    from ragwright.retrieve.options import ParentMode as ParentMode
    from ragwright.retrieve.options import PostprocessOptions as PostprocessOptions
    from ragwright.retrieve.options import RetrievalOptions as RetrievalOptions
    from ragwright.retrieve.options import RetrievalOverrides as RetrievalOverrides
    from ragwright.retrieve.options import ScoreNormalization as ScoreNormalization
    from ragwright.retrieve.options import SearchOptions as SearchOptions
    from ragwright.retrieve.options import StrategySwitches as StrategySwitches
    from ragwright.retrieve.options import TransformSwitches as TransformSwitches

AnswerMode = Literal["extractive", "llm"]

# The validation toolkit lives in the bottom layer (ragwright._validate); these names stay for callers.
OptionsBase = _validate.OptionsBase
_OptionsBase = _validate.OptionsBase
check_int, check_float, check_bool, check_choice = (
    _validate.check_int,
    _validate.check_float,
    _validate.check_bool,
    _validate.check_choice,
)
_is_int = _validate._is_int


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
class RagOptions(_OptionsBase):
    """Options of one ``ask`` call (seed 000 ``RagOptions``): retrieval settings plus answer settings.

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


@dataclass(frozen=True)
class ChunkingOptions(_OptionsBase):
    """Options of the chunkers (seed 003 §4–5).

    * ``max_tokens``: the budget per chunk in ``cl100k_base`` tokens (section prefix and overlap
      included). Independently, no chunk ever exceeds the embedder's window in the embedder's own
      tokens (the chunker asks the embedder), so nothing is silently truncated when embedded.
    * ``min_tokens``: the smallest chunk the recursive and semantic chunkers make on purpose (tiny
      segments are merged into a neighbour within their section); a short section stays short.
    * ``prefix_section_path``: embed ``"A > B"`` before the chunk text (the displayed text is the chunk).
    * ``strategy``: ``"structural"`` (default), ``"recursive"``, ``"semantic"`` or ``"sentence_window"``
      (one chunk per sentence carrying ``window_sentences`` neighbours on each side; see :func:`make_chunker`).
    * ``overlap``: ``"none"`` (default: chunks link to their neighbours, retrieval expands),
      ``"sentences"`` (repeat the last ``overlap_sentences`` sentences of the previous chunk) or
      ``"tokens"`` (repeat about ``overlap_tokens`` cl100k tokens, starting at a word). Overlap never
      crosses a heading; each chunk records the repeated prefix length in ``metadata["overlap_chars"]``.
    * ``breakpoint_percentile``: the semantic chunker splits where the distance between neighbouring
      sentence windows is above this percentile of the document's distances; ``sentence_buffer``
      neighbours on each side of a sentence are embedded with it.
    * ``context``: contextual enrichment, a short prefix per chunk that is embedded and indexed for
      BM25 but never displayed (:mod:`ragwright.chunk.enrich`): ``"none"`` (default), ``"extractive"``
      (the document title and its lead sentences, no model) or ``"llm"`` (a sentence the chat model
      writes to situate each chunk in its document). ``context_tokens`` bounds the prefix (cl100k).
    * ``late_chunking``: each chunk's vector is pooled from token embeddings computed over its whole
      document, in windows of the embedder's size sharing ``late_overlap_tokens`` (embedder tokens; by
      default a quarter of the window) (:mod:`ragwright.chunk.late`); needs a local BERT-style ONNX embedder.
    * ``propositions``: the chat model splits each chunk into self-contained propositions, which are
      embedded and searched; a hit returns its source chunk (:mod:`ragwright.chunk.propositions`).
    """

    max_tokens: int = 400
    min_tokens: int = 16
    prefix_section_path: bool = True
    strategy: Literal["structural", "recursive", "semantic", "sentence_window"] = "structural"
    overlap: Literal["none", "sentences", "tokens"] = "none"
    overlap_sentences: int = 1
    overlap_tokens: int = 40
    breakpoint_percentile: float = 90.0
    sentence_buffer: int = 1
    window_sentences: int = 2
    context: Literal["none", "extractive", "llm"] = "none"
    context_tokens: int = 64
    late_chunking: bool = False
    late_overlap_tokens: int | None = None
    propositions: bool = False

    def __post_init__(self) -> None:
        check_int("max_tokens", self.max_tokens, minimum=16)
        check_int("min_tokens", self.min_tokens, minimum=0)
        if self.min_tokens >= self.max_tokens:
            raise ConfigError.invalid("min_tokens", self.min_tokens, f"an integer < max_tokens ({self.max_tokens})")
        check_bool("prefix_section_path", self.prefix_section_path)
        check_choice("strategy", self.strategy, ("structural", "recursive", "semantic", "sentence_window"))
        check_choice("overlap", self.overlap, ("none", "sentences", "tokens"))
        if not _is_int(self.overlap_sentences) or not 1 <= self.overlap_sentences <= 2:
            raise ConfigError.invalid("overlap_sentences", self.overlap_sentences, "an integer from 1 to 2")
        check_int("overlap_tokens", self.overlap_tokens, minimum=1)
        limit = self.max_tokens // 2
        if self.overlap == "tokens" and self.overlap_tokens > limit:
            raise ConfigError.invalid(
                "overlap_tokens", self.overlap_tokens, f"an integer from 1 to max_tokens // 2 ({limit})"
            )
        check_float("breakpoint_percentile", self.breakpoint_percentile, lo=0.0, hi=100.0, lo_open=True)
        if not _is_int(self.sentence_buffer) or not 0 <= self.sentence_buffer <= 3:
            raise ConfigError.invalid("sentence_buffer", self.sentence_buffer, "an integer from 0 to 3")
        if not _is_int(self.window_sentences) or not 1 <= self.window_sentences <= 10:
            raise ConfigError.invalid("window_sentences", self.window_sentences, "an integer from 1 to 10")
        check_choice("context", self.context, ("none", "extractive", "llm"))
        if not _is_int(self.context_tokens) or not 8 <= self.context_tokens <= 256:
            raise ConfigError.invalid("context_tokens", self.context_tokens, "an integer from 8 to 256")
        check_bool("late_chunking", self.late_chunking)
        check_int("late_overlap_tokens", self.late_overlap_tokens, minimum=0, optional=True)
        check_bool("propositions", self.propositions)


@dataclass(frozen=True)
class ParseOptions(_OptionsBase):
    """Safety limits and format switches for parsing. Every limit has a default and can be raised.

    * ``max_file_bytes``: refuse larger inputs before parsing;
    * ``max_pages`` / ``max_sheets`` / ``max_rows`` / ``max_slides``: stop with ``LimitExceeded``;
    * ``max_decompressed_bytes`` / ``max_compression_ratio``: checked from a zip's central directory
      before anything is extracted (zip bombs);
    * ``timeout_s`` / ``max_memory_mb``: per-document budget of the isolated parser worker;
    * ``pdf_password``: tried on encrypted PDFs (otherwise they are refused as "encrypted");
    * ``pdf_passwords``: per-file passwords, ``{pattern: password}`` (a mapping or pairs): a pattern is a
      file name, a path or a glob over either (``"reports/*.pdf"``); the first match wins, then
      ``pdf_password``;
    * ``ocr``: route image-only pages to OCR; ``ocr_min_confidence``: pages below are flagged, not indexed;
    * ``include_comments`` / ``include_deleted``: DOCX comments and tracked deletions (off by default);
    * ``isolate``: parse binary formats in a worker process (on by default).
    """

    max_file_bytes: int = 100 * 1024 * 1024
    max_pages: int = 2000
    max_sheets: int = 100
    max_rows: int = 200_000
    max_slides: int = 1000
    max_decompressed_bytes: int = 500 * 1024 * 1024
    max_compression_ratio: float = 200.0
    timeout_s: float = 120.0
    max_memory_mb: int = 2048
    pdf_password: str | None = field(default=None, repr=False)
    pdf_passwords: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    ocr: bool = True
    ocr_min_confidence: float = 0.6
    include_comments: bool = False
    include_deleted: bool = False
    isolate: bool = True

    def __post_init__(self) -> None:
        for name in (
            "max_file_bytes",
            "max_pages",
            "max_sheets",
            "max_rows",
            "max_slides",
            "max_decompressed_bytes",
            "max_memory_mb",
        ):
            check_int(name, getattr(self, name), minimum=1)
        check_float("max_compression_ratio", self.max_compression_ratio, lo=1.0)
        check_float("timeout_s", self.timeout_s, lo=0.0, lo_open=True)
        check_float("ocr_min_confidence", self.ocr_min_confidence, lo=0.0, hi=1.0)
        if self.pdf_password is not None and not isinstance(self.pdf_password, str):
            raise ConfigError.invalid("pdf_password", "…", "a string or None")
        raw = self.pdf_passwords
        try:
            pairs = [tuple(p) for p in (raw.items() if isinstance(raw, Mapping) else raw)]
        except TypeError:
            pairs = [()]
        checked = tuple((p[0], p[1]) for p in pairs if len(p) == 2 and all(isinstance(x, str) and x for x in p))
        if isinstance(raw, str) or len(checked) != len(pairs):
            raise ConfigError.invalid(
                "pdf_passwords", "…", "a mapping (or pairs) of non-empty file patterns to non-empty passwords"
            )
        object.__setattr__(self, "pdf_passwords", checked)
        for name in ("ocr", "include_comments", "include_deleted", "isolate"):
            check_bool(name, getattr(self, name))

    def password_for(self, path: str, name: str = "") -> str | None:
        """The password to try on the PDF at *path* (a path or ``file://`` URI) named *name*: the first
        ``pdf_passwords`` pattern matching the path or the name, else ``pdf_password``."""
        import fnmatch
        from urllib.parse import unquote, urlparse

        if path.startswith("file://"):
            path = unquote(urlparse(path).path)
        name = name or path.rsplit("/", 1)[-1]
        for pattern, password in self.pdf_passwords:
            if pattern in (path, name) or path.endswith("/" + pattern.lstrip("/")):
                return password
            if fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(name, pattern):
                return password
            if fnmatch.fnmatchcase(path, "*/" + pattern.lstrip("/")):
                return password
        return self.pdf_password


@dataclass(frozen=True)
class IngestOptions(_OptionsBase):
    """Options of an ingestion run: embedding batch size, deletion reconciliation, parsing limits.

    ``queue_size`` bounds how many parsed documents may wait for the embedder (backpressure);
    ``stage_raw`` keeps each file's raw bytes in the store by content hash (parsed documents are always
    cached), so a new chunker or model re-runs without re-reading sources or re-running OCR.

    ``delete_missing`` is sync mode: documents once listed under a folder or corpus and now absent are
    removed with every trace. Off by default (``ragwright ingest --sync`` / ``Rag.ingest(..., sync=True)``).
    """

    batch_size: int = 64
    delete_missing: bool = False
    parse: ParseOptions = field(default_factory=ParseOptions)
    queue_size: int = 256
    stage_raw: bool = True

    def __post_init__(self) -> None:
        check_int("batch_size", self.batch_size, minimum=1)
        check_int("queue_size", self.queue_size, minimum=1)
        check_bool("stage_raw", self.stage_raw)
        check_bool("delete_missing", self.delete_missing)
        if not isinstance(self.parse, ParseOptions):
            raise ConfigError.invalid("parse", self.parse, "a ParseOptions")


@dataclass(frozen=True)
class ParentOptions(_OptionsBase):
    """Parent-document retrieval (seed 000): children are searched, parents of ``chunk_size`` characters
    (``overlap`` shared between neighbours) are returned. Defaults 2048 / 100 as in the seed."""

    chunk_size: int = 2048
    overlap: int = 100

    def __post_init__(self) -> None:
        check_int("chunk_size", self.chunk_size, minimum=64)
        check_int("overlap", self.overlap, minimum=0)
        if self.overlap >= self.chunk_size:
            raise ConfigError.invalid("overlap", self.overlap, f"an integer < chunk_size ({self.chunk_size})")


# The query-transform options live beside their transforms; re-exported lazily (no import cycle).
_TRANSFORM_OPTIONS: Final = (
    "AllowedField",
    "HydeOptions",
    "MultiQueryOptions",
    "RewriteOptions",
    "SelfQueryOptions",
    "TransformOptions",
)
if TYPE_CHECKING:
    from ragwright.retrieve.transforms.options import AllowedField as AllowedField
    from ragwright.retrieve.transforms.options import HydeOptions as HydeOptions
    from ragwright.retrieve.transforms.options import MultiQueryOptions as MultiQueryOptions
    from ragwright.retrieve.transforms.options import RewriteOptions as RewriteOptions
    from ragwright.retrieve.transforms.options import SelfQueryOptions as SelfQueryOptions
    from ragwright.retrieve.transforms.options import TransformOptions as TransformOptions


# The strategy and cache options live beside their stages too (same lazy re-export).
_STRATEGY_OPTIONS: Final = (
    "AdaptiveOptions",
    "CragOptions",
    "DeepResearchOptions",
    "StrategyOptions",
    "TagRetrievalOptions",
    "TimeWeightedOptions",
)
if TYPE_CHECKING:
    from ragwright.cache.options import CacheOptions as CacheOptions
    from ragwright.retrieve.strategies.options import AdaptiveOptions as AdaptiveOptions
    from ragwright.retrieve.strategies.options import CragOptions as CragOptions
    from ragwright.retrieve.strategies.options import DeepResearchOptions as DeepResearchOptions
    from ragwright.retrieve.strategies.options import StrategyOptions as StrategyOptions
    from ragwright.retrieve.strategies.options import TagRetrievalOptions as TagRetrievalOptions
    from ragwright.retrieve.strategies.options import TimeWeightedOptions as TimeWeightedOptions


def _retrieval() -> Any:
    from ragwright.retrieve import options

    return options


def __getattr__(name: str) -> Any:
    if name in _RETRIEVAL_OPTIONS:
        return getattr(_retrieval(), name)
    if name in _TRANSFORM_OPTIONS:
        from ragwright.retrieve.transforms import options as transform_options

        return getattr(transform_options, name)
    if name in _STRATEGY_OPTIONS:
        from ragwright.retrieve.strategies import options as strategy_options

        return getattr(strategy_options, name)
    if name == "CacheOptions":
        from ragwright.cache import options as cache_options

        return cache_options.CacheOptions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
