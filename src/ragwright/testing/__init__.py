"""Shipped test support: conformance suites a third-party backend subclasses, and test doubles.

* stores: :mod:`ragwright.testing.conformance` (``StoreConformance``, or per capability:
  ``VectorSearchConformance``, ``FilterTranslationConformance``, ``DocumentStoreConformance``,
  ``RegistryConformance``, ``EmbeddingBindingConformance``, ``StagingConformance``, ``KeywordConformance``),
  the filter strategies :mod:`ragwright.testing.filters` (hypothesis),
  :mod:`ragwright.testing.collections` (``CollectionsConformance``), :mod:`ragwright.testing.lookup`
  (``ChunkLookupConformance``), and the leak audit :mod:`ragwright.testing.leaks`;
* models: :mod:`ragwright.testing.embedders` (``EmbedderConformance``), :mod:`ragwright.testing.chat`
  (``ChatModelConformance``), :mod:`ragwright.testing.rerankers` (``RerankerConformance``);
* doubles for unit tests: :mod:`ragwright.testing.doubles` (``HashingEmbedder``, ``ScriptedChat``).
"""
