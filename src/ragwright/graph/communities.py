"""Communities (Louvain, networkx) and their extractive summaries, per tenant (never across tenants).

Louvain (Blondel et al. 2008, networkx's ``louvain_partitions``) gives a dendrogram: its last
``levels`` partitions are kept, level 0 the coarsest. Each community of two or more entities gets an
extractive summary: its key entities (most connected first), its strongest relations and the
sentences stating them, each citing its chunk. A summary records every chunk it names or quotes
anything from; global search uses a summary only when the caller may see all of them.
Summaries are rebuilt for a tenant whose graph changed (``dirty``) when global search next needs them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from ragwright._deps import require
from ragwright.graph.local import Resolver
from ragwright.graph.options import GraphOptions
from ragwright.graph.tables import GraphTables
from ragwright.model.identity import Identity
from ragwright.stores.base import ChunkLookup


def build_communities(tables: GraphTables, store: ChunkLookup, tenant: str, options: GraphOptions) -> int:
    """Detect *tenant*'s communities and write their summaries; returns how many summaries."""
    nx = require("networkx", "graph", "graph communities")
    view = tables.tenant_view(tenant)
    resolver = Resolver(tables.aliases(view))
    graph = nx.Graph()
    edges: dict[tuple[str, str], list[tuple[str, str, int, int]]] = defaultdict(list)
    for chunk_id, _doc, s, t, type_, start, end in tables.relations(view):
        a, b = sorted((resolver.canonical(str(s)), resolver.canonical(str(t))))
        if a != b:
            edges[(a, b)].append((str(chunk_id), str(type_), int(start), int(end)))
    for (a, b), evidence in edges.items():
        graph.add_edge(a, b, weight=float(len(evidence)))
    if graph.number_of_nodes() == 0:
        tables.set_communities(tenant, [], [])
        return 0
    partitions = list(nx.community.louvain_partitions(graph, resolution=options.resolution, seed=0))
    kept = partitions[-options.levels :][::-1]  # coarsest first
    mention_rows = tables.mentions(view)
    surfaces: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)  # key -> (surface, chunk) counts
    for chunk_id, _doc, key, surface, *_ in mention_rows:
        surfaces[resolver.canonical(str(key))][(str(surface), str(chunk_id))] += 1
    access = {str(r[0]): r for r in mention_rows}  # chunk ids known to the graph
    members: list[tuple[int, int, str]] = []
    summaries: list[tuple[int, int, dict[str, Any], Sequence[str]]] = []
    texts = _chunk_texts(tables, store, tenant, {c for ev in edges.values() for c, *_ in ev} | set(access))
    for level, partition in enumerate(kept):
        for number, community in enumerate(sorted(partition, key=lambda c: (-len(c), min(c)))):
            for key in community:
                members.append((level, number, key))
            if len(community) < 2:
                continue
            summary = _summary(graph, community, edges, surfaces, texts, options)
            if summary is not None:
                summaries.append((level, number, summary[0], summary[1]))
    tables.set_communities(tenant, members, summaries)
    return len(summaries)


def _chunk_texts(tables: GraphTables, store: ChunkLookup, tenant: str, chunk_ids: set[str]) -> dict[str, str]:
    """Chunk texts for quoting, read per access class (tenant + the row's ACL) through the store's own
    filter; a chunk visible to nobody (empty ACL) is never quoted."""
    out: dict[str, str] = {}
    by_acl: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for chunk_id, acl in tables.chunk_access(tenant):
        if chunk_id in chunk_ids:
            by_acl[acl].append(chunk_id)
    for groups, ids in by_acl.items():
        if not groups:
            continue
        for chunk in store.get_chunks(ids, Identity(tenant, groups)):
            out[chunk.id] = chunk.text
    return out


def _summary(
    graph: Any,
    community: set[str],
    edges: dict[tuple[str, str], list[tuple[str, str, int, int]]],
    surfaces: dict[str, Counter[tuple[str, str]]],
    texts: dict[str, str],
    options: GraphOptions,
) -> tuple[dict[str, Any], list[str]] | None:
    sub = graph.subgraph(community)
    ranked = sorted(community, key=lambda k: (-sub.degree(k, weight="weight"), k))
    cited: list[str] = []
    entities = []
    for key in ranked[:8]:
        named = [(s, c) for (s, c), _ in surfaces[key].most_common() if c in texts]
        if named:
            entities.append({"name": named[0][0], "chunk_id": named[0][1]})
            cited.append(named[0][1])
    if len(entities) < 2:
        return None
    names = {key: e["name"] for key, e in zip(ranked, entities, strict=False)}
    strongest = sorted(sub.edges(data="weight"), key=lambda e: (-e[2], e[0], e[1]))
    relations: list[dict[str, str]] = []
    sentences: list[dict[str, str]] = []
    seen: set[str] = set()
    for a, b, _w in strongest:
        if a not in names or b not in names:
            continue
        pair = (a, b) if (a, b) in edges else (b, a)
        for chunk_id, type_, start, end in edges[pair]:
            if chunk_id not in texts:
                continue
            relations.append({"source": names[a], "type": type_, "target": names[b], "chunk_id": chunk_id})
            sentence = " ".join(texts[chunk_id][start:end].split())
            if sentence not in seen and len(sentences) < options.summary_sentences:
                seen.add(sentence)
                sentences.append({"text": sentence, "chunk_id": chunk_id})
            cited.append(chunk_id)
            break
        if len(relations) >= 8:
            break
    if not sentences:
        return None
    title = ", ".join(e["name"] for e in entities[:3])
    payload = {
        "title": title,
        "size": len(community),
        "entities": entities,
        "relations": relations,
        "sentences": sentences,
    }
    return payload, cited
