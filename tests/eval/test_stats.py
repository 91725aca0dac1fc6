import numpy as np
import pytest

from ragwright.errors import ConfigError
from ragwright.eval.stats import bootstrap_ci, paired_bootstrap


def test_bootstrap_coverage_on_known_mean() -> None:
    """About 95 % of 95 % intervals from samples of a known distribution contain its mean."""
    rng = np.random.default_rng(123)
    trials, covered = 300, 0
    for t in range(trials):
        sample = rng.normal(0.6, 0.2, size=60)
        ci = bootstrap_ci(sample.tolist(), resamples=1000, seed=t)
        covered += ci.low <= 0.6 <= ci.high
        assert ci.low <= ci.mean <= ci.high
    assert 0.90 <= covered / trials <= 0.99


def test_bootstrap_is_seeded() -> None:
    values = [0.1, 0.5, 0.9, 0.3]
    assert bootstrap_ci(values, seed=7) == bootstrap_ci(values, seed=7)


def test_paired_difference_significance() -> None:
    rng = np.random.default_rng(0)
    a = {f"q{i}": float(v) for i, v in enumerate(rng.uniform(0.3, 0.7, 80))}
    better = {q: v + 0.05 + float(rng.normal(0, 0.01)) for q, v in a.items()}
    same = {q: v + float(rng.normal(0, 0.05)) for q, v in a.items()}
    up = paired_bootstrap(a, better)
    assert up.significant and up.difference.low > 0 and up.wins > up.losses
    flat = paired_bootstrap(a, same)
    assert not flat.significant and flat.difference.low < 0 < flat.difference.high


def test_invalid_arguments() -> None:
    with pytest.raises(ConfigError):
        bootstrap_ci([])
    with pytest.raises(ConfigError, match="confidence"):
        bootstrap_ci([1.0], confidence=1.5)
    with pytest.raises(ConfigError, match="same queries"):
        paired_bootstrap({"a": 1.0}, {"b": 1.0})
