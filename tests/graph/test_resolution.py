"""The merge rule of entity resolution (graph/resolve.py), on hand-made vectors."""

from __future__ import annotations

import numpy as np
import pytest

from ragwright.errors import ConfigError
from ragwright.graph import GraphOptions
from ragwright.graph.resolve import compatible, merge_targets, normalised


def unit(angle_deg: float) -> list[float]:
    a = np.radians(angle_deg)
    return [float(np.cos(a)), float(np.sin(a))]


def test_merges_at_the_threshold_and_not_below() -> None:
    # cos(10°) ≈ 0.985, cos(30°) ≈ 0.866
    keys = ["contoso", "contoso group", "fabrikam"]
    vectors = [unit(0), unit(10), unit(30)]
    assert merge_targets(keys, vectors, 0.98) == {1: 0}
    assert merge_targets(keys, vectors, 0.86) == {1: 0, 2: 0}
    assert merge_targets(keys, vectors, 0.99) == {}


def test_clusters_are_stars_around_the_earlier_name_never_chains() -> None:
    # b is close to a and to c, but c is not close to a: c must not join a through b
    keys = ["a name", "b name", "c name"]
    vectors = [unit(0), unit(8), unit(16)]  # a·b = b·c = cos 8° ≈ 0.990, a·c = cos 16° ≈ 0.961
    assert merge_targets(keys, vectors, 0.98) == {1: 0}


def test_names_differing_in_a_number_never_merge() -> None:
    assert not compatible("iphone 14", "iphone 15")
    assert compatible("iphone 14 pro", "iphone 14")
    assert merge_targets(["iphone 14", "iphone 15"], [unit(0), unit(0)], 0.9) == {}


def test_scale_of_the_vectors_does_not_matter() -> None:
    vectors = normalised([[3.0, 0.0], [0.0, 0.0]])
    assert np.allclose(vectors, [[1.0, 0.0], [0.0, 0.0]])
    assert merge_targets(["x name", "y name"], [[5.0, 0.1], [0.2, 0.0]], 0.99) == {1: 0}


def test_keys_and_vectors_must_pair_up() -> None:
    with pytest.raises(ValueError, match="2 keys but 1 vectors"):
        merge_targets(["a", "b"], [unit(0)], 0.9)


@pytest.mark.parametrize("bad", [0.4, 1.2])
def test_merge_similarity_out_of_range_is_refused(bad: float) -> None:
    with pytest.raises(ConfigError, match="merge_similarity"):
        GraphOptions(merge_similarity=bad)
