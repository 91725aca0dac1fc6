"""Federated search: one query over several collections or stores, merged by weighted RRF.

:mod:`~ragwright.federation.options` (which sources, their trust weights, the text syntax),
:mod:`~ragwright.federation.merge` (weighted RRF over ranks, keyed by source and chunk id) and
:mod:`~ragwright.federation.search` (the concurrent search as the caller, failures degraded, opaque
score scale). The facade is :mod:`ragwright.rag_federation` (``federate``, ``open_federation``).
"""

from ragwright.federation.merge import FEDERATION, FUSION, merge
from ragwright.federation.options import LIVE, FederationOptions, SourceSpec, parse_stores, parse_weights
from ragwright.federation.search import (
    FederatedResults,
    FederatedSource,
    SourceFailure,
    above_threshold,
    federated_search,
    score_scale_of,
)

__all__ = [
    "FEDERATION",
    "FUSION",
    "LIVE",
    "FederatedResults",
    "FederatedSource",
    "FederationOptions",
    "SourceFailure",
    "SourceSpec",
    "above_threshold",
    "federated_search",
    "merge",
    "parse_stores",
    "parse_weights",
    "score_scale_of",
]
