"""Federation on the facade: one query over several collections or stores, merged by weighted RRF.

>>> fed = federate({"docs": docs_rag, "wiki": wiki_rag}, weights={"wiki": 0.5})     # doctest: +SKIP
>>> fed.search("refund policy", identity=Identity("acme", ("finance",)))            # doctest: +SKIP
>>> fed = federate(rag, collections="live,g2=0.5", stores={"pg": "postgresql://u@h/db"})  # doctest: +SKIP
>>> fed.ask("what is the refund policy?").answer                                    # doctest: +SKIP

Each source is a :class:`~ragwright.rag.Rag` searched with the caller's identity (its filters applied
inside its own search) and its own embedder; :func:`ragwright.federation.federated_search` merges them
(weighted RRF over ranks, keyed by source and chunk id; a failing source degrades; merged scores are an
opaque ranking). ``ask`` answers from the merged evidence with the answerer of the first source (the
main Rag), citations as usual; a ``min_relevance`` threshold is skipped there (it is a similarity
cut-off, and merged scores are not similarities) — logged as ``threshold_skipped``.

Sources opened here (collections of the main store, stores by URI) belong to the federation and close
with it; Rags passed in are the caller's and stay open.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ragwright._sync import run_sync, to_thread
from ragwright.errors import ConfigError, StoreError
from ragwright.federation import (
    LIVE,
    FederatedResults,
    FederationOptions,
    SourceFailure,
    SourceSpec,
    federated_search,
)
from ragwright.generate import AnswerStream
from ragwright.model.identity import Identity
from ragwright.model.results import RagResponse, SearchResult
from ragwright.options import RagOptions, RetrievalOptions
from ragwright.stores.base import Collections, ScoreScale, Store

if TYPE_CHECKING:
    from ragwright.rag import Rag

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FederatedResponse(RagResponse):
    """An answer from federated evidence: a :class:`RagResponse` (each source names its ``source``) plus
    the sources searched and those that failed (the evidence is partial then)."""

    searched: tuple[str, ...] = ()
    failures: tuple[SourceFailure, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            **RagResponse.to_dict(self),
            "federation": {"sources": list(self.searched), "failures": [f.to_dict() for f in self.failures]},
        }


class _Bound:
    """A Rag as a :class:`~ragwright.federation.FederatedSource`, with the options of one call."""

    def __init__(self, name: str, rag: Rag, options: RetrievalOptions | None) -> None:
        self._name, self.rag, self.options = name, rag, options

    @property
    def name(self) -> str:
        return self._name

    async def search(self, query: str, *, identity: Identity, top_k: int) -> Sequence[SearchResult]:
        return await self.rag.asearch(query, self.options, identity=identity, top_k=top_k)


class FederatedRag:
    """Search and ask over named sources (see the module docstring). ``score_scale`` says how the merged
    scores read: an opaque ranking (RRF sums), never a similarity."""

    score_scale = ScoreScale.OPAQUE_RANKING

    def __init__(self, sources: Mapping[str, Rag], options: FederationOptions, *, owned: Sequence[Rag] = ()) -> None:
        missing = [name for name in options.names if name not in sources]
        if missing:
            raise ConfigError.invalid("federation source", missing[0], "one of " + ", ".join(sources))
        self.sources = {name: sources[name] for name in options.names}
        self.options = options
        self.main = self.sources[options.names[0]]  # its answerer, identity and default options serve ask
        self._owned = list(owned)

    @property
    def identity(self) -> Identity:
        return self.main.identity

    async def asearch(
        self,
        query: str,
        options: RetrievalOptions | None = None,
        *,
        identity: Identity | None = None,
        top_k: int | None = None,
    ) -> FederatedResults:
        """The best *top_k* chunks over every source, as *identity* (else the main Rag's); *options*
        apply to every source (else each uses its own)."""
        k = top_k or (options or self.main.retrieval_options).top_k
        bound = [_Bound(name, rag, options) for name, rag in self.sources.items()]
        return await federated_search(bound, query, identity=identity or self.identity, top_k=k, options=self.options)

    def search(
        self,
        query: str,
        options: RetrievalOptions | None = None,
        *,
        identity: Identity | None = None,
        top_k: int | None = None,
    ) -> FederatedResults:
        return run_sync(self.asearch(query, options, identity=identity, top_k=top_k))

    async def aask(
        self, question: str, options: RagOptions | None = None, *, identity: Identity | None = None
    ) -> FederatedResponse:
        """Answer *question* from the merged evidence of every source, with ``[Source N]`` citations or
        a decline, by the main Rag's answerer."""
        opts = options or self.main.rag_options
        if opts.min_relevance is not None:
            log.info("threshold_skipped: min_relevance=%s not applied to federated (RRF) scores", opts.min_relevance)
            opts = opts.merged(min_relevance=None)
        answerer = self.main._answerer(opts)
        who = identity or self.identity
        start = time.perf_counter()
        bound = [_Bound(name, rag, rag._ask_retrieval(opts)) for name, rag in self.sources.items()]
        found = await federated_search(bound, question, identity=who, top_k=opts.top_k, options=self.options)
        retrieved = time.perf_counter()
        response = await to_thread(AnswerStream(answerer.run(question, list(found), opts, streaming=False)).collect)
        failed = "".join(f" ({f.source} failed: {f.error})" for f in found.failures)
        path = f"federated {'+'.join(found.searched)}{failed} → weighted rrf"
        timings = {"retrieve_s": retrieved - start, **response.timings, "total_s": time.perf_counter() - start}
        base = {f: getattr(response, f) for f in RagResponse.__dataclass_fields__}
        base.update(retrieval_path=path, timings=timings)
        return FederatedResponse(**base, searched=found.searched, failures=found.failures)

    def ask(
        self, question: str, options: RagOptions | None = None, *, identity: Identity | None = None
    ) -> FederatedResponse:
        return run_sync(self.aask(question, options, identity=identity))

    def titles(self, results: Sequence[SearchResult]) -> dict[str, dict[str, dict[str, Any]]]:
        """Title and source of each result's document, read from *its own* source's registry (the same id
        may name another document elsewhere): ``{source: {document id: {"title", "source"}}}``. Blocking."""
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for r in results:
            rag = self.sources.get(r.source or "")
            if rag is None or r.document_id in out.get(r.source or "", {}):
                continue
            record = rag.store.get_record(r.document_id)
            entry = {"title": record.title if record else None, "source": record.source if record else None}
            out.setdefault(r.source or "", {})[r.document_id] = entry
        return out

    def close(self) -> None:
        """Close the sources this federation opened (not the Rags it was given)."""
        for rag in self._owned:
            rag.close()
        self._owned.clear()

    def __enter__(self) -> FederatedRag:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SourcePool:
    """Sources of a main Rag opened once and kept (the HTTP server shares one across requests): ``live``
    (the main Rag itself), a physical collection of its store, or another store by URI. Each opened
    source is a Rag with the main Rag's options, reranker and chat model and *its own* embedder (the
    model its store was built with)."""

    def __init__(self, main: Rag) -> None:
        self.main = main
        self._opened: dict[tuple[str, str | None], Rag] = {}
        self._lock = threading.Lock()

    def get(self, spec: SourceSpec) -> Rag:
        store = self.main.store
        if spec.uri is None and (
            spec.name == LIVE or (isinstance(store, Collections) and spec.name == store.current_collection)
        ):
            return self.main
        with self._lock:
            key = (spec.name, spec.uri)
            if key not in self._opened:
                self._opened[key] = self._open(spec)
            return self._opened[key]

    def _open(self, spec: SourceSpec) -> Rag:
        if spec.uri is not None:
            from ragwright.stores.open import open_store

            opened: Store = open_store(spec.uri, must_exist=True)
        else:
            store = self.main.store
            if not isinstance(store, Collections):
                raise ConfigError.invalid(
                    "federation source",
                    spec.name,
                    f"'{LIVE}' or NAME=URI (this {type(store).__name__} has no physical collections)",
                )
            try:
                opened = store.open_collection(spec.name)
            except StoreError:
                names = [c.name for c in store.collections()]
                raise ConfigError.invalid(
                    "federation source",
                    spec.name,
                    f"'{LIVE}', a collection of the store ({', '.join(names)}) or NAME=URI",
                ) from None
        try:
            return self._rag_over(opened)
        except BaseException:
            opened.close()
            raise

    def _rag_over(self, store: Store) -> Rag:
        from ragwright.models.embedders import load_embedder
        from ragwright.rag import Rag
        from ragwright.stores.open import embedder_spec_of

        main = self.main
        bound = store.embedding_model
        same = bound is None or bound == (main.embedder.name, main.embedder.dimension)
        embedder = main.embedder if same else load_embedder(embedder_spec_of(store))
        return Rag(
            store,
            embedder,
            retrieval_options=main.retrieval_options,
            rag_options=main.rag_options,
            identity=main.identity,
            reranker=main.retriever.reranker,
            llm=main.llm,
            transforms=main.retriever.transforms,
        )

    def close(self) -> None:
        with self._lock:
            for rag in self._opened.values():
                rag.close()
            self._opened.clear()


def open_federation(main: Rag, options: FederationOptions, *, pool: SourcePool | None = None) -> FederatedRag:
    """A federation over *options*' sources, resolved against *main* (``live`` is *main* itself). With a
    *pool*, sources come from it and stay open in it; without one, the federation owns what it opens."""
    own = pool is None
    source_pool = pool or SourcePool(main)
    try:
        rags = {spec.name: source_pool.get(spec) for spec in options.sources}
    except BaseException:
        if own:
            source_pool.close()
        raise
    owned = [r for r in dict.fromkeys(rags.values()) if r is not main] if own else []
    return FederatedRag(rags, options, owned=owned)


def failure_notes(failures: Sequence[SourceFailure]) -> list[str]:
    """One line per failed source, for a person (the CLI prints them as warnings)."""
    return [f"source {f.source!r} failed ({f.error}: {f.message}); the results are partial" for f in failures]


def federate(
    sources: Rag | Sequence[Rag] | Mapping[str, Rag],
    *,
    weights: Mapping[str, float] | None = None,
    collections: str | Sequence[str] | Mapping[str, float] | None = None,
    stores: str | Mapping[str, str] | None = None,
    rrf_k: int = 60,
    source_timeout_s: float | None = None,
) -> FederatedRag:
    """A :class:`FederatedRag` over *sources*: a mapping ``{name: Rag}``; a sequence of Rags (named
    ``s1``, ``s2`` … in order); or one Rag with the *collections* of its store (``"live,g2=0.5"``) and/or
    other *stores* (``{"pg": "postgresql://…"}``) to open beside it. *weights* (``{name: trust}``, > 0;
    1 when left out) scale each source's share of the weighted RRF merge."""
    from ragwright.rag import Rag

    if isinstance(sources, Rag):
        if collections is None and stores is None:
            collections = LIVE
        options = FederationOptions.parse(collections, stores, rrf_k=rrf_k, source_timeout_s=source_timeout_s)
        return open_federation(sources, _weighted(options, weights))
    if collections is not None or stores is not None:
        raise ConfigError("collections= and stores= open sources beside one Rag: pass that Rag, not several")
    named = dict(sources) if isinstance(sources, Mapping) else {f"s{i}": r for i, r in enumerate(sources, start=1)}
    specs = tuple(SourceSpec(name, 1.0) for name in named)
    options = _weighted(FederationOptions(specs, rrf_k=rrf_k, source_timeout_s=source_timeout_s), weights)
    return FederatedRag(named, options)


def _weighted(options: FederationOptions, weights: Mapping[str, float] | None) -> FederationOptions:
    if not weights:
        return options
    unknown = sorted(set(weights) - set(options.names))
    if unknown:
        raise ConfigError.invalid("federation weights", unknown[0], "a source name: " + ", ".join(options.names))
    specs = tuple(replace(s, weight=weights.get(s.name, s.weight)) for s in options.sources)
    return replace(options, sources=specs)
