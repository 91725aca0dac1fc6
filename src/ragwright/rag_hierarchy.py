"""Hierarchical retrieval on the facade: ``rag.hierarchy`` when ``Rag(hierarchy=HierarchyOptions(...))``.

>>> rag = Rag.open("store.db", hierarchy=HierarchyOptions())             # doctest: +SKIP
>>> rag.ingest("docs/")                                                    # doctest: +SKIP
>>> rag.hierarchy.search("what does the contract say on renewal?").results  # doctest: +SKIP
>>> enable_hierarchy(rag).ask("which reports cover the merger?", identity=who)  # doctest: +SKIP

Search modes: ``two_stage`` (the default: documents by summary, then chunks inside the best ones,
combined with the flat result), ``tree`` (the summary tree's nodes of every level, resolved to the
chunks beneath) and ``multi_vector`` (parents through their chunks, summaries and questions). Every
call takes the caller's identity (else the Rag's); see :mod:`ragwright.hierarchy.search` for the
security rules.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

from ragwright._sync import run_sync, to_thread
from ragwright.errors import ConfigError
from ragwright.generate import AnswerStream
from ragwright.hierarchy.index import HierarchyIndex
from ragwright.hierarchy.multivector import multi_vector
from ragwright.hierarchy.options import HierarchyOptions
from ragwright.hierarchy.search import HierarchyResult, HierarchySearch
from ragwright.model.identity import Identity
from ragwright.model.results import RagResponse
from ragwright.options import RagOptions, RetrievalOptions
from ragwright.stores.side_tables import file_has_rows

if TYPE_CHECKING:
    from ragwright.rag import Rag

MODES: Final = ("two_stage", "tree", "multi_vector")
FLAT_DEPTH: Final = 50  # flat results fused with the hierarchy's (RRF needs more than top_k)


def enable_hierarchy(rag: Rag, options: HierarchyOptions | None = None) -> RagHierarchy:
    """Switch hierarchical retrieval on for an already built *rag* (the CLI does, for ``--hierarchy`` or
    a store that has summaries); the one it has is kept."""
    if rag.hierarchy is None:
        rag.hierarchy = RagHierarchy(rag, options or HierarchyOptions())
    return rag.hierarchy


def hierarchical_search(
    rag: Rag, query: str, options: RetrievalOptions | None = None, *, identity: Identity | None = None
) -> HierarchyResult:
    """The two-stage search the CLI's ``search --hierarchical`` and the server's ``"hierarchical": true``
    run: *options* gives ``top_k``; a metadata filter is refused (the document stage does not apply one)."""
    opts = options or rag.retrieval_options
    if opts.metadata_filter is not None:
        raise ConfigError(
            "hierarchical search does not take a metadata filter yet: drop --filter / metadata_filter, or search "
            "without --hierarchical"
        )
    return enable_hierarchy(rag).search(query, identity=identity, top_k=opts.top_k)


def store_has_hierarchy(store: object) -> bool:
    """Whether *store*'s file already holds document summaries (so every ingestion keeps them in step)."""
    return file_has_rows(store, "hier_documents")


def follow_store(rag: Rag) -> None:
    """After a blue/green reindex swapped *rag*'s store and pipeline: the hierarchy moves to the new store
    (its hook onto the new pipeline), and every document whose summary cites a chunk the new store no
    longer serves (a new chunker gives new chunk ids) is summarised again; its tree follows."""
    old = rag.hierarchy
    if old is None:
        return
    rag.ingestion.hooks[:] = [h for h in rag.ingestion.hooks if h != old.index.on_written]
    rag.hierarchy = new = RagHierarchy(rag, old.options)
    for doc, (_tenant, _acl, cited) in new.index.tables.documents().items():
        if not set(cited) <= {c.id for c in rag.store.document_chunks(doc)}:
            new.index.tables.remove_document(doc)
    new.sync()


class RagHierarchy:
    """The hierarchy of a :class:`~ragwright.rag.Rag`: its index (an ingest hook) and its searches."""

    def __init__(self, rag: Rag, options: HierarchyOptions) -> None:
        self.rag, self.options = rag, options
        self.index = HierarchyIndex(rag.store, rag.embedder, options, llm=rag.llm)
        self.searcher = HierarchySearch(self.index)
        rag.ingestion.hooks.append(self.index.on_written)
        self._synced = False

    def sync(self) -> dict[str, int]:
        """Reconcile the summaries with the registry (the Rag calls it after each ingestion)."""
        self._synced = True
        return self.index.sync()

    async def asearch(
        self,
        query: str,
        *,
        identity: Identity | None = None,
        top_k: int | None = None,
        mode: str = "two_stage",
    ) -> HierarchyResult:
        """The best chunks for *query* as *identity*, by *mode* (see the module docstring)."""
        if mode not in MODES:
            raise ConfigError.invalid("hierarchy mode", mode, " | ".join(MODES))
        who = identity or self.rag.identity
        k = top_k or self.rag.retrieval_options.top_k
        if not self._synced:  # a store summarised before (or partly): catch up once
            await to_thread(self.sync)
        flat = await self.rag.asearch(query, identity=who, top_k=max(k, FLAT_DEPTH))
        run = {
            "two_stage": self.searcher.two_stage,
            "tree": self.searcher.tree,
        }.get(mode)
        if run is None:
            return await to_thread(multi_vector, self.searcher, query, who, list(flat), k)
        return await to_thread(run, query, who, list(flat), k)

    def search(
        self, query: str, *, identity: Identity | None = None, top_k: int | None = None, mode: str = "two_stage"
    ) -> HierarchyResult:
        return run_sync(self.asearch(query, identity=identity, top_k=top_k, mode=mode))

    async def aask(
        self,
        question: str,
        *,
        identity: Identity | None = None,
        mode: str = "two_stage",
        options: RagOptions | None = None,
    ) -> RagResponse:
        """Answer *question* from the hierarchy's evidence with the Rag's answerer and ``[Source N]``
        citations (or decline), as *identity*."""
        opts = options or self.rag.rag_options
        answerer = self.rag._answerer(opts)
        found = await self.asearch(question, identity=identity, top_k=opts.top_k, mode=mode)
        response = await to_thread(AnswerStream(answerer.run(question, found.results, opts, streaming=False)).collect)
        return replace(response, retrieval_path=found.path)

    def ask(
        self,
        question: str,
        *,
        identity: Identity | None = None,
        mode: str = "two_stage",
        options: RagOptions | None = None,
    ) -> RagResponse:
        return run_sync(self.aask(question, identity=identity, mode=mode, options=options))
