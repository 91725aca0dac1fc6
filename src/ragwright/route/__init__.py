"""Query routing: each question to no retrieval, hybrid, hierarchical, graph (local/global) or agentic.

* :mod:`~ragwright.route.features` — what the rules read (chit-chat, scope words, comparison,
  arithmetic, several parts, relations, bridge cues), each a documented pattern.
* :mod:`~ragwright.route.rules` — features to routes in order of preference.
* :mod:`~ragwright.route.llm` — the optional LLM classifier (JSON grammar, validated).
* :mod:`~ragwright.route.router` — the decision, its reason, availability and the fall back to hybrid.
* :mod:`~ragwright.route.direct` — the ``none`` route's reply.

Wired on the facade by :mod:`ragwright.rag_route` (``route_ask``).
"""

from ragwright.route.options import MODES, ROUTES, RouterOptions
from ragwright.route.router import Decision, Router

__all__ = ["MODES", "ROUTES", "Decision", "Router", "RouterOptions"]
