"""Capability protocols every store implements, and the types that cross the seam.

Retrievers depend on these protocols, never on a concrete store class. Every search takes the
caller's :class:`~ragwright.model.identity.Identity`: the security filter is applied *inside* the
search, before top-k, together with the metadata filter — never as a mask afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ragwright.model.chunk import Chunk
from ragwright.model.document import Document
from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ragwright.index.bm25 import KeywordQuery
    from ragwright.models.sparse.base import SparseVector

    Vector = npt.NDArray[np.float32]
    Matrix = npt.NDArray[np.float32]


class ScoreScale(StrEnum):
    """How a store's search scores should be read (seed 000 ``IScoreScaleAware``)."""

    SIMILARITY = "similarity"
    OPAQUE_RANKING = "opaque_ranking"


@dataclass(frozen=True, slots=True)
class Hit:
    """A chunk a store's search returned, with its score on the store's scale."""

    chunk: Chunk
    score: float


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
    """A store remembers which embedding model built it and refuses a different one."""

    def bind_embedder(self, name: str, dimension: int) -> None: ...


@runtime_checkable
class IndexVersioned(Protocol):
    """A counter bumped in the same transaction as every chunk write, delete and ACL update.

    Cache keys include it, so no cached result survives a change of what the index holds or who may
    see it (seed 003 §18: "version the index in the key, bump on ingestion").
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
    """A store that fuses dense and keyword search itself, in one call (seed 000 ``IHybridSearchable``).

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
