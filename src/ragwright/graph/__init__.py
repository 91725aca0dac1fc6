"""GraphRAG (after Edge et al. 2024, "From Local to Global: A Graph RAG Approach to Query-Focused
Summarization"): a grounded entity graph beside the chunks, searched under the caller's ACL.

* :mod:`~ragwright.graph.model` — mentions, relations and aliases, each with its chunk id and span;
  the :class:`~ragwright.graph.model.Extractor` protocol.
* extractors — :mod:`~ragwright.graph.rules` (default, no model), :mod:`~ragwright.graph.statistical`
  (spaCy NER, extra ``[graph-ner]``), :mod:`~ragwright.graph.llm_extract` (a chat model, JSON grammar).
* :mod:`~ragwright.graph.tables` — the tables (SQLite or PostgreSQL) and the hook into a store.
* :mod:`~ragwright.graph.index` — extraction at ingestion, cascade, entity resolution.
* :mod:`~ragwright.graph.visibility` — the one security filter every graph read passes.
* :mod:`~ragwright.graph.local` / :mod:`~ragwright.graph.communities` / :mod:`~ragwright.graph.global_search`.

Wired by ``Rag(graph=GraphOptions(...))`` (:mod:`ragwright.rag_graph`).
"""

from ragwright.graph.options import GraphOptions

__all__ = ["GraphOptions"]
