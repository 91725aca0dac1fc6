"""Every option class of ragwright, importable from one place; each is defined beside its stage.

=====================================  ==============================================================
:mod:`ragwright.parse.options`         ``ParseOptions``
:mod:`ragwright.chunk.options`         ``ChunkingOptions``
:mod:`ragwright.ingest.options`        ``IngestOptions``, ``ParentOptions``
:mod:`ragwright.postprocess.options`   ``PostprocessOptions`` (a part of ``RetrievalOptions``)
:mod:`ragwright.retrieve.options`      ``RetrievalOptions`` (composed: ``SearchOptions``,
                                       ``PostprocessOptions``, ``TransformSwitches``,
                                       ``StrategySwitches``; the flat seed names kept), ``PRESETS``,
                                       ``EnsembleOptions``, ``FeedbackOptions``, ``RetrievalOverrides``
:mod:`ragwright.retrieve.transforms`   ``TransformOptions`` and the transforms' options
:mod:`ragwright.retrieve.strategies`   ``StrategyOptions`` and the strategies' options
:mod:`ragwright.cache.options`         ``CacheOptions``
:mod:`ragwright.generate.options`      ``RagOptions``, ``RagOverrides``, ``AnswerMode``
:mod:`ragwright._validate`             the toolkit (``check_*``, ``OptionsBase``): the bottom layer
=====================================  ==============================================================

Each is loaded on first use, so importing this module loads no stage. Code inside the package imports
an option class from its home.

Typed, frozen options with the seeds' defaults, validated on construction: a bad value raises
:class:`~ragwright.errors.ConfigError` naming the field, the value and the accepted range, at
configuration time, never in the middle of a query. Unknown keys given through ``from_dict`` or
``merged`` are refused with a suggestion. Stages that do not exist yet accept their options now and
say so: ``NOT_YET_ACTIVE`` lists them, and retrieval logs ``option_not_active`` once per option
when a call asks for one of them with a non-default value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ragwright import _validate

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

# The stages' own options, re-exported on first use (no stage package loads with this module).
_STAGE_OPTIONS: Final[dict[str, str]] = {
    "CompressionMode": "ragwright.postprocess.options",
    "ParentMode": "ragwright.postprocess.options",
    "PostprocessOptions": "ragwright.postprocess.options",
    "ChunkingOptions": "ragwright.chunk.options",
    "ParseOptions": "ragwright.parse.options",
    "IngestOptions": "ragwright.ingest.options",
    "ParentOptions": "ragwright.ingest.options",
    "AnswerMode": "ragwright.generate.options",
    "RagOptions": "ragwright.generate.options",
    "RagOverrides": "ragwright.generate.options",
}
if TYPE_CHECKING:
    from ragwright.chunk.options import ChunkingOptions as ChunkingOptions
    from ragwright.generate.options import AnswerMode as AnswerMode
    from ragwright.generate.options import RagOptions as RagOptions
    from ragwright.generate.options import RagOverrides as RagOverrides
    from ragwright.ingest.options import IngestOptions as IngestOptions
    from ragwright.ingest.options import ParentOptions as ParentOptions
    from ragwright.parse.options import ParseOptions as ParseOptions

# Retrieval's options live beside retrieval (ragwright.retrieve.options); re-exported here on first use,
# so this module stays in its layer (nothing above it loads with it).
_RETRIEVAL_OPTIONS: Final = (
    "DEFAULT_WEIGHTS",
    "FLAT_FIELDS",
    "NOT_YET_ACTIVE",
    "PRESETS",
    "CragFallbackMode",
    "EnsembleOptions",
    "FeedbackOptions",
    "FlatRetrievalFields",
    "FusionMethod",
    "RetrievalOptions",
    "RetrievalOverrides",
    "ScoreNormalization",
    "SearchOptions",
    "StrategySwitches",
    "TransformSwitches",
)
if TYPE_CHECKING:
    from ragwright.postprocess.options import CompressionMode as CompressionMode
    from ragwright.postprocess.options import ParentMode as ParentMode
    from ragwright.postprocess.options import PostprocessOptions as PostprocessOptions
    from ragwright.retrieve.options import DEFAULT_WEIGHTS as DEFAULT_WEIGHTS
    from ragwright.retrieve.options import FLAT_FIELDS as FLAT_FIELDS
    from ragwright.retrieve.options import NOT_YET_ACTIVE as NOT_YET_ACTIVE
    from ragwright.retrieve.options import PRESETS as PRESETS
    from ragwright.retrieve.options import CragFallbackMode as CragFallbackMode
    from ragwright.retrieve.options import EnsembleOptions as EnsembleOptions
    from ragwright.retrieve.options import FeedbackOptions as FeedbackOptions
    from ragwright.retrieve.options import FlatRetrievalFields as FlatRetrievalFields
    from ragwright.retrieve.options import FusionMethod as FusionMethod
    from ragwright.retrieve.options import RetrievalOptions as RetrievalOptions
    from ragwright.retrieve.options import RetrievalOverrides as RetrievalOverrides
    from ragwright.retrieve.options import ScoreNormalization as ScoreNormalization
    from ragwright.retrieve.options import SearchOptions as SearchOptions
    from ragwright.retrieve.options import StrategySwitches as StrategySwitches
    from ragwright.retrieve.options import TransformSwitches as TransformSwitches


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
    if name in _STAGE_OPTIONS:
        import importlib

        return getattr(importlib.import_module(_STAGE_OPTIONS[name]), name)
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
