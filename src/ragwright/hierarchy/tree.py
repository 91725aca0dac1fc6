"""A RAPTOR-style summary tree per access scope (after Sarthi et al. 2024, "RAPTOR: Recursive
Abstractive Processing for Tree-Organized Retrieval"), rebuilt incrementally.

Level 0 are the chunks (in the store). Level 1: the scope's chunk vectors clustered (spherical k-means,
k-means++ seeding with a fixed seed, about ``branching`` chunks a cluster), each cluster summarised
(:mod:`~ragwright.hierarchy.summarize`: extractive, or the chat model) into a node whose vector is its
members' centroid or its summary's embedding. Level ℓ+1 clusters level ℓ's nodes the same way, until
one node is left or ``levels`` is reached. Every node lists the chunks beneath it; its summary cites
only chunks among them.

One tree per *scope* (one tenant + one ACL): a node never mixes documents that different callers may
see, so a caller either may see every document beneath a node or none of them.

Incremental: a scope whose documents changed is rebuilt by keeping its level-1 nodes whose chunks all
still exist there (chunk ids derive from content, so an unchanged document keeps them), clustering
only the chunks left uncovered (a changed document's new chunks, the rest of a cluster that held a
changed or removed one) into new level-1 nodes, then rebuilding the levels above (a few nodes).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ragwright.hierarchy.options import HierarchyOptions
from ragwright.hierarchy.summarize import Summary, extractive_summary, llm_summary
from ragwright.hierarchy.tables import HierarchyTables, NodeRow
from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity

if TYPE_CHECKING:
    from ragwright.models.embedders.base import Embedder
    from ragwright.models.llms.base import ChatModel
    from ragwright.stores.base import Store

F32 = npt.NDArray[np.float32]


def _unit(m: F32) -> F32:
    out: F32 = (m / np.maximum(np.linalg.norm(m, axis=-1, keepdims=True), 1e-9)).astype(np.float32)
    return out


def kmeans(vectors: F32, k: int, *, seed: int = 0, iterations: int = 15) -> npt.NDArray[np.int64]:
    """Spherical k-means labels of the rows of *vectors* (k-means++ seeding, deterministic for a seed);
    an emptied cluster takes the point farthest from its centre."""
    n = len(vectors)
    if k >= n:
        return np.arange(n, dtype=np.int64)
    if k <= 1:
        return np.zeros(n, dtype=np.int64)
    m = _unit(np.asarray(vectors, dtype=np.float32))
    rng = np.random.default_rng(seed)
    centres = [int(rng.integers(n))]
    closest = 1.0 - m @ m[centres[0]]
    for _ in range(1, k):
        weights = np.maximum(closest, 0.0) ** 2
        total = float(weights.sum())
        pick = int(rng.choice(n, p=weights / total)) if total > 0 else int(rng.integers(n))
        centres.append(pick)
        closest = np.minimum(closest, 1.0 - m @ m[pick])
    c = m[centres].copy()
    labels = np.zeros(n, dtype=np.int64)
    for _ in range(iterations):
        sims = m @ c.T
        new = np.argmax(sims, axis=1).astype(np.int64)
        for j in range(k):
            if not np.any(new == j):  # an empty cluster takes the worst-placed point
                worst = int(np.argmin(sims[np.arange(n), new]))
                new[worst] = j
        if np.array_equal(new, labels) and _ > 0:
            break
        labels = new
        for j in range(k):
            c[j] = m[labels == j].mean(axis=0)
        c = _unit(c)
    return labels


def node_id(scope: str, level: int, chunk_ids: Sequence[str]) -> str:
    digest = hashlib.sha1(json.dumps([scope, level, sorted(chunk_ids)]).encode()).hexdigest()[:20]
    return f"n{level}-{digest}"


def scope_access(scope: str) -> tuple[str, tuple[str, ...]]:
    tenant, _, acl = scope.partition("\x1f")
    return tenant, tuple(json.loads(acl))


class TreeBuilder:
    """Builds and refreshes the trees of one store's scopes (see the module docstring)."""

    def __init__(
        self,
        tables: HierarchyTables,
        store: Store,
        embedder: Embedder,
        options: HierarchyOptions,
        llm: ChatModel | None = None,
    ) -> None:
        self.tables, self.store, self.embedder, self.options, self.llm = tables, store, embedder, options, llm

    def _summarise(self, chunks: Sequence[Chunk], vectors: dict[str, Any], sentences: int) -> Summary:
        if self.llm is not None:
            return llm_summary(self.llm, chunks, vectors, sentences_wanted=sentences)
        return extractive_summary(chunks, vectors, sentences_wanted=sentences)

    def refresh(self) -> list[str]:
        """Rebuild every stale scope; returns them."""
        dirty = self.tables.dirty_scopes()
        for scope in dirty:
            self.build(scope)
        return dirty

    def build(self, scope: str) -> list[NodeRow]:
        """(Re)build *scope*'s tree incrementally; returns its nodes."""
        tenant, acl = scope_access(scope)
        documents = self.tables.scope_documents(scope)
        leaves = [cid for doc in sorted(documents) for cid in documents[doc]]
        if not leaves or not acl:  # nothing there, or visible to nobody: no tree
            self.tables.set_nodes(scope, [])
            return []
        doc_of = {cid: doc for doc, ids in documents.items() for cid in ids}
        current = set(leaves)
        old = [n for n in self.tables.nodes(scope) if n.level == 1]
        kept = [n for n in old if n.chunk_ids and set(n.chunk_ids) <= current]
        covered = {cid for n in kept for cid in n.chunk_ids}
        free = [cid for cid in leaves if cid not in covered]
        vectors = {k: np.asarray(v, dtype=np.float32) for k, v in self.store.get_vectors(free).items()}
        free = [cid for cid in free if cid in vectors]
        reader = Identity(tenant, acl)  # sees exactly this scope
        level1 = list(kept)
        if free:
            chunks = {c.id: c for c in self.store.get_chunks(free, reader)}
            free = [cid for cid in free if cid in chunks]
            groups = self._cluster(free, np.stack([vectors[c] for c in free]) if free else np.zeros((0, 1), np.float32))
            level1 += self._nodes(scope, 1, groups, chunks, vectors, doc_of)
        nodes = list(level1)
        below = level1
        for level in range(2, self.options.levels + 1):
            if len(below) <= 1:
                break
            centroids = np.stack(
                [_unit(n.vector) if self.options.node_vector == "centroid" else n.vector for n in below]
            )
            labels = kmeans(centroids, math.ceil(len(below) / self.options.branching))
            groups_n: dict[int, list[NodeRow]] = {}
            for n, label in zip(below, labels, strict=True):
                groups_n.setdefault(int(label), []).append(n)
            if len(groups_n) >= len(below):
                break
            cited = [cid for n in below for cid in node_cited(n)]
            chunks = {c.id: c for c in self.store.get_chunks(cited, reader)}
            cited_vectors = {k: np.asarray(v, dtype=np.float32) for k, v in self.store.get_vectors(cited).items()}
            member_groups = []
            for label in sorted(groups_n):
                children = groups_n[label]
                member_groups.append(([cid for n in children for cid in n.chunk_ids], children))
            upper = self._nodes(scope, level, member_groups, chunks, cited_vectors, doc_of)
            nodes += upper
            below = upper
        self.tables.set_nodes(scope, nodes)
        return nodes

    def _cluster(self, ids: list[str], m: F32) -> list[tuple[list[str], list[NodeRow]]]:
        if not ids:
            return []
        labels = kmeans(m, math.ceil(len(ids) / self.options.branching))
        groups: dict[int, list[str]] = {}
        for cid, label in zip(ids, labels, strict=True):
            groups.setdefault(int(label), []).append(cid)
        return [(groups[label], []) for label in sorted(groups)]

    def _nodes(
        self,
        scope: str,
        level: int,
        groups: Sequence[tuple[list[str], list[NodeRow]]],
        chunks: dict[str, Chunk],
        vectors: dict[str, F32],
        doc_of: dict[str, str],
    ) -> list[NodeRow]:
        tenant, acl = scope_access(scope)
        out: list[NodeRow] = []
        summaries: list[Summary] = []
        centroids: list[F32] = []
        for leaf_ids, children in groups:
            if children:  # an upper node: its children's cited chunks stand for the chunks beneath
                pool = [chunks[c] for n in children for c in node_cited(n) if c in chunks]
                weights = np.asarray([len(n.chunk_ids) for n in children], dtype=np.float32)
                base = np.stack(
                    [n.vector if self.options.node_vector == "centroid" else _unit(n.vector) for n in children]
                )
                centroids.append(_unit((base * weights[:, None]).sum(axis=0)))
            else:
                pool = [chunks[c] for c in leaf_ids if c in chunks]
                centroids.append(_unit(np.stack([vectors[c] for c in leaf_ids]).mean(axis=0)))
            summaries.append(self._summarise(pool, vectors, 2 + level))
        if self.options.node_vector == "summary" and summaries:
            embedded = np.asarray(self.embedder.embed_documents([s.text for s in summaries]), dtype=np.float32)
            centroids = [_unit(v) for v in embedded]
        for (leaf_ids, children), summary, vector in zip(groups, summaries, centroids, strict=True):
            out.append(
                NodeRow(
                    node_id(scope, level, leaf_ids),
                    scope,
                    tenant,
                    acl,
                    level,
                    encode_text(summary),
                    vector,
                    tuple(leaf_ids),
                    tuple(sorted({doc_of[c] for c in leaf_ids if c in doc_of})),
                    tuple(n.node_id for n in children),
                )
            )
        return out


def encode_text(summary: Summary) -> str:
    """A node's stored text: its cited chunk ids (JSON), a record separator, the summary."""
    return json.dumps(list(summary.chunk_ids)) + "\x1e" + summary.text


def node_cited(node: NodeRow) -> tuple[str, ...]:
    head, _, _ = node.text.partition("\x1e")
    return tuple(json.loads(head))


def node_summary(node: NodeRow) -> str:
    return node.text.partition("\x1e")[2]
