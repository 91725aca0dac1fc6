"""Hierarchical retrieval and multi-vector parents: document summaries that cite their
chunks, a two-stage search (documents first, then chunks inside the best ones), a RAPTOR-style summary
tree per access scope searched across levels, and parents found through several vectors.

* :mod:`~ragwright.hierarchy.options` — :class:`HierarchyOptions`.
* :mod:`~ragwright.hierarchy.summarize` — extractive and LLM summaries, hypothetical questions.
* :mod:`~ragwright.hierarchy.tables` — the tables and the hook into a store.
* :mod:`~ragwright.hierarchy.index` — summaries at ingestion, cascade on change, removal, ACL change.
* :mod:`~ragwright.hierarchy.tree` — clustering, the tree, incremental rebuilds.
* :mod:`~ragwright.hierarchy.search` — two-stage and collapsed-tree search, identity-filtered.
* :mod:`~ragwright.hierarchy.multivector` — parents found through their chunks, summaries and questions.

Wired by ``Rag(hierarchy=HierarchyOptions(...))`` (:mod:`ragwright.rag_hierarchy`).
"""

from ragwright.hierarchy.options import HierarchyOptions

__all__ = ["HierarchyOptions"]
