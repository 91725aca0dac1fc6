"""Query transforms: rewriting, multi-query, HyDE and self-query (seed 000; seed 003 §8–9, §13)."""

from ragwright.retrieve.transforms.options import (
    AllowedField,
    HydeOptions,
    MultiQueryOptions,
    RewriteOptions,
    SelfQueryOptions,
    TransformOptions,
)
from ragwright.retrieve.transforms.plan import RetrievalTrace

__all__ = [
    "AllowedField",
    "HydeOptions",
    "MultiQueryOptions",
    "RetrievalTrace",
    "RewriteOptions",
    "SelfQueryOptions",
    "TransformOptions",
]
