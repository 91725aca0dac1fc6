"""Options of the retrieval strategies (decorators around a retriever), frozen and validated on construction.

Defaults are the seed's. A bad value raises :class:`~ragwright.errors.ConfigError` from the line that
configures it, never in the middle of a query. Re-exported from :mod:`ragwright.options`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ragwright._validate import OptionsBase, check_bool, check_choice, check_float, check_int
from ragwright.errors import ConfigError
from ragwright.model.metadata import validate_key

CragGrader = Literal["auto", "heuristic", "llm"]


def _check_keys(name: str, value: Any, *, optional: bool = False) -> tuple[str, ...] | None:
    if value is None and optional:
        return None
    if isinstance(value, str) or not isinstance(value, tuple | list):
        raise ConfigError.invalid(name, value, "a sequence of metadata keys" + (" or None" if optional else ""))
    try:
        return tuple(validate_key(k) for k in value)
    except ValueError as exc:
        raise ConfigError.invalid(name, value, f"a sequence of metadata keys ({exc})") from exc


def _check_template(name: str, value: Any, placeholders: tuple[str, ...]) -> None:
    if value is None:
        return
    missing = [p for p in placeholders if "{" + p + "}" not in str(value)] if isinstance(value, str) else []
    if not isinstance(value, str) or not value.strip() or missing:
        need = ", ".join("{" + p + "}" for p in placeholders)
        raise ConfigError.invalid(name, value, f"None or a non-empty template containing {need}")


@dataclass(frozen=True)
class TagRetrievalOptions(OptionsBase):
    """Tag-based retrieval: the query is matched against every tag value the caller may
    see, and the best value of up to ``top_k`` keys scoring at least ``min_score`` (cosine) is merged
    into the metadata filter.

    ``keys``: chunk metadata keys indexed as tags besides the caller's ingestion metadata (the
    ``metadata=`` given to ``ingest``). String values longer
    than ``max_value_length`` are not tags. ``relax_on_empty``: when the injected tags leave no
    result, retrieve again without them (a business filter is relaxed; a security filter never is).
    """

    top_k: int = 1
    min_score: float = 0.82
    keys: tuple[str, ...] | None = None
    max_value_length: int = 100
    relax_on_empty: bool = True

    def __post_init__(self) -> None:
        check_int("top_k", self.top_k, minimum=1)
        check_float("min_score", self.min_score, lo=-1.0, hi=1.0)
        object.__setattr__(self, "keys", _check_keys("keys", self.keys, optional=True))
        check_int("max_value_length", self.max_value_length, minimum=1)
        check_bool("relax_on_empty", self.relax_on_empty)


@dataclass(frozen=True)
class TimeWeightedOptions(OptionsBase):
    """Time-weighted retrieval: ``score × e^(−decay_rate × age_hours)``.

    The timestamp is the first of ``updated_at``, ``created_at``, then ``fallback_metadata_keys`` in
    order that is present and parses (ISO 8601, or a number of seconds since the epoch); none → 1.0.
    The default rate halves a score in about 69 hours; 0 means no decay.
    """

    decay_rate: float = 0.01
    fallback_metadata_keys: tuple[str, ...] = ("updated_at", "published_at", "lastmod", "received_at")

    def __post_init__(self) -> None:
        check_float("decay_rate", self.decay_rate, lo=0.0)
        object.__setattr__(
            self, "fallback_metadata_keys", _check_keys("fallback_metadata_keys", self.fallback_metadata_keys)
        )


@dataclass(frozen=True)
class DeepResearchOptions(OptionsBase):
    """Deep research: up to ``max_depth`` sufficiency checks, each proposing up to
    ``sub_query_count`` sub-queries. ``sufficiency_prompt`` replaces the built-in prompt and must
    contain ``{query}``, ``{context}`` and ``{count}``; ``context_chars`` bounds the context shown."""

    max_depth: int = 3
    sub_query_count: int = 3
    sufficiency_prompt: str | None = None
    context_chars: int = 6000

    def __post_init__(self) -> None:
        check_int("max_depth", self.max_depth, minimum=1)
        check_int("sub_query_count", self.sub_query_count, minimum=1)
        _check_template("sufficiency_prompt", self.sufficiency_prompt, ("query", "context", "count"))
        check_int("context_chars", self.context_chars, minimum=100)


@dataclass(frozen=True)
class AdaptiveOptions(OptionsBase):
    """Adaptive retrieval: the query is classified simple / complex / multi-hop and gets
    ``top_k`` 3 / 8 / 10; multi-query on for complex and multi-hop, HyDE only for multi-hop.
    ``use_llm``: ask the chat model when the heuristic cannot decide (default complex otherwise)."""

    simple_top_k: int = 3
    complex_top_k: int = 8
    multi_hop_top_k: int = 10
    use_llm: bool = True

    def __post_init__(self) -> None:
        for name in ("simple_top_k", "complex_top_k", "multi_hop_top_k"):
            check_int(name, getattr(self, name), minimum=1)
        check_bool("use_llm", self.use_llm)


@dataclass(frozen=True)
class CragOptions(OptionsBase):
    """Corrective RAG. The per-call switch, threshold and fallback mode are
    ``RetrievalOptions.use_crag`` / ``crag_score_threshold`` / ``crag_fallback_mode``.

    ``grader``: ``"heuristic"`` (a chunk matches when ``overlap_threshold`` of the query's tokens
    occur in it), ``"llm"`` (each chunk graded relevant / ambiguous / irrelevant by the chat model) or
    ``"auto"`` (the model when one is configured). ``web_result_count``: web results asked for.
    The corrective answer loop retries at most ``max_attempts`` times and needs ``min_relevant``
    relevant passages to answer; otherwise it declines.
    """

    grader: CragGrader = "auto"
    overlap_threshold: float = 0.3
    web_result_count: int = 5
    max_attempts: int = 3
    min_relevant: int = 1
    max_concurrency: int = 4

    def __post_init__(self) -> None:
        check_choice("grader", self.grader, ("auto", "heuristic", "llm"))
        check_float("overlap_threshold", self.overlap_threshold, lo=0.0, hi=1.0, lo_open=True)
        for name in ("web_result_count", "max_attempts", "min_relevant", "max_concurrency"):
            check_int(name, getattr(self, name), minimum=1)


@dataclass(frozen=True)
class StrategyOptions(OptionsBase):
    """Which strategies a ``Rag`` stacks around its retriever (``None`` = not installed).

    Adaptive retrieval and corrective RAG are installed by default but act only when a call asks
    (``RetrievalOptions.use_adaptive_retrieval`` / ``use_crag``, off by default). Tag-based and
    time-weighted retrieval and deep research change every call once installed, so they are opt-in,
    as in the seed; their per-call switches (``use_tag_retrieval``, ``use_time_weighting``) can then
    turn them off for one call.
    """

    tags: TagRetrievalOptions | None = None
    time_weighting: TimeWeightedOptions | None = None
    deep_research: DeepResearchOptions | None = None
    adaptive: AdaptiveOptions | None = AdaptiveOptions()
    crag: CragOptions | None = CragOptions()

    def __post_init__(self) -> None:
        for name, kind in (
            ("tags", TagRetrievalOptions),
            ("time_weighting", TimeWeightedOptions),
            ("deep_research", DeepResearchOptions),
            ("adaptive", AdaptiveOptions),
            ("crag", CragOptions),
        ):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise ConfigError.invalid(name, value, f"a {kind.__name__} or None")


__all__ = [
    "AdaptiveOptions",
    "CragOptions",
    "DeepResearchOptions",
    "StrategyOptions",
    "TagRetrievalOptions",
    "TimeWeightedOptions",
]
