"""Bootstrap confidence intervals and paired comparisons (seed 003 §19).

Percentile bootstrap over queries, seeded so a report is reproducible. A difference between two
configurations is *significant* only when its paired interval excludes 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragwright.errors import ConfigError


@dataclass(frozen=True)
class Interval:
    """A mean with its bootstrap confidence interval."""

    mean: float
    low: float
    high: float
    confidence: float
    n: int

    def to_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "ci_low": self.low, "ci_high": self.high, "confidence": self.confidence, "n": self.n}


@dataclass(frozen=True)
class PairedComparison:
    """B minus A over the same queries, with its interval; ``significant`` when 0 is outside it."""

    difference: Interval
    significant: bool
    wins: int
    losses: int
    ties: int

    def to_dict(self) -> dict[str, float | bool | int]:
        return {
            **self.difference.to_dict(),
            "significant": self.significant,
            "wins": self.wins,
            "losses": self.losses,
            "ties": self.ties,
        }


def _check(confidence: float, resamples: int) -> None:
    if not 0.0 < confidence < 1.0:
        raise ConfigError.invalid("confidence", confidence, "a number strictly between 0 and 1")
    if resamples < 100:
        raise ConfigError.invalid("resamples", resamples, "an integer >= 100")


def bootstrap_ci(
    values: Sequence[float], *, confidence: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> Interval:
    """Percentile-bootstrap interval of the mean of *values*."""
    import numpy as np

    _check(confidence, resamples)
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ConfigError("bootstrap_ci needs at least one value")
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return Interval(float(data.mean()), float(low), float(high), confidence, int(data.size))


def paired_bootstrap(
    a: Mapping[str, float],
    b: Mapping[str, float],
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> PairedComparison:
    """Compare configuration B to A on the queries both scored (per-query differences, resampled)."""
    shared = sorted(set(a) & set(b))
    if not shared:
        raise ConfigError("paired_bootstrap needs per-query scores for the same queries in both runs")
    diffs = [b[q] - a[q] for q in shared]
    interval = bootstrap_ci(diffs, confidence=confidence, resamples=resamples, seed=seed)
    significant = interval.low > 0.0 or interval.high < 0.0
    wins = sum(1 for d in diffs if d > 1e-12)
    losses = sum(1 for d in diffs if d < -1e-12)
    return PairedComparison(interval, significant, wins, losses, len(diffs) - wins - losses)
