"""An in-process store holding everything in dictionaries: small, obvious, the reference."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ragwright.index.analyzers import DEFAULT_ANALYZER
from ragwright.model.chunk import Chunk
from ragwright.model.document import Document
from ragwright.model.filters import Filter, matches
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.base import CollectionInfo, Hit, ScoreScale
from ragwright.stores.common import STAGING_LEASE_S, check_embedder, check_vectors, deleted_record, keyword_entry
from ragwright.stores.memory.collections import MemoryCatalog
from ragwright.stores.memory.tags import MemoryTagTable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ragwright.index.ann import AnnParams, DenseView
    from ragwright.index.bm25 import KeywordQuery
    from ragwright.index.sparse import SparseIndex
    from ragwright.models.sparse.base import SparseVector


class MemoryStore:
    """Chunks, vectors and registry in memory. Thread-safe; lost when the process ends."""

    def __init__(
        self,
        *,
        keyword_analyzer: str = DEFAULT_ANALYZER,
        ann: AnnParams | None = None,
        catalog: MemoryCatalog | None = None,
    ) -> None:
        """*ann*: when dense search switches from exact to the HNSW graph (default: 20k vectors).
        *catalog*: the collections this store joins as a new one (``create_collection`` passes it);
        by default the store starts its own, as the live collection ``memory``."""
        from ragwright.index import Bm25Index
        from ragwright.index.ann import DenseIndex

        self._ann = ann

        self._bm25 = Bm25Index(keyword_analyzer)
        self._dense = DenseIndex(ann)
        self._dense_at: int | None = None  # the index version the dense index reflects
        self._dense_ids: list[str] = []  # matrix row -> chunk id
        self._labels: dict[str, int] = {}  # chunk id -> graph key (stable while the chunk lives)
        self._next_label = 0
        self._sparse: SparseIndex | None = None  # learned sparse vectors by chunk id (put_sparse)
        self._sparse_encoder: str | None = None
        self._lock = threading.RLock()
        self._chunks: dict[str, Chunk] = {}
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        self._by_doc: dict[str, list[str]] = {}
        self._records: dict[str, DocumentRecord] = {}
        self._embedder: tuple[str, int] | None = None
        self._embedder_spec: str | None = None
        self._staged: dict[str, bytes] = {}
        self._parents: dict[str, Chunk] = {}
        self._parsed: dict[tuple[str, str], Document] = {}
        self._leases: dict[tuple[str, str], float] = {}  # (run id, content hash) → leased at
        # Bumped with every chunk write, delete and ACL update (cache keys); starts from the clock so a
        # new store never reuses an old one's versions in a shared cache.
        self._index_version = time.time_ns() // 1000
        self._tags: MemoryTagTable | None = None
        self._catalog = catalog if catalog is not None else MemoryCatalog()
        self._name = self._catalog.register(self)

    # -- embedding model guard -------------------------------------------------------------
    def bind_embedder(self, name: str, dimension: int, *, spec: str | None = None) -> None:
        with self._lock:
            check_embedder(self._embedder, name, dimension, "this memory store")
            self._embedder = (name, dimension)
            if spec is not None:
                self._embedder_spec = spec

    @property
    def embedding_model(self) -> tuple[str, int] | None:
        with self._lock:
            return self._embedder

    @property
    def embedder_spec(self) -> str | None:
        with self._lock:
            return self._embedder_spec

    @property
    def score_scale(self) -> ScoreScale:
        return ScoreScale.SIMILARITY

    # -- writes --------------------------------------------------------------------------------
    def replace_document(
        self,
        record: DocumentRecord,
        chunks: Sequence[Chunk],
        vectors: npt.NDArray[np.float32],
        parents: Sequence[Chunk] = (),
    ) -> None:
        arr = check_vectors(len(chunks), vectors, self._embedder[1] if self._embedder else None)
        with self._lock:
            old = set(self._by_doc.get(record.document_id, ()))
            for chunk, vec in zip(chunks, arr, strict=True):  # new first …
                self._chunks[chunk.id] = chunk
                self._vectors[chunk.id] = vec
            new_ids = [c.id for c in chunks]
            superseded = old - set(new_ids)
            for cid in superseded:  # … then the superseded ones
                self._chunks.pop(cid, None)
                self._vectors.pop(cid, None)
            self._bm25.upsert(keyword_entry(c) for c in chunks)
            self._bm25.remove(superseded)
            self._by_doc[record.document_id] = new_ids
            self._parents = {k: v for k, v in self._parents.items() if v.document_id != record.document_id}
            self._parents.update({p.id: p for p in parents})
            self._records[record.document_id] = record
            self._index_version += 1

    def remove_document(self, document_id: str) -> int:
        with self._lock:
            ids = self._by_doc.pop(document_id, [])
            for cid in ids:
                self._chunks.pop(cid, None)
                self._vectors.pop(cid, None)
            self._bm25.remove(ids)
            self._parents = {k: v for k, v in self._parents.items() if v.document_id != document_id}
            rec = self._records.get(document_id)
            if rec is not None:
                self._records[document_id] = deleted_record(rec)
            self._index_version += 1
            return len(ids)

    def stage(self, content_hash: str, data: bytes) -> None:
        with self._lock:
            self._staged.setdefault(content_hash, bytes(data))

    def staged(self, content_hash: str) -> bytes | None:
        with self._lock:
            return self._staged.get(content_hash)

    def cache_parsed(self, content_hash: str, parser_version: str, document: Document) -> None:
        with self._lock:
            self._parsed[(content_hash, parser_version)] = document

    def cached_parsed(self, content_hash: str, parser_version: str) -> Document | None:
        with self._lock:
            return self._parsed.get((content_hash, parser_version))

    def lease_staging(self, run_id: str, content_hash: str) -> None:
        with self._lock:
            self._leases[(run_id, content_hash)] = time.time()

    def prune_staging(self, *, release: str | None = None) -> int:
        with self._lock:
            cutoff = time.time() - STAGING_LEASE_S
            self._leases = {k: t for k, t in self._leases.items() if k[0] != release and t >= cutoff}
            live = {r.content_hash for r in self._records.values() if r.status is not DocumentStatus.DELETED}
            live |= {h for _, h in self._leases}
            gone = [h for h in self._staged if h not in live] + [k for k in self._parsed if k[0] not in live]
            for h in gone:
                if isinstance(h, tuple):
                    self._parsed.pop(h, None)
                else:
                    self._staged.pop(h, None)
            return len(gone)

    def update_access(self, document_id: str, tenant: str, acl: tuple[str, ...]) -> int:
        with self._lock:
            ids = self._by_doc.get(document_id, [])
            for cid in ids:
                self._chunks[cid] = self._chunks[cid].with_access(tenant, acl)
            rec = self._records.get(document_id)
            if rec is not None:
                self._records[document_id] = dataclasses.replace(rec, tenant=tenant, acl=acl)
            for pid, parent in list(self._parents.items()):
                if parent.document_id == document_id:
                    self._parents[pid] = parent.with_access(tenant, acl)
            self._index_version += 1
            return len(ids)

    def index_version(self) -> int:
        """Bumped by every chunk write, delete and ACL update; cache keys include it."""
        with self._lock:
            return self._index_version

    def tag_table(self) -> MemoryTagTable:
        """The tag vectors of tag-based retrieval, kept in memory beside the chunks."""
        with self._lock:
            if self._tags is None:
                self._tags = MemoryTagTable(self.get_record)
            return self._tags

    def check_integrity(self) -> list[str]:
        problems: list[str] = []
        with self._lock:
            for doc, ids in self._by_doc.items():
                rec = self._records.get(doc)
                if ids and (rec is None or rec.status is DocumentStatus.DELETED):
                    problems.append(f"orphan chunks of {doc!r} (no live registry record)")
            for doc, rec in self._records.items():
                stored = len(self._by_doc.get(doc, ()))
                if rec.status is DocumentStatus.INDEXED and stored != rec.chunk_count:
                    problems.append(f"{doc!r} is indexed with {rec.chunk_count} chunks but {stored} are stored")
            if len(self._bm25) != len(self._chunks) or any(cid not in self._bm25 for cid in self._chunks):
                problems.append("the keyword index is out of step with the stored chunks")
        return problems

    def record(self, record: DocumentRecord) -> None:
        with self._lock:
            self._records[record.document_id] = record

    # -- reads -----------------------------------------------------------------------------------
    def get_record(self, document_id: str) -> DocumentRecord | None:
        with self._lock:
            return self._records.get(document_id)

    def list_records(self, status: DocumentStatus | None = None) -> list[DocumentRecord]:
        with self._lock:
            recs = sorted(self._records.values(), key=lambda r: r.document_id)
        return [r for r in recs if status is None or r.status == status]

    def get_chunks(self, chunk_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        with self._lock:
            found = [self._chunks.get(cid) for cid in chunk_ids]
        return [c for c in found if c is not None and identity.can_see(c.tenant, c.acl)]

    def document_chunks(self, document_id: str) -> list[Chunk]:
        with self._lock:
            return [self._chunks[cid] for cid in self._by_doc.get(document_id, ())]

    def get_parents(self, parent_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        with self._lock:
            found = [self._parents.get(pid) for pid in parent_ids]
        return [p for p in found if p is not None and identity.can_see(p.tenant, p.acl)]

    def get_vectors(self, chunk_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        with self._lock:
            return {cid: self._vectors[cid] for cid in chunk_ids if cid in self._vectors}

    def count_chunks(self) -> int:
        with self._lock:
            return len(self._chunks)

    def search_dense(
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        import numpy as np

        with self._lock:
            eligible = self._visible(identity, metadata_filter)
            if not eligible:
                return []
            threshold = self._dense.params.threshold
            use_graph = threshold is not None and len(self._chunks) >= threshold
            if use_graph:  # past the threshold: the dense index (HNSW, filtered with oversampling)
                view, ids = self._dense_view(), self._dense_ids
                wanted = np.sort(np.array([self._labels[c.id] for c in eligible], dtype=np.int64))
            else:
                mat = np.stack([self._vectors[c.id] for c in eligible])
        if use_graph:
            positions = np.searchsorted(view.keys, wanted)
            ranked, top = self._dense.search(
                np.asarray(vector, dtype=np.float32),
                k,
                eligible=None if positions.size == len(ids) else positions,
                min_score=min_score,
                view=view,
            )
            by_id = {c.id: c for c in eligible}
            return [Hit(by_id[ids[p]], sc) for p, sc in zip(ranked.tolist(), top.tolist(), strict=True)]
        scores = mat @ np.asarray(vector, dtype=np.float32)
        order = sorted(range(len(eligible)), key=lambda i: (-float(scores[i]), eligible[i].id))
        hits = [Hit(eligible[i], float(scores[i])) for i in order if float(scores[i]) >= min_score]
        return hits[:k]

    def _dense_view(self) -> DenseView:
        """The dense index brought up to date with the chunks (call under the lock). Graph keys are
        per chunk id (a chunk id names fixed content, so its vector never changes while it lives)."""
        import numpy as np

        version = getattr(self, "_index_version", None)
        if self._dense_at is None or version is None or self._dense_at != version:
            labels = self._labels
            for cid in labels.keys() - self._chunks.keys():
                del labels[cid]
            for cid in self._chunks.keys() - labels.keys():
                self._next_label += 1
                labels[cid] = self._next_label
            ids = sorted(self._chunks, key=labels.__getitem__)
            keys = np.array([labels[c] for c in ids], dtype=np.int64)
            dim = self._embedder[1] if self._embedder else 0
            matrix = np.stack([self._vectors[c] for c in ids]) if ids else np.zeros((0, dim), np.float32)
            self._dense.sync(keys, np.ascontiguousarray(matrix, dtype=np.float32))
            self._dense_ids, self._dense_at = ids, version
        return self._dense.view()

    # -- learned sparse vectors -------------------------------------------------------------------
    def put_sparse(self, vectors: Sequence[tuple[str, SparseVector]], *, encoder: str) -> None:
        from ragwright.index.sparse import SparseIndex

        with self._lock:
            if self._sparse is None or self._sparse_encoder != encoder:
                self._sparse, self._sparse_encoder = SparseIndex(), encoder
            self._sparse.upsert((cid, v) for cid, v in vectors if cid in self._chunks)

    def missing_sparse(self, encoder: str) -> list[tuple[str, str]]:
        with self._lock:
            index = self._sparse if self._sparse_encoder == encoder else None
            if index is not None:
                index.remove([cid for cid in index.ids() if cid not in self._chunks])
            return [(c.id, c.text_for_embedding) for c in self._chunks.values() if index is None or c.id not in index]

    def search_sparse(
        self,
        query: SparseVector,
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        with self._lock:
            if self._sparse is None:
                return []
            allowed = {c.id for c in self._visible(identity, metadata_filter)}
            return self._hits(self._sparse.search(query, k, allowed=allowed, min_score=min_score))

    @property
    def keyword_analyzer(self) -> str:
        return self._bm25.analyzer_name

    def search_keyword(
        self,
        query: KeywordQuery,
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        with self._lock:
            allowed = {c.id for c in self._visible(identity, metadata_filter)}
            return self._hits(self._bm25.search(query, k, allowed=allowed, min_score=min_score))

    def _visible(self, identity: Identity, metadata_filter: Filter | None) -> list[Chunk]:
        """The chunks *identity* may see that match *metadata_filter* (the caller holds the lock)."""
        return [
            c
            for c in self._chunks.values()
            if identity.can_see(c.tenant, c.acl) and matches(metadata_filter, c.metadata)
        ]

    def _hits(self, ranked: list[tuple[str, float]]) -> list[Hit]:
        """Index results ``(chunk id, score)`` as hits, skipping ids no longer stored."""
        return [Hit(self._chunks[cid], score) for cid, score in ranked if cid in self._chunks]

    # -- collections (stores/base.py ``Collections``; the catalog in collections.py) ----------------
    @property
    def live_collection(self) -> str:
        return self._catalog.live

    @property
    def current_collection(self) -> str:
        return self._name

    def collections(self) -> list[CollectionInfo]:
        return self._catalog.infos()

    def create_collection(self, note: str = "", *, building: bool = False) -> str:
        """A new, empty memory store beside this one in its catalog (*note* and *building* change nothing
        here: a build never outlives its process)."""
        return MemoryStore(keyword_analyzer=self.keyword_analyzer, ann=self._ann, catalog=self._catalog)._name

    def open_collection(self, name: str) -> MemoryStore:
        """The store object of the collection *name* (memory stores never follow the alias)."""
        return self._catalog.get(name)

    def open_live(self) -> MemoryStore:
        return self._catalog.get(self._catalog.live)

    def switch_alias(self, name: str, *, check: Callable[[], str | None] | None = None) -> str | None:
        return self._catalog.switch(name, check)

    def drop_collection(self, name: str) -> None:
        self._catalog.drop(name)

    def drop_abandoned_builds(self) -> list[str]:
        return []

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Hold off every write to this store (the alias switch checks the registry under it)."""
        with self._lock:
            yield

    def close(self) -> None:
        """Nothing to release."""

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
