"""The rule classifier: features (:mod:`ragwright.route.features`) to routes in order of preference.

The first rule whose feature is present decides; the routes after the first are what to use when the
first is not available (a route that is neither allowed nor available resolves to ``hybrid``):

=====================  ===================================  ==========================================
feature                routes, preferred first              why
=====================  ===================================  ==========================================
chitchat               none                                 nothing to look up
corpus_scope           graph_global, hierarchical           themes of the whole collection
document_scope         hierarchical                         whole documents, not passages
arithmetic             agentic                              several values found, then a calculation
multi_part             agentic                              one lookup per part
comparison             agentic, graph_local                 one lookup per thing compared
relational             graph_local, agentic                 the entity graph holds the relations
multi_hop              graph_local, agentic                 a bridge entity, then its fact
(none of them)         hybrid                               one lookup
=====================  ===================================  ==========================================

The order puts the cheaper, more specific signals first: an aggregation over documents ("how many
documents …") is a document question, a comparison with arithmetic ("how many years older …") a
calculation. Routing by query type follows Adaptive-RAG (Jeong et al. 2024), which sends simple
questions to single-step retrieval and complex ones to multi-step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ragwright.route.features import Features

#: (feature, routes preferred first), checked in this order.
RULES: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("chitchat", ("none",)),
    ("corpus_scope", ("graph_global", "hierarchical")),
    ("document_scope", ("hierarchical",)),
    ("arithmetic", ("agentic",)),
    ("multi_part", ("agentic",)),
    ("comparison", ("agentic", "graph_local")),
    ("relational", ("graph_local", "agentic")),
    ("multi_hop", ("graph_local", "agentic")),
)


@dataclass(frozen=True, slots=True)
class RuleVerdict:
    """What the rules want: *routes* preferred first (``("hybrid",)`` when no rule fired), the rule
    (``feature``) that fired and the text it matched (``cue``)."""

    routes: tuple[str, ...]
    feature: str | None = None
    cue: str | None = None

    def describe(self) -> str:
        if self.feature is None:
            return "no multi-step, scope or chit-chat cue: one lookup"
        return f"{self.feature} cue {self.cue!r}"


def classify(features: Features) -> RuleVerdict:
    """The first rule of :data:`RULES` whose feature *features* has."""
    for name, routes in RULES:
        cue = getattr(features, name)
        if cue is not None:
            return RuleVerdict(routes, name, cue)
    return RuleVerdict(("hybrid",))
