"""Searching the hierarchy as one caller: documents by summary, chunks inside the best documents,
the summary tree across levels, and parents through all their vectors.

Security, twice, always: every row read (summary, tree node, multi-vector row) passes the caller's
:meth:`~ragwright.model.identity.Identity.can_see` over the tenant and ACL the row copied from its
document *before* any top-k cut, and every chunk a hit would show or resolve to is fetched again
through the store with the caller's identity — a summary or a node is shown only when every chunk it
cites is visible now (a document deleted or hidden since the row was written counts for nothing).

* :meth:`HierarchySearch.documents` — stage 1: documents ranked by RRF of their summary's vector, the
  centroid of their chunk vectors and BM25 over the summaries.
* :meth:`HierarchySearch.two_stage` — stage 2: the chunks of the best documents ranked by dense cosine,
  BM25 over those chunks and their document's stage-1 rank (RRF); then combined with the flat result
  (``combine``: ``rrf``, ``two_stage`` alone, or ``doc_prior``).
* :meth:`HierarchySearch.tree` — "collapsed tree" search: nodes of every level ranked at once (dense +
  BM25 over their summaries), each resolved to its best chunks beneath, fused with the flat result.
* :func:`ragwright.hierarchy.multivector.multi_vector` — parents through all their vectors, over the
  same rows.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ragwright.hierarchy.index import HierarchyIndex
from ragwright.hierarchy.tables import DocumentRow, NodeRow, VectorRow
from ragwright.hierarchy.tree import node_cited, node_summary
from ragwright.index.bm25 import Bm25Index
from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.model.results import ArmHit, SearchResult
from ragwright.retrieve.fusion import rrf

if TYPE_CHECKING:
    from ragwright.stores.base import Store

log = logging.getLogger(__name__)
F32 = npt.NDArray[np.float32]
STAGE1_CANDIDATES = 100  # per stage-1 arm, before RRF
NODE_CANDIDATES = 20  # tree nodes fused per query
CHUNKS_PER_NODE = 3  # best chunks beneath each node hit


@dataclass(frozen=True, slots=True)
class DocumentHit:
    """A document found by its summary: rank (1-based), RRF score, per-arm evidence, the summary text
    and the chunk ids it cites (all visible to the caller)."""

    document_id: str
    rank: int
    score: float
    title: str
    summary: str
    chunk_ids: tuple[str, ...]
    arms: dict[str, ArmHit] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "document_id": self.document_id,
            "rank": self.rank,
            "score": self.score,
            "title": self.title,
            "summary": self.summary,
            "chunk_ids": list(self.chunk_ids),
            "arms": {a: {"rank": h.rank, "score": h.score} for a, h in self.arms.items()},
        }


@dataclass(frozen=True, slots=True)
class NodeHit:
    """A tree node found for a query: its level, summary, the chunks it cites and the chunks beneath."""

    node_id: str
    level: int
    rank: int
    score: float
    summary: str
    cited: tuple[str, ...]
    chunk_ids: tuple[str, ...]
    document_ids: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "level": self.level,
            "rank": self.rank,
            "score": self.score,
            "summary": self.summary,
            "cited": list(self.cited),
            "chunk_ids": list(self.chunk_ids),
            "document_ids": list(self.document_ids),
        }


@dataclass(frozen=True, slots=True)
class HierarchyResult:
    """Chunks (``results``, the evidence an answer is written from), with the documents and tree nodes
    that led to them and the path taken (``documents → chunks in 8 documents → rrf with flat``)."""

    results: list[SearchResult]
    documents: list[DocumentHit] = field(default_factory=list)
    nodes: list[NodeHit] = field(default_factory=list)
    path: str = ""

    def to_dict(self, *, results: bool = True) -> dict[str, Any]:
        """The JSON shape (``--json``, the server): results (unless *results* is false), documents, nodes, path."""
        out: dict[str, Any] = {"results": [r.to_dict() for r in self.results]} if results else {}
        return {
            **out,
            "documents": [d.to_dict() for d in self.documents],
            "nodes": [n.to_dict() for n in self.nodes],
            "path": self.path,
        }


def allowed_rows(rows: Sequence[DocumentRow | NodeRow | VectorRow], identity: Identity) -> npt.NDArray[np.bool_]:
    """Which rows *identity* may see, from the tenant and ACL each row copied from its document: the
    mask every hierarchy read applies before its top-k cut."""
    return np.asarray([identity.can_see(r.tenant, r.acl) for r in rows], dtype=bool)


def _unit_rows(rows: Sequence[F32 | None], dim: int) -> tuple[F32, npt.NDArray[np.bool_]]:
    m = np.zeros((len(rows), dim), dtype=np.float32)
    ok = np.zeros(len(rows), dtype=bool)
    for i, v in enumerate(rows):
        if v is not None and len(v) == dim:
            n = float(np.linalg.norm(v))
            if n > 0:
                m[i], ok[i] = v / n, True
    return m, ok


class RowMatrix:
    """Rows (documents, nodes or multi-vector rows) with their unit vectors and a BM25 index of their
    text, rebuilt when the tables' version changes."""

    def __init__(self, ids: list[str], vectors: dict[str, tuple[F32, npt.NDArray[np.bool_]]], texts: list[str]) -> None:
        self.ids, self.vectors = ids, vectors
        self.bm25: Bm25Index | None = None
        if texts:
            self.bm25 = Bm25Index("default")
            self.bm25.upsert(list(zip(ids, texts, strict=True)))

    def dense(self, arm: str, query: F32, allowed: npt.NDArray[np.bool_], k: int) -> list[tuple[str, float]]:
        m, ok = self.vectors[arm]
        if not len(self.ids):
            return []
        scores = m @ query
        mask = allowed & ok
        idx = np.nonzero(mask)[0]
        if not len(idx):
            return []
        order = idx[np.argsort(-scores[idx], kind="stable")][:k]
        return [(self.ids[i], float(scores[i])) for i in order]

    def keyword(self, query: str, allowed: npt.NDArray[np.bool_], k: int) -> list[tuple[str, float]]:
        if self.bm25 is None:
            return []
        permitted = {self.ids[i] for i in np.nonzero(allowed)[0]}
        return self.bm25.search(query, k, allowed=permitted)


class HierarchySearch:
    """Searches over one :class:`HierarchyIndex` (see the module docstring)."""

    def __init__(self, index: HierarchyIndex) -> None:
        self.index = index
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[str, Any]] = {}

    @property
    def store(self) -> Store:
        return self.index.store

    # -- cached rows ----------------------------------------------------------------------------------
    def _cached(self, key: str, build: Callable[[], Any]) -> Any:
        version = self.index.tables.version()
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] == version:
                return hit[1]
        value = build()
        with self._lock:
            self._cache[key] = (version, value)
        return value

    def document_matrix(self) -> tuple[list[DocumentRow], RowMatrix]:
        """Every summary row with its vectors and a BM25 index of the summaries (unfiltered: callers mask
        them with :func:`allowed_rows`)."""

        def build() -> tuple[list[DocumentRow], RowMatrix]:
            rows = self.index.tables.document_rows()
            dim = self.index.embedder.dimension
            vectors = {
                "summary": _unit_rows([r.vector for r in rows], dim),
                "centroid": _unit_rows([r.centroid for r in rows], dim),
            }
            return rows, RowMatrix([r.document_id for r in rows], vectors, [r.summary for r in rows])

        result: tuple[list[DocumentRow], RowMatrix] = self._cached("documents", build)
        return result

    def node_matrix(self) -> tuple[list[NodeRow], RowMatrix]:
        """Every tree node with its vector and a BM25 index of the node summaries (unfiltered)."""

        def build() -> tuple[list[NodeRow], RowMatrix]:
            rows = self.index.tables.nodes()
            vectors = {"dense": _unit_rows([r.vector for r in rows], self.index.embedder.dimension)}
            return rows, RowMatrix([r.node_id for r in rows], vectors, [node_summary(r) for r in rows])

        result: tuple[list[NodeRow], RowMatrix] = self._cached("nodes", build)
        return result

    def vector_matrix(self) -> tuple[list[VectorRow], RowMatrix]:
        """Every multi-vector row with its vector (unfiltered)."""

        def build() -> tuple[list[VectorRow], RowMatrix]:
            rows = self.index.tables.vector_rows()
            vectors = {"dense": _unit_rows([r.vector for r in rows], self.index.embedder.dimension)}
            return rows, RowMatrix([r.vector_id for r in rows], vectors, [])

        result: tuple[list[VectorRow], RowMatrix] = self._cached("vectors", build)
        return result

    def embed_query(self, query: str) -> F32:
        """The unit query vector."""
        v = np.asarray(self.index.embedder.embed_query(query), dtype=np.float32)
        return v / max(float(np.linalg.norm(v)), 1e-9)

    def visible_chunks(self, ids: Sequence[str], identity: Identity) -> dict[str, Chunk]:
        """The chunks among *ids* *identity* may see now, fetched through the store (the second check)."""
        return {c.id: c for c in self.store.get_chunks(list(dict.fromkeys(ids)), identity)} if ids else {}

    # -- stage 1 --------------------------------------------------------------------------------------
    def documents(
        self,
        query: str,
        identity: Identity,
        k: int,
        *,
        query_vector: F32 | None = None,
        flat: Sequence[SearchResult] = (),
    ) -> list[DocumentHit]:
        """The best *k* documents *identity* may see, by their summaries (see the module docstring); with
        ``chunk_evidence``, also by their best chunk in *flat* (the caller's own filtered search)."""
        rows, matrix = self.document_matrix()
        if not rows:
            return []
        q = query_vector if query_vector is not None else self.embed_query(query)
        allowed = allowed_rows(rows, identity)
        rankings = {
            "summary": matrix.dense("summary", q, allowed, STAGE1_CANDIDATES),
            "centroid": matrix.dense("centroid", q, allowed, STAGE1_CANDIDATES),
            "bm25": matrix.keyword(query, allowed, STAGE1_CANDIDATES),
        }
        if self.index.options.chunk_evidence and flat:
            best: dict[str, float] = {}
            for r in flat:
                best.setdefault(r.document_id, r.score)
            rankings["chunks"] = list(best.items())
        by_id = {r.document_id: r for r in rows}
        fused = rrf(rankings)
        candidates = [by_id[f.chunk_id] for f in fused[: k * 2]]
        visible = self.visible_chunks([cid for r in candidates for cid in r.cited], identity)
        hits: list[DocumentHit] = []
        for f in fused[: k * 2]:
            row = by_id[f.chunk_id]
            if not all(cid in visible for cid in row.cited):
                continue  # stale (a chunk deleted or hidden since): never shown
            hits.append(DocumentHit(row.document_id, len(hits) + 1, f.score, row.title, row.summary, row.cited, f.arms))
            if len(hits) == k:
                break
        return hits

    # -- stage 2 --------------------------------------------------------------------------------------
    def restricted(
        self,
        query: str,
        identity: Identity,
        documents: Sequence[DocumentHit],
        k: int,
        *,
        query_vector: F32,
        flat: Sequence[SearchResult] = (),
    ) -> list[SearchResult]:
        """Chunks of *documents* only, ranked by dense cosine, BM25 over them, their document's rank and
        (with ``chunk_evidence``) their rank in *flat*."""
        ids = [c.id for d in documents for c in self.store.document_chunks(d.document_id)]
        chunks = self.visible_chunks(ids, identity)
        if not chunks:
            return []
        order = list(chunks)
        stored = self.store.get_vectors(order)
        with_vectors = [cid for cid in order if cid in stored]
        dense: list[tuple[str, float]] = []
        if with_vectors:
            m, _ = _unit_rows([np.asarray(stored[c], dtype=np.float32) for c in with_vectors], len(query_vector))
            scores = m @ query_vector
            dense = [(with_vectors[i], float(scores[i])) for i in np.argsort(-scores, kind="stable")]
        bm25 = Bm25Index("default")
        bm25.upsert([(cid, chunks[cid].text) for cid in order])
        keyword = bm25.search(query, len(order))
        doc_rank = {d.document_id: d.rank for d in documents}
        dense_rank = {cid: i for i, (cid, _) in enumerate(dense)}
        prior = sorted(order, key=lambda c: (doc_rank[chunks[c].document_id], dense_rank.get(c, len(order)), c))
        rankings = {
            "dense": dense,
            "bm25": keyword,
            "document": [(c, 1.0 / doc_rank[chunks[c].document_id]) for c in prior],
        }
        if self.index.options.chunk_evidence and flat:
            rankings["flat"] = [(r.chunk_id, r.score) for r in flat if r.chunk_id in chunks]
        fused = rrf(rankings, weights={"document": self.index.options.document_weight})
        return [SearchResult(chunks[f.chunk_id], f.score, f.arms, "rrf") for f in fused[:k]]

    def two_stage(self, query: str, identity: Identity, flat: Sequence[SearchResult], k: int) -> HierarchyResult:
        """Documents first, then chunks inside the best ones, combined with *flat* as ``combine`` says."""
        options = self.index.options
        q = self.embed_query(query)
        docs = self.documents(query, identity, options.documents, query_vector=q, flat=flat)
        inside = self.restricted(query, identity, docs, max(k, 50), query_vector=q, flat=flat)
        label = f"documents ({len(docs)}) → chunks inside"
        if options.combine == "two_stage":
            return HierarchyResult(inside[:k], docs, [], label)
        flat_rank = [(r.chunk_id, r.score) for r in flat]
        by_id = {r.chunk_id: r for r in [*flat, *inside]}
        if options.combine == "rrf":
            rankings = {"flat": flat_rank, "two_stage": [(r.chunk_id, r.score) for r in inside]}
            fused = rrf(rankings, weights={"flat": options.flat_weight})
            path = f"{label} + flat → rrf"
        else:
            doc_rank = {d.document_id: d.rank for d in docs}
            prior = sorted(
                (r for r in flat if r.document_id in doc_rank), key=lambda r: doc_rank[r.document_id]
            )  # stable: flat order within a document
            rankings = {"flat": flat_rank, "document": [(r.chunk_id, 1.0 / doc_rank[r.document_id]) for r in prior]}
            fused = rrf(rankings, weights={"flat": options.flat_weight, "document": options.document_weight})
            path = f"flat + documents ({len(docs)}) → rrf"
        results = [_with_arms(by_id[f.chunk_id], f.score, f.arms) for f in fused[:k]]
        return HierarchyResult(results, docs, [], path)

    # -- tree -------------------------------------------------------------------------------------------
    def nodes(self, query: str, identity: Identity, k: int, *, query_vector: F32 | None = None) -> list[NodeHit]:
        """Tree nodes of every level *identity* may see, best first (collapsed-tree search)."""
        try:
            self.index.refresh_trees()
        except Exception as exc:  # the tree is optional: search the nodes there are (each re-checked below)
            log.warning("hierarchy_tree_failed: %s; searching the tree as it was", exc)
        rows, matrix = self.node_matrix()
        if not rows:
            return []
        q = query_vector if query_vector is not None else self.embed_query(query)
        allowed = allowed_rows(rows, identity)
        fused = rrf({"dense": matrix.dense("dense", q, allowed, k * 3), "bm25": matrix.keyword(query, allowed, k * 3)})
        by_id = {r.node_id: r for r in rows}
        candidates = [by_id[f.chunk_id] for f in fused[: k * 2]]
        visible = self.visible_chunks([cid for n in candidates for cid in node_cited(n)], identity)
        hits: list[NodeHit] = []
        for f in fused[: k * 2]:
            n = by_id[f.chunk_id]
            cited = node_cited(n)
            if not cited or not all(cid in visible for cid in cited):
                continue
            hits.append(
                NodeHit(n.node_id, n.level, len(hits) + 1, f.score, node_summary(n), cited, n.chunk_ids, n.document_ids)
            )
            if len(hits) == k:
                break
        return hits

    def tree(self, query: str, identity: Identity, flat: Sequence[SearchResult], k: int) -> HierarchyResult:
        """Nodes of every level, each resolved to its best chunks beneath, fused with *flat*."""
        q = self.embed_query(query)
        hits = self.nodes(query, identity, NODE_CANDIDATES, query_vector=q)
        beneath = [cid for n in hits for cid in n.chunk_ids]
        chunks = self.visible_chunks(beneath, identity)
        stored = self.store.get_vectors(list(chunks))
        ranking: list[tuple[str, float]] = []
        seen: set[str] = set()
        for n in hits:
            mine = [c for c in n.chunk_ids if c in chunks and c in stored and c not in seen]
            if not mine:
                continue
            m, _ = _unit_rows([np.asarray(stored[c], dtype=np.float32) for c in mine], len(q))
            scores = m @ q
            for i in np.argsort(-scores, kind="stable")[:CHUNKS_PER_NODE]:
                ranking.append((mine[i], float(scores[i])))
                seen.add(mine[i])
        by_id: dict[str, SearchResult] = {r.chunk_id: r for r in flat}
        for cid, score in ranking:
            by_id.setdefault(cid, SearchResult(chunks[cid], score))
        fused = rrf(
            {"flat": [(r.chunk_id, r.score) for r in flat], "tree": ranking},
            weights={"flat": self.index.options.flat_weight, "tree": self.index.options.tree_weight},
        )
        results = [_with_arms(by_id[f.chunk_id], f.score, f.arms) for f in fused[:k]]
        return HierarchyResult(results, [], hits, f"tree nodes ({len(hits)}) + flat → rrf")


def _with_arms(result: SearchResult, score: float, arms: Mapping[str, ArmHit]) -> SearchResult:
    return replace(result, score=score, arms={**result.arms, **arms}, fusion="rrf")
