"""Ablations: configurations differing by one option, each compared with the best so far.

A variant replaces the current best only when the paired bootstrap says it is significantly better on
the primary metric; otherwise the best stays and the table records why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragwright.eval.configs import EvalConfig
from ragwright.eval.runner import ConfigRun
from ragwright.eval.stats import PairedComparison, paired_bootstrap


@dataclass(frozen=True)
class AblationStep:
    variant: str
    change: Mapping[str, Any]
    against: str
    comparison: PairedComparison
    adopted: bool


def ablate(
    base: EvalConfig,
    changes: Sequence[tuple[str, Mapping[str, Any]]],
    evaluate: Callable[[EvalConfig], ConfigRun],
    *,
    metric: str = "ndcg@10",
    seed: int = 0,
) -> tuple[ConfigRun, list[AblationStep]]:
    """Apply each ``(name, {option: value})`` change to the best configuration so far and keep it
    only when it significantly improves *metric*. Returns the final best run and the steps."""
    best = evaluate(base)
    steps: list[AblationStep] = []
    for name, change in changes:
        candidate = EvalConfig(name, best.config.options.merged(**change))
        run = evaluate(candidate)
        comparison = paired_bootstrap(best.per_query[metric], run.per_query[metric], seed=seed)
        adopted = comparison.significant and comparison.difference.mean > 0
        steps.append(AblationStep(name, dict(change), best.config.name, comparison, adopted))
        if adopted:
            best = run
    return best, steps
