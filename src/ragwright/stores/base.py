"""Capability protocols every store implements, and the types that cross the seam.

Retrievers depend on these protocols, never on a concrete store class. Every search takes the
caller's :class:`~ragwright.model.identity.Identity`: the security filter is applied *inside* the
search, before top-k, together with the metadata filter — never as a mask afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ragwright.model.chunk import Chunk
from ragwright.model.document import Document
from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.sources.base import SourceItem

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ragwright.index.bm25 import KeywordQuery
    from ragwright.models.sparse.base import SparseVector

    Vector = npt.NDArray[np.float32]
    Matrix = npt.NDArray[np.float32]


class ScoreScale(StrEnum):
    """How a store's search scores should be read."""

    SIMILARITY = "similarity"
    OPAQUE_RANKING = "opaque_ranking"


@dataclass(frozen=True, slots=True)
class Hit:
    """A chunk a store's search returned, with its score on the store's scale.

    A store may return a subclass that reads its chunk only when asked (a fusion ranks hundreds of
    candidates by id and shows a few): use :attr:`chunk_id` and :meth:`with_score` where the chunk
    itself is not needed.
    """

    chunk: Chunk
    score: float

    @property
    def chunk_id(self) -> str:
        """The chunk's id (without reading the chunk when a store defers it)."""
        return self.chunk.id

    def with_score(self, score: float) -> Hit:
        """The same chunk with another score (still deferred when the store defers it)."""
        return Hit(self.chunk, score)


@runtime_checkable
class ChunkLookup(Protocol):
    """Chunks, parents and vectors by id — what post-retrieval expansion and re-scoring read.

    ``get_chunks`` and ``get_parents`` apply the caller's security filter *inside* the lookup: an id
    *identity* may not see is left out exactly like an id that does not exist (never an error that
    would tell them apart). ``get_vectors`` takes no identity: callers pass only ids a filtered search
    already returned to them. Every store implements it (a vector-only backend too: expansion and
    MMR need it).
    """

    def get_chunks(self, chunk_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        """The chunks with these ids that *identity* may see, in the order asked."""
        ...

    def get_parents(self, parent_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        """Parent chunks by id that *identity* may see."""
        ...

    def get_vectors(self, chunk_ids: Sequence[str]) -> dict[str, Vector]:
        """Stored vectors by chunk id (no security filter: callers pass ids they already retrieved)."""
        ...


@runtime_checkable
class ChunkStore(ChunkLookup, Protocol):
    """Chunks, vectors and the registry, written document by document.

    ``replace_document`` is atomic and ordered: the new chunks are written *first*, then the
    superseded ones are deleted, so a document never vanishes from search mid-update.
    """

    def replace_document(
        self, record: DocumentRecord, chunks: Sequence[Chunk], vectors: Matrix, parents: Sequence[Chunk] = ()
    ) -> None:
        """Write the document's chunks (and its parent chunks, stored unembedded), then drop superseded ones."""
        ...

    def remove_document(self, document_id: str) -> int:
        """Delete the document's chunks and mark it deleted; returns the number of chunks removed."""
        ...

    def document_chunks(self, document_id: str) -> list[Chunk]:
        """Every chunk of a document in position order (administrative: no security filter)."""
        ...

    def count_chunks(self) -> int: ...

    def update_access(self, document_id: str, tenant: str, acl: tuple[str, ...]) -> int:
        """Re-sync a document's tenant and ACL onto its chunks and record (no re-embedding)."""
        ...

    def check_integrity(self) -> list[str]:
        """Consistency problems found; empty when the store is consistent."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Registry(Protocol):
    """Per-document registry: hashes, pipeline versions, status, failures."""

    def record(self, record: DocumentRecord) -> None: ...

    def get_record(self, document_id: str) -> DocumentRecord | None: ...

    def list_records(self, status: DocumentStatus | None = None) -> list[DocumentRecord]: ...


@runtime_checkable
class Staging(Protocol):
    """Raw bytes and parsed documents kept by content hash (a new chunker or model never re-parses).

    Staged rows no registry record refers to are pruned — except those *leased* by an ingestion run
    still in flight: a run leases a hash (:meth:`lease_staging`, committed) *before* it stages the bytes,
    and releases its leases when it ends (``prune_staging(release=run_id)``), by which time its records
    refer to what they need. So a run's pruning never removes the copies a concurrent run (another
    process) has staged but not yet recorded. A lease older than ``STAGING_LEASE_S`` (a crashed run's)
    no longer protects anything.
    """

    def stage(self, content_hash: str, data: bytes) -> None: ...

    def staged(self, content_hash: str) -> bytes | None: ...

    def cache_parsed(self, content_hash: str, parser_version: str, document: Document) -> None: ...

    def cached_parsed(self, content_hash: str, parser_version: str) -> Document | None: ...

    def lease_staging(self, run_id: str, content_hash: str) -> None:
        """Protect *content_hash*'s staged bytes and parsed documents from pruning until *run_id* ends."""
        ...

    def prune_staging(self, *, release: str | None = None) -> int:
        """Release the leases of the run *release* (when given), then drop the staged bytes and parsed
        documents that no live registry record refers to and no live lease protects; returns how many."""
        ...


@runtime_checkable
class VectorSearch(Protocol):
    """Dense search: cosine similarity of unit vectors, filtered inside the search."""

    @property
    def score_scale(self) -> ScoreScale: ...

    def search_dense(
        self,
        vector: Vector,
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        """The *k* best chunks visible to *identity* matching the filter with cosine >= min_score."""
        ...


@runtime_checkable
class KeywordSearch(Protocol):
    """Keyword (BM25) search, filtered inside the search before top-k.

    Scores are on the BM25 scale; ``min_score`` is a floor on that scale (0 = none).
    """

    @property
    def keyword_analyzer(self) -> str: ...

    def search_keyword(
        self,
        query: KeywordQuery,
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]: ...


@runtime_checkable
class EmbeddingInfo(Protocol):
    """A store remembers which embedding model built it and refuses a different one.

    ``bind_embedder`` records the model's name and dimension on first use and refuses another name or
    dimension afterwards; *spec* (what :func:`~ragwright.models.embedders.load_embedder` takes to build
    the model again) is recorded when given, so a store reopened later loads the same model
    (:func:`ragwright.stores.open.embedder_spec_of`) instead of guessing it from its name.
    """

    @property
    def embedding_model(self) -> tuple[str, int] | None:
        """``(name, dimension)`` of the bound model; ``None`` before the first binding."""
        ...

    @property
    def embedder_spec(self) -> str | None:
        """The spec recorded with the binding; ``None`` when none was (or the store predates specs)."""
        ...

    def bind_embedder(self, name: str, dimension: int, *, spec: str | None = None) -> None: ...


@runtime_checkable
class IndexVersioned(Protocol):
    """A counter bumped in the same transaction as every chunk write, delete and ACL update.

    Cache keys include it, so no cached result survives a change of what the index holds or who may
    see it (the index version is in the key and every ingestion bumps it).
    """

    def index_version(self) -> int: ...


@runtime_checkable
class SparseSearch(Protocol):
    """Learned sparse (SPLADE) vectors per chunk and dot-product search, filtered before top-k.

    Vectors are written after the chunks (``put_sparse``) and belong to one encoder: vectors of another
    encoder are dropped when a new one writes. ``missing_sparse`` lists the chunks still without one
    (ingestion back-fills them). Scores are dot products; ``min_score`` is a floor on that scale.
    """

    def put_sparse(self, vectors: Sequence[tuple[str, SparseVector]], *, encoder: str) -> None: ...

    def missing_sparse(self, encoder: str) -> list[tuple[str, str]]:
        """``(chunk id, text to encode)`` of every chunk without a vector from *encoder*."""
        ...

    def search_sparse(
        self,
        query: SparseVector,
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]: ...


@runtime_checkable
class HybridSearch(Protocol):
    """A store that fuses dense and keyword search itself, in one call.

    The pipeline uses it only when the call asks for nothing native fusion would lose
    (:mod:`ragwright.retrieve.dispatch`). ``hybrid_native_only``: the store's capability exists only on
    that path (the pipeline refuses, naming the setting, rather than silently falling back).
    ``hybrid_score_scale``: how the fused scores read (usually ``OPAQUE_RANKING``).
    """

    @property
    def hybrid_native_only(self) -> bool: ...

    @property
    def hybrid_score_scale(self) -> ScoreScale: ...

    def search_hybrid(
        self, query: str, vector: Vector, k: int, *, identity: Identity, metadata_filter: Filter | None = None
    ) -> list[Hit]: ...


class Store(ChunkStore, Registry, Staging, VectorSearch, KeywordSearch, EmbeddingInfo, IndexVersioned, Protocol):
    """Everything the pipeline needs from a store."""


@dataclass(frozen=True, slots=True)
class CollectionInfo:
    """One physical collection of a store (see :class:`Collections`)."""

    name: str
    live: bool
    embedding_model: str | None
    dimension: int | None
    documents: int
    chunks: int
    created_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "live": self.live,
            "embedding_model": self.embedding_model,
            "dimension": self.dimension,
            "documents": self.documents,
            "chunks": self.chunks,
            "created_at": self.created_at,
        }


@runtime_checkable
class Collections(Protocol):
    """Physical collections behind the ``live`` alias: what a blue/green reindex needs of a store.

    A store holds one or more *physical collections* (each with its own chunks, registry and embedding
    binding; staging may be shared) and an alias, ``live``, naming the one readers use. A reindex
    creates a collection (:meth:`create_collection`), builds it through a store object pinned to it
    (:meth:`open_collection`: that object never follows the alias), moves the alias in one step that
    first runs a check no write can interleave with (:meth:`switch_alias`), then serves from
    :meth:`open_live`. The previous collection stays readable until :meth:`drop_collection`; the live
    one can never be dropped. A collection created with ``building=True`` whose builder ended before
    the alias moved to it is dropped by :meth:`drop_abandoned_builds` (a reindex killed mid-build).
    Names are the store's own; unknown names raise :class:`~ragwright.errors.StoreError`.
    """

    @property
    def live_collection(self) -> str:
        """The collection the ``live`` alias names now."""
        ...

    @property
    def current_collection(self) -> str:
        """The collection this store object reads and writes (the live one unless pinned or stale)."""
        ...

    def collections(self) -> list[CollectionInfo]:
        """Every physical collection, oldest first, with its model and sizes."""
        ...

    def create_collection(self, note: str = "", *, building: bool = False) -> str:
        """A new, empty collection beside the others (not live); returns its name."""
        ...

    def open_collection(self, name: str) -> Store:
        """A store object pinned to *name* (it never follows the alias): to build or evaluate it."""
        ...

    def switch_alias(self, name: str, *, check: Callable[[], str | None] | None = None) -> str | None:
        """Point ``live`` at *name* (which must have an embedding model bound); returns the previous
        collection. *check* runs with writes to the live collection held off; a reason it returns
        leaves the alias where it was and is raised as :class:`~ragwright.errors.StoreError`."""
        ...

    def open_live(self) -> Store:
        """A store object over the live collection (following the alias), e.g. after a switch."""
        ...

    def drop_collection(self, name: str) -> None:
        """Delete a collection that is not live."""
        ...

    def drop_abandoned_builds(self) -> list[str]:
        """Drop the collections whose builder ended before the alias moved to them; returns their names."""
        ...


class CollectionStore(Store, Collections, Protocol):
    """A store with physical collections (what a blue/green reindex works on)."""


@dataclass(frozen=True, slots=True)
class Job:
    """One claimed document of a :class:`JobQueue`."""

    job_id: int
    item: SourceItem
    tenant: str
    acl: tuple[str, ...] | None
    metadata: dict[str, Any]
    attempts: int


@runtime_checkable
class JobQueue(Protocol):
    """Documents waiting for ingestion workers anywhere (distributed ingestion, :mod:`ragwright.ingest.worker`).

    ``put`` reads each item once and keeps its content (raw bytes, or the parsed record of a corpus), so a
    worker needs no shared file system; a document already waiting with the same content is not added
    twice. ``claim`` takes up to *limit* jobs — queued ones, or running ones whose lease expired — and
    two workers never claim the same job; each claim counts an attempt. A worker holds its jobs by a lease
    it renews (``renew``) while it works, then marks them finished (``finish``: ``done``, or ``failed``
    with the reason per job) or gives them back (``release``) after an error that was not the document's
    fault. Only the worker holding a job can renew, finish or release it.
    """

    def put(
        self,
        items: Iterable[SourceItem],
        *,
        tenant: str,
        acl: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> int:
        """Queue *items*; returns how many jobs were added."""
        ...

    def claim(self, worker: str, limit: int, lease_seconds: float) -> list[Job]: ...

    def renew(self, worker: str, job_ids: Sequence[int], lease_seconds: float) -> int:
        """Extend the lease of the jobs *worker* still holds; returns how many it holds."""
        ...

    def finish(self, worker: str, results: Mapping[int, str | None], *, status: str = "done") -> None:
        """Mark jobs done (or ``status``), with the reason when the document failed."""
        ...

    def release(self, worker: str, job_ids: Sequence[int], error: str) -> None: ...

    def counts(self) -> dict[str, int]:
        """Jobs by status: ``queued``, ``running``, ``done``, ``failed``."""
        ...

    def pending(self) -> int:
        """Jobs not finished yet (queued, or running under some worker's lease)."""
        ...
