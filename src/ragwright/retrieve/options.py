"""Retrieval options, beside the retrieval stage: one call's :class:`RetrievalOptions`, composed of
its parts — :class:`SearchOptions` (the arms and their fusion), :class:`PostprocessOptions`
(diversity, reranking, expansion, compression, budget, order: beside its stage in
:mod:`ragwright.postprocess.options`), :class:`TransformSwitches` and
:class:`StrategySwitches` (which configured transforms, strategies and caches a call uses) — plus
:data:`PRESETS` (the retrieval modes by name, the only table of them). Each part's options live beside
its stage — :class:`SearchOptions` in :mod:`~ragwright.retrieve.arms`, :class:`EnsembleOptions` in
:mod:`~ragwright.retrieve.fusion`, :class:`FeedbackOptions` in :mod:`~ragwright.retrieve.feedback`,
:class:`StrategySwitches` in :mod:`ragwright.retrieve.strategies.switches` — and are re-exported here;
:mod:`ragwright.options` re-exports everything here.

The flat names of the seed (``RetrievalOptions(use_mmr=True)``, ``options.use_mmr``,
``options.merged(top_k=3)``) remain: constructor keywords go to the part that owns them
(:data:`FLAT_FIELDS`), and each is a read-only property. :class:`RetrievalOverrides` types them for
per-call overrides (``Rag.search(q, **overrides)``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Final, TypedDict, Unpack

from ragwright._validate import OptionsBase, check_bool, check_int
from ragwright.errors import ConfigError
from ragwright.model.filters import Filter, FilterLike, as_filter
from ragwright.model.specs import Spec
from ragwright.postprocess.options import CompressionMode, ParentMode, PostprocessOptions

# The parts' own options live beside their stages; re-exported here (``ragwright.options`` reads them here).
from ragwright.retrieve.arms import SearchOptions as SearchOptions
from ragwright.retrieve.feedback import ROCCHIO_SCOPES as ROCCHIO_SCOPES
from ragwright.retrieve.feedback import FeedbackOptions as FeedbackOptions
from ragwright.retrieve.fusion import DEFAULT_WEIGHTS as DEFAULT_WEIGHTS
from ragwright.retrieve.fusion import EnsembleOptions as EnsembleOptions
from ragwright.retrieve.fusion import FusionMethod as FusionMethod
from ragwright.retrieve.fusion import ScoreNormalization as ScoreNormalization
from ragwright.retrieve.strategies.switches import CragFallbackMode as CragFallbackMode
from ragwright.retrieve.strategies.switches import StrategySwitches as StrategySwitches

#: Options accepted now whose stage arrives with a later release: retrieval logs ``option_not_active``
#: once per option when a call asks for one of them with a non-default value.
NOT_YET_ACTIVE: Final[frozenset[str]] = frozenset()


#: The retrieval modes by name: what ``ragwright search --mode``, ``ragwright eval --config`` and the
#: server's ``mode`` mean, as option overrides. ``hybrid`` is the default of the ``Rag`` facade, the CLI
#: and the server (a bare ``RetrievalOptions()`` stays pure dense search): dense + BM25 fused by a
#: convex combination, with Rocchio feedback — each part chosen by measurement (``benchmarks/RESULTS.md``).
PRESETS: Final[dict[str, dict[str, Any]]] = {
    "hybrid": {"use_hybrid_search": True, "feedback": FeedbackOptions()},
    "dense": {"use_hybrid_search": False},
    "bm25": {"use_dense_search": False, "use_keyword_search": True},
}


def _check_metadata_filter(value: Any) -> Filter | None:
    try:
        return as_filter(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError.invalid("metadata_filter", value, f"a mapping of typed values or a filter ({exc})") from exc


@dataclass(frozen=True)
class TransformSwitches(OptionsBase):
    """Which configured query transforms a call runs (``use_hyde`` and ``use_multi_query`` default on
    and do nothing unless configured; rewriting and self-query are off)."""

    use_hyde: bool = True
    use_multi_query: bool = True
    use_query_rewrite: bool = False
    use_self_query: bool = False

    def __post_init__(self) -> None:
        for f in fields(self):
            check_bool(f.name, getattr(self, f.name))


#: The parts of :class:`RetrievalOptions`, by attribute.
PARTS: Final[dict[str, type[OptionsBase]]] = {
    "search": SearchOptions,
    "postprocess": PostprocessOptions,
    "transforms": TransformSwitches,
    "strategies": StrategySwitches,
}
#: Each flat (seed) name and the part that owns it.
FLAT_FIELDS: Final[dict[str, str]] = {name: part for part, cls in PARTS.items() for name in cls.field_names()}


class FlatRetrievalFields(TypedDict, total=False):
    """The seed's flat names of the parts' fields, typed (constructor keywords)."""

    use_dense_search: bool
    use_keyword_search: bool | None
    use_hybrid_search: bool
    use_sparse_search: bool | None
    min_score: float
    ensemble: EnsembleOptions | None
    feedback: FeedbackOptions | None
    use_redundancy_filter: bool
    redundancy_threshold: float
    use_mmr: bool
    mmr_lambda: float
    mmr_candidate_count: int | None
    use_reranking: bool
    candidate_count: int | None
    rerank_min_score: float | None
    use_parent_document: bool
    parent_mode: ParentMode
    auto_merge_ratio: float
    neighbour_window: int
    use_sentence_window: bool
    use_compression: bool
    compression: CompressionMode
    compression_min_similarity: float
    compression_max_sentences: int | None
    max_context_tokens: int | None
    use_lost_in_the_middle_reordering: bool
    use_hyde: bool
    use_multi_query: bool
    use_query_rewrite: bool
    use_self_query: bool
    use_adaptive_retrieval: bool
    use_crag: bool
    crag_score_threshold: float
    crag_fallback_mode: CragFallbackMode
    use_tag_retrieval: bool
    use_time_weighting: bool
    use_cache_embedding: bool
    use_cache_result: bool


class RetrievalOverrides(FlatRetrievalFields, total=False):
    """Per-call overrides of :class:`RetrievalOptions` (``Rag.search(q, top_k=3, use_mmr=True)``)."""

    top_k: int
    metadata_filter: FilterLike
    filter: Spec | None
    search: SearchOptions
    postprocess: PostprocessOptions
    transforms: TransformSwitches
    strategies: StrategySwitches


@dataclass(frozen=True, init=False)
class RetrievalOptions(OptionsBase):
    """Options of one retrieval call. All optional.

    With no options: five results, pure semantic search, no score floor.
    ``use_hyde``, ``use_multi_query``, ``use_parent_document`` and ``use_reranking`` are per-call
    switches for stages that must also be *configured* (a generator, a reranker …); they default to
    on, as in the seed, and do nothing when the stage is not configured. ``use_query_rewrite`` and
    ``use_self_query`` switch on the configured rewriting and self-query transforms (off by default).

    Composed: ``top_k``, the filters, and the parts ``search``, ``postprocess``, ``transforms`` and
    ``strategies``; every flat name of the seed is accepted as a keyword and readable as an attribute.
    """

    top_k: int = 5
    metadata_filter: FilterLike = None
    filter: Spec | None = None
    search: SearchOptions = field(default_factory=SearchOptions)
    postprocess: PostprocessOptions = field(default_factory=PostprocessOptions)
    transforms: TransformSwitches = field(default_factory=TransformSwitches)
    strategies: StrategySwitches = field(default_factory=StrategySwitches)

    def __init__(
        self,
        top_k: int = 5,
        metadata_filter: FilterLike = None,
        filter: Spec | None = None,
        search: SearchOptions | None = None,
        postprocess: PostprocessOptions | None = None,
        transforms: TransformSwitches | None = None,
        strategies: StrategySwitches | None = None,
        **flat: Unpack[FlatRetrievalFields],
    ) -> None:
        given: dict[str, Any] = {
            "search": search,
            "postprocess": postprocess,
            "transforms": transforms,
            "strategies": strategies,
        }
        unknown = [k for k in flat if k not in FLAT_FIELDS]
        if unknown:
            type(self).check_keys(unknown)  # refused with a suggestion
        for part, cls in PARTS.items():
            value = given[part]
            if value is not None and not isinstance(value, cls):
                raise ConfigError.invalid(part, value, f"a {cls.__name__} or None")
            mine = {k: v for k, v in flat.items() if FLAT_FIELDS[k] == part}
            if value is None:
                value = cls(**mine)
            elif mine:
                value = value.merged(**mine)
            object.__setattr__(self, part, value)
        object.__setattr__(self, "top_k", top_k)
        object.__setattr__(self, "metadata_filter", metadata_filter)
        object.__setattr__(self, "filter", filter)
        self.__post_init__()

    def __post_init__(self) -> None:
        check_int("top_k", self.top_k, minimum=1)
        object.__setattr__(self, "metadata_filter", _check_metadata_filter(self.metadata_filter))
        if self.filter is not None and not isinstance(self.filter, Spec):
            raise ConfigError.invalid("filter", self.filter, "a ragwright.Spec (MinScoreSpec, HasTagSpec …) or None")
        check_int("mmr_candidate_count", self.mmr_candidate_count, minimum=self.top_k, optional=True)
        check_int("candidate_count", self.candidate_count, minimum=self.top_k, optional=True)

    def merged(self, **overrides: Unpack[RetrievalOverrides]) -> RetrievalOptions:  # type: ignore[override]
        """A copy with *overrides* (flat names, parts or top-level fields; typed) applied and validated again."""
        self.check_keys(list(overrides))
        changes: dict[str, Any] = dict(overrides)  # flat names go through __init__ to their part
        return replace(self, **changes)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Every name a mapping or an override may use: the top-level fields, the parts, and the flat names."""
        return (*(f.name for f in fields(cls)), *FLAT_FIELDS)

    @classmethod
    def flat_names(cls) -> tuple[str, ...]:
        """The seed's names, in their flat form (``top_k``, the filters, every part's fields)."""
        return ("top_k", "metadata_filter", "filter", *FLAT_FIELDS)

    def flat(self) -> dict[str, Any]:
        """``{name: value}`` under the seed's flat names."""
        return {name: getattr(self, name) for name in self.flat_names()}

    @property
    def keyword_active(self) -> bool:
        """The BM25 arm runs when asked explicitly, or with hybrid search unless switched off."""
        return self.search.keyword_active

    @property
    def arms(self) -> tuple[str, ...]:
        """The search arms this call runs, in a fixed order."""
        return self.search.arms

    @property
    def sparse_active(self) -> bool:
        """Whether the sparse arm joins (:attr:`SearchOptions.sparse_active`)."""
        return self.search.sparse_active

    @property
    def arm_candidates(self) -> int:
        """Hits each arm contributes to fusion."""
        if self.ensemble is not None and self.ensemble.candidates is not None:
            return max(self.ensemble.candidates, self.top_k)
        return max(50, 2 * self.top_k)

    @property
    def effective_candidate_count(self) -> int:
        """How many candidates to over-fetch when a reranker runs: ``candidate_count`` or top_k × 3."""
        return self.candidate_count if self.candidate_count is not None else self.top_k * 3

    def inactive_requests(self) -> list[str]:
        """Options set to a non-default value whose stage is not active yet."""
        defaults = RetrievalOptions()
        return sorted(
            name
            for name in NOT_YET_ACTIVE
            if name in self.field_names() and getattr(self, name) != getattr(defaults, name)
        )

    # -- the seed's flat names, read from the part that owns each ---------------------------------------
    @property
    def use_dense_search(self) -> bool:
        return self.search.use_dense_search

    @property
    def use_keyword_search(self) -> bool | None:
        return self.search.use_keyword_search

    @property
    def use_hybrid_search(self) -> bool:
        return self.search.use_hybrid_search

    @property
    def use_sparse_search(self) -> bool | None:
        return self.search.use_sparse_search

    @property
    def min_score(self) -> float:
        return self.search.min_score

    @property
    def ensemble(self) -> EnsembleOptions | None:
        return self.search.ensemble

    @property
    def feedback(self) -> FeedbackOptions | None:
        return self.search.feedback

    @property
    def use_redundancy_filter(self) -> bool:
        return self.postprocess.use_redundancy_filter

    @property
    def redundancy_threshold(self) -> float:
        return self.postprocess.redundancy_threshold

    @property
    def use_mmr(self) -> bool:
        return self.postprocess.use_mmr

    @property
    def mmr_lambda(self) -> float:
        return self.postprocess.mmr_lambda

    @property
    def mmr_candidate_count(self) -> int | None:
        return self.postprocess.mmr_candidate_count

    @property
    def use_reranking(self) -> bool:
        return self.postprocess.use_reranking

    @property
    def candidate_count(self) -> int | None:
        return self.postprocess.candidate_count

    @property
    def rerank_min_score(self) -> float | None:
        return self.postprocess.rerank_min_score

    @property
    def use_parent_document(self) -> bool:
        return self.postprocess.use_parent_document

    @property
    def parent_mode(self) -> ParentMode:
        return self.postprocess.parent_mode

    @property
    def auto_merge_ratio(self) -> float:
        return self.postprocess.auto_merge_ratio

    @property
    def neighbour_window(self) -> int:
        return self.postprocess.neighbour_window

    @property
    def use_sentence_window(self) -> bool:
        return self.postprocess.use_sentence_window

    @property
    def use_compression(self) -> bool:
        return self.postprocess.use_compression

    @property
    def compression(self) -> CompressionMode:
        return self.postprocess.compression

    @property
    def compression_min_similarity(self) -> float:
        return self.postprocess.compression_min_similarity

    @property
    def compression_max_sentences(self) -> int | None:
        return self.postprocess.compression_max_sentences

    @property
    def max_context_tokens(self) -> int | None:
        return self.postprocess.max_context_tokens

    @property
    def use_lost_in_the_middle_reordering(self) -> bool:
        return self.postprocess.use_lost_in_the_middle_reordering

    @property
    def use_hyde(self) -> bool:
        return self.transforms.use_hyde

    @property
    def use_multi_query(self) -> bool:
        return self.transforms.use_multi_query

    @property
    def use_query_rewrite(self) -> bool:
        return self.transforms.use_query_rewrite

    @property
    def use_self_query(self) -> bool:
        return self.transforms.use_self_query

    @property
    def use_adaptive_retrieval(self) -> bool:
        return self.strategies.use_adaptive_retrieval

    @property
    def use_crag(self) -> bool:
        return self.strategies.use_crag

    @property
    def crag_score_threshold(self) -> float:
        return self.strategies.crag_score_threshold

    @property
    def crag_fallback_mode(self) -> CragFallbackMode:
        return self.strategies.crag_fallback_mode

    @property
    def use_tag_retrieval(self) -> bool:
        return self.strategies.use_tag_retrieval

    @property
    def use_time_weighting(self) -> bool:
        return self.strategies.use_time_weighting

    @property
    def use_cache_embedding(self) -> bool:
        return self.strategies.use_cache_embedding

    @property
    def use_cache_result(self) -> bool:
        return self.strategies.use_cache_result
