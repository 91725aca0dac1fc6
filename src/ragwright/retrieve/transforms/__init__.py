"""Query transforms: rewriting, multi-query, HyDE (Gao et al. 2022) and self-query."""

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
