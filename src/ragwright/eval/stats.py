"""Bootstrap confidence intervals and paired comparisons.

Percentile bootstrap over queries (Efron & Tibshirani 1993, "An Introduction to the Bootstrap"; for IR
evaluation, Sakai 2006, "Evaluating Evaluation Metrics Based on the Bootstrap"), seeded so a report is
reproducible. A difference between two configurations is *significant* only when its paired interval
excludes 0.
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


def balanced_accuracy_ci(
    positives: Sequence[float],
    negatives: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> Interval:
    """The mean of two class accuracies (*positives*, *negatives*: 1/0 per item), with a stratified
    percentile-bootstrap interval (each class resampled on its own, so both stay represented)."""
    import numpy as np

    _check(confidence, resamples)
    pos, neg = np.asarray(positives, dtype=float), np.asarray(negatives, dtype=float)
    if pos.size == 0 or neg.size == 0:
        raise ConfigError("balanced accuracy needs items of both classes")
    rng = np.random.default_rng(seed)
    pos_means = pos[rng.integers(0, pos.size, size=(resamples, pos.size))].mean(axis=1)
    neg_means = neg[rng.integers(0, neg.size, size=(resamples, neg.size))].mean(axis=1)
    values = (pos_means + neg_means) / 2.0
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(values, [alpha, 1.0 - alpha])
    point = (float(pos.mean()) + float(neg.mean())) / 2.0
    return Interval(point, float(low), float(high), confidence, int(pos.size + neg.size))


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Cohen's kappa between two binary raters over the same items (1.0 = perfect agreement, 0 = chance).

    When both raters give one and the same label to every item, agreement is perfect and kappa is 1.0.
    """
    if len(a) != len(b) or not a:
        raise ConfigError("cohen_kappa needs two equally long, non-empty label lists")
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    if expected >= 1.0:
        return 1.0 if observed == 1.0 else 0.0
    return (observed - expected) / (1.0 - expected)
