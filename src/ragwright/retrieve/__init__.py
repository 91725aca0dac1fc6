"""Retrieval: the behaviour chain from a question to ranked, filtered, explained results.

``Retriever`` (the pipeline) is imported on first use, so ``ragwright.retrieve.options`` — which the
option re-exports in :mod:`ragwright.options` load — never pulls the pipeline in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragwright.retrieve.pipeline import Retriever

__all__ = ["Retriever"]


def __getattr__(name: str) -> Any:
    if name == "Retriever":
        from ragwright.retrieve.pipeline import Retriever

        return Retriever
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
