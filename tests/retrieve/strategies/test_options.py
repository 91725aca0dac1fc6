from __future__ import annotations

import math
from typing import Any

import pytest

from ragwright.errors import ConfigError
from ragwright.options import (
    NOT_YET_ACTIVE,
    AdaptiveOptions,
    CacheOptions,
    CragOptions,
    DeepResearchOptions,
    StrategyOptions,
    TagRetrievalOptions,
    TimeWeightedOptions,
)


@pytest.mark.parametrize("value", [0, -1, 1.5, True, None])
def test_tag_top_k_must_be_positive(value: Any) -> None:
    with pytest.raises(ConfigError, match="top_k"):
        TagRetrievalOptions(top_k=value)


@pytest.mark.parametrize("value", [1.01, -1.01, math.nan, math.inf, -math.inf, "0.8"])
def test_tag_min_score_between_minus_one_and_one_and_finite(value: Any) -> None:
    with pytest.raises(ConfigError, match="min_score"):
        TagRetrievalOptions(min_score=value)


def test_tag_defaults_and_bounds_accepted() -> None:
    assert (TagRetrievalOptions().top_k, TagRetrievalOptions().min_score) == (1, 0.82)
    assert TagRetrievalOptions(min_score=-1.0).min_score == -1.0
    assert TagRetrievalOptions(min_score=1.0, keys=["author"]).keys == ("author",)
    with pytest.raises(ConfigError, match="keys"):
        TagRetrievalOptions(keys="author")  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [-0.001, math.nan, math.inf])
def test_decay_rate_non_negative_and_finite(value: float) -> None:
    with pytest.raises(ConfigError, match="decay_rate"):
        TimeWeightedOptions(decay_rate=value)


def test_time_weighted_defaults() -> None:
    o = TimeWeightedOptions()
    assert o.decay_rate == 0.01
    assert o.fallback_metadata_keys == ("updated_at", "published_at", "lastmod", "received_at")
    assert TimeWeightedOptions(decay_rate=0).decay_rate == 0


@pytest.mark.parametrize("field", ["max_depth", "sub_query_count"])
@pytest.mark.parametrize("value", [0, -1])
def test_deep_research_counts_must_be_positive(field: str, value: int) -> None:
    with pytest.raises(ConfigError, match=field):
        DeepResearchOptions(**{field: value})


def test_deep_research_prompt_needs_its_placeholders() -> None:
    assert DeepResearchOptions().max_depth == 3 and DeepResearchOptions().sub_query_count == 3
    DeepResearchOptions(sufficiency_prompt="Q {query} C {context} N {count}")
    with pytest.raises(ConfigError, match="sufficiency_prompt"):
        DeepResearchOptions(sufficiency_prompt="Q {query} C {context}")


def test_adaptive_and_crag_options_validated() -> None:
    with pytest.raises(ConfigError, match="simple_top_k"):
        AdaptiveOptions(simple_top_k=0)
    with pytest.raises(ConfigError, match="grader"):
        CragOptions(grader="oracle")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="overlap_threshold"):
        CragOptions(overlap_threshold=0)
    with pytest.raises(ConfigError, match="max_attempts"):
        CragOptions(max_attempts=0)
    assert CragOptions().overlap_threshold == 0.3


def test_cache_options_validated() -> None:
    o = CacheOptions()
    assert (o.result_ttl_s, o.embedding_ttl_s) == (300.0, 1800.0)
    with pytest.raises(ConfigError, match="result_ttl_s"):
        CacheOptions(result_ttl_s=0)
    with pytest.raises(ConfigError, match="namespace"):
        CacheOptions(namespace="a b")


def test_strategy_options_check_their_parts() -> None:
    assert StrategyOptions().adaptive == AdaptiveOptions() and StrategyOptions().tags is None
    with pytest.raises(ConfigError, match="tags"):
        StrategyOptions(tags=TimeWeightedOptions())  # type: ignore[arg-type]


def test_strategy_switches_are_active() -> None:
    for name in ("use_adaptive_retrieval", "use_crag", "crag_score_threshold", "crag_fallback_mode"):
        assert name not in NOT_YET_ACTIVE
