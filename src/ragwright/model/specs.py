"""Specification filters over search results, composed with ``&``, ``|`` and ``~``
(the Specification pattern: Evans & Fowler, "Specifications", 1997).

They run in-process after the store returns results and can express what a database cannot
(score thresholds, compound predicates). Security never rests on them: that is the store's filter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragwright.model.metadata import values_equal
from ragwright.model.results import SearchResult


class Spec:
    """A predicate over a :class:`SearchResult`."""

    def is_satisfied_by(self, result: SearchResult) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, result: SearchResult) -> bool:
        return self.is_satisfied_by(result)

    def __and__(self, other: Spec) -> Spec:
        return AndSpec(self, other)

    def __or__(self, other: Spec) -> Spec:
        return OrSpec(self, other)

    def __invert__(self) -> Spec:
        return NotSpec(self)


@dataclass(frozen=True)
class MinScoreSpec(Spec):
    threshold: float

    def is_satisfied_by(self, result: SearchResult) -> bool:
        return result.score >= self.threshold


@dataclass(frozen=True)
class HasTagSpec(Spec):
    key: str
    value: Any

    def is_satisfied_by(self, result: SearchResult) -> bool:
        stored = result.chunk.metadata.get(self.key)
        if isinstance(stored, list):
            return any(values_equal(v, self.value) for v in stored)
        return stored is not None and values_equal(stored, self.value)


@dataclass(frozen=True)
class DocumentIdSpec(Spec):
    document_id: str

    def is_satisfied_by(self, result: SearchResult) -> bool:
        return result.chunk.document_id == self.document_id


@dataclass(frozen=True)
class PredicateSpec(Spec):
    """A user-defined predicate."""

    predicate: Callable[[SearchResult], bool]

    def is_satisfied_by(self, result: SearchResult) -> bool:
        return bool(self.predicate(result))


@dataclass(frozen=True)
class AndSpec(Spec):
    left: Spec
    right: Spec

    def is_satisfied_by(self, result: SearchResult) -> bool:
        return self.left.is_satisfied_by(result) and self.right.is_satisfied_by(result)


@dataclass(frozen=True)
class OrSpec(Spec):
    left: Spec
    right: Spec

    def is_satisfied_by(self, result: SearchResult) -> bool:
        return self.left.is_satisfied_by(result) or self.right.is_satisfied_by(result)


@dataclass(frozen=True)
class NotSpec(Spec):
    inner: Spec

    def is_satisfied_by(self, result: SearchResult) -> bool:
        return not self.inner.is_satisfied_by(result)
