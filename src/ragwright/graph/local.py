"""Local search (after Edge et al. 2024): the question's entities → k hops → evidence chunks → fused with hybrid.

1. **Seeds**: the entities the extractor finds in the question plus every 1–5-word n-gram of it that
   is a known entity key (so ``who directed big stone gap`` links without capitals; a single word the
   question writes in lowercase does not seed), through the aliases the caller may see; then the
   entities of the best ``entry_chunks`` hybrid chunks, at ``entry_weight`` (vector search as the entry
   point into the graph).
2. **Hops**: relations touching the frontier, each step halving the weight and dividing by the
   log-degree of the entity it leaves (hubs spread little), the 32 best entities kept per hop.
3. **Evidence**: chunks mentioning the reached entities, scored by the weights of the entities they
   mention (an entity mentioned in many chunks counts less, like IDF), plus the chunks stating a
   traversed relation. A chunk that opens with a reached entity is about it and counts
   ``GraphOptions.opening_boost`` times (the bridge document of a two-hop question); the question's own
   entities count ``seed_evidence`` (hybrid search finds their chunks already).
4. **Fusion** (:mod:`ragwright.graph.fusion`): RRF of the hybrid and graph rankings for a question
   with an anchored bridge chunk and hybrid's ranking otherwise (the default, ``"anchored"``), RRF for
   every question (``"rrf"``), or hybrid's order with the graph's *bridge chunks* added after its first
   results (``"bridge"``); evidence kept per arm (``arms["graph"]``).

Everything read goes through :class:`~ragwright.graph.visibility.Visibility`: the graph's rows under
the store's security expression and every chunk re-fetched with the caller's identity.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragwright.graph.fusion import fuse
from ragwright.graph.model import ChunkText, Extractor, entity_key
from ragwright.graph.options import GraphOptions
from ragwright.graph.tables import GraphTables
from ragwright.graph.visibility import Visibility
from ragwright.model.chunk import Chunk
from ragwright.model.results import SearchResult

_WORDS = re.compile(r"[\w'’&+\-.]+")
_PER_HOP = 32
SINGLE_WORD_NGRAMS = False  # one-word n-grams written in lowercase ("series", "father") seed too (tuned: no)
_OPENING = 4  # "opens with": the mention starts within this many characters of the chunk's start


@dataclass(frozen=True, slots=True)
class EntityView:
    """An entity as the caller may see it: its name from a visible mention, its type, the hop it was
    reached at (0: in the question), its weight and the visible chunks that mention it."""

    name: str
    type: str
    hop: int
    weight: float
    chunk_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RelationView:
    source: str
    type: str
    target: str
    chunk_id: str
    evidence: str


@dataclass
class GraphResult:
    """What a graph search returns: ranked chunks and the entities/relations the caller may see."""

    results: list[SearchResult]
    entities: list[EntityView] = field(default_factory=list)
    relations: list[RelationView] = field(default_factory=list)


class Resolver:
    """Aliases the caller may see: ``canonical(key)`` and every key naming the same entity."""

    def __init__(self, aliases: dict[str, str]) -> None:
        self._to = aliases
        self._members: dict[str, set[str]] = defaultdict(set)
        for alias in aliases:
            self._members[self.canonical(alias)].add(alias)

    def canonical(self, key: str) -> str:
        seen = {key}
        while key in self._to and self._to[key] not in seen:
            key = self._to[key]
            seen.add(key)
        return key

    def keys(self, canonical: str) -> set[str]:
        return {canonical, *self._members.get(canonical, ())}


def query_found(query: str, extractor: Extractor) -> list[str]:
    """The entity keys the extractor itself finds in the question."""
    return [m.key for x in extractor.extract([ChunkText("query", query)]) for m in x.mentions]


def query_keys(query: str, extractor: Extractor) -> list[str]:
    """Candidate entity keys of a question: what the extractor finds, then its n-grams (longest first)."""
    found = query_found(query, extractor)
    words = _WORDS.findall(query)
    grams = [entity_key(" ".join(words[i : i + n])) for n in range(5, 0, -1) for i in range(len(words) - n + 1)]
    return list(dict.fromkeys(k for k in [*found, *grams] if len(k) > 2))


@dataclass
class Walk:
    """What the graph step found before fusion: its ranking of visible chunks (best first), the chunks
    themselves, *bridges* (chunks that open with a reached entity other than the question's own, with
    that entity's weight), the number of question *seeds*, and the *anchored* bridges: those whose
    entity is named in an entry chunk (hybrid's best) that itself opens with a question entity — the
    second document of a two-hop question."""

    ranking: list[tuple[str, float]]
    visible: dict[str, Chunk]
    bridges: dict[str, float]
    seeds: int
    anchored: set[str] = field(default_factory=set)
    entities: list[EntityView] = field(default_factory=list)
    relations: list[RelationView] = field(default_factory=list)


def local_search(
    tables: GraphTables,
    view: Visibility,
    query: str,
    extractor: Extractor,
    options: GraphOptions,
    hybrid: Sequence[SearchResult] = (),
    *,
    top_k: int = 10,
) -> GraphResult:
    found = walk(tables, view, query, extractor, options, hybrid)
    return GraphResult(fuse(hybrid, found, options, top_k), found.entities, found.relations)


def walk(
    tables: GraphTables,
    view: Visibility,
    query: str,
    extractor: Extractor,
    options: GraphOptions,
    hybrid: Sequence[SearchResult] = (),
) -> Walk:
    """Steps 1–3 of local search (seeds, hops, evidence) as the caller may see them."""
    security = view.sql()
    resolver = Resolver(tables.aliases(security))
    # 1. seeds
    candidates = query_keys(query, extractor)
    lookup = sorted({k for c in candidates for k in resolver.keys(resolver.canonical(c))})
    rows = tables.mentions(security, lookup)
    present = {resolver.canonical(r[2]) for r in rows}
    weights: dict[str, float] = {}
    hop_of: dict[str, int] = {}
    common = set() if SINGLE_WORD_NGRAMS else {entity_key(w) for w in _WORDS.findall(query) if w[:1].islower()}
    common -= {*query_found(query, extractor), entity_key(query)}
    for c in candidates:
        if c in common:
            continue  # a lowercase word of the question ("series", "father") that names something somewhere
        canon = resolver.canonical(c)
        if canon in present and canon not in weights and len(weights) < options.max_seeds:
            if any(canon in w.split() or w in canon.split() for w in weights) and len(canon.split()) == 1:
                continue  # a word of a seed already taken ("gap" of "big stone gap")
            weights[canon], hop_of[canon] = 1.0, 0
    question = set(weights)  # the question's own entities
    named_in: defaultdict[str, set[str]] = defaultdict(set)  # entity → the entry chunks naming it
    for r in hybrid[: options.entry_chunks]:
        names = r.chunk.metadata.get("entities")
        for name in names if isinstance(names, list) else []:
            canon = resolver.canonical(entity_key(str(name)))
            named_in[canon].add(r.chunk_id)
            if canon not in weights:
                weights[canon], hop_of[canon] = options.entry_weight, 0
    # 2. hops
    frontier = dict(weights)
    relation_chunks: defaultdict[str, float] = defaultdict(float)
    traversed: list[tuple[str, str, str, str, int, int]] = []
    for hop in range(1, options.hops + 1):
        if not frontier:
            break
        keys = sorted({k for f in frontier for k in resolver.keys(f)})
        edges = tables.relations(security, keys)
        degree: Counter[str] = Counter()
        for _, _, s, t, *_ in edges:
            degree[resolver.canonical(s)] += 1
            degree[resolver.canonical(t)] += 1
        reached: dict[str, float] = {}
        for chunk_id, _doc, s, t, type_, start, end in edges:
            a, b = resolver.canonical(s), resolver.canonical(t)
            for here, there in ((a, b), (b, a)):
                if here in frontier and there != here:
                    w = frontier[here] * 0.5 / math.log2(2 + degree[here])
                    relation_chunks[chunk_id] += w
                    traversed.append((chunk_id, a, type_, b, start, end))
                    if there not in weights and w > reached.get(there, 0.0):
                        reached[there] = w
        best = sorted(reached.items(), key=lambda kv: (-kv[1], kv[0]))[:_PER_HOP]
        frontier = dict(best)
        for key, w in best:
            weights[key], hop_of[key] = w, hop
    # 3. evidence
    keys = sorted({k for e in weights for k in resolver.keys(e)})
    mentions = tables.mentions(security, keys)
    per_entity: dict[str, set[str]] = defaultdict(set)
    opens: set[tuple[str, str]] = set()
    for chunk_id, _doc, key, _surface, _type, start, *_ in mentions:
        canon = resolver.canonical(key)
        per_entity[canon].add(chunk_id)
        if int(start) <= _OPENING:
            opens.add((canon, chunk_id))
    scores: defaultdict[str, float] = defaultdict(float, relation_chunks)
    for entity, chunk_ids in per_entity.items():
        idf = 1.0 / math.log2(1 + len(chunk_ids))
        for cid in chunk_ids:
            boost = options.opening_boost if (entity, cid) in opens else 1.0
            seed = options.seed_evidence if hop_of.get(entity) == 0 and weights.get(entity) == 1.0 else 1.0
            scores[cid] += weights.get(entity, 0.0) * idf * boost * seed
    bridges: dict[str, float] = {}
    anchors = {cid for entity, cid in opens if entity in question}  # chunks about a question entity
    anchored: set[str] = set()
    for entity, cid in opens:
        if entity not in question:
            bridges[cid] = max(bridges.get(cid, 0.0), weights[entity])
            if named_in[entity] & anchors - {cid}:
                anchored.add(cid)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[: options.top_k * 3]
    visible = view.chunks(cid for cid, _ in ranked)
    graph_ranking = [(cid, s) for cid, s in ranked if cid in visible][: options.top_k]
    seeds = sum(1 for k in weights if hop_of[k] == 0 and weights[k] == 1.0)
    return Walk(
        graph_ranking,
        visible,
        {cid: w for cid, w in bridges.items() if cid in visible},
        seeds,
        {cid for cid in anchored if cid in visible},
        _entities(mentions, resolver, weights, hop_of, view),
        _relations(traversed, mentions, resolver, view),
    )


def _names(mentions: Sequence[tuple[object, ...]], resolver: Resolver, view: Visibility) -> dict[str, tuple[str, str]]:
    """A displayable ``(name, type)`` per canonical key, only from mentions in chunks the caller sees."""
    visible = view.chunks(str(m[0]) for m in mentions)
    surfaces: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)
    for chunk_id, _doc, key, surface, type_, *_ in mentions:
        if chunk_id in visible:
            surfaces[resolver.canonical(str(key))][(str(surface), str(type_))] += 1
    return {k: c.most_common(1)[0][0] for k, c in surfaces.items()}


def _entities(
    mentions: Sequence[tuple[object, ...]],
    resolver: Resolver,
    weights: dict[str, float],
    hop_of: dict[str, int],
    view: Visibility,
) -> list[EntityView]:
    names = _names(mentions, resolver, view)
    visible = view.chunks(str(m[0]) for m in mentions)
    chunks: dict[str, list[str]] = defaultdict(list)
    for m in mentions:
        if m[0] in visible:
            chunks[resolver.canonical(str(m[2]))].append(str(m[0]))
    out = [
        EntityView(names[k][0], names[k][1], hop_of[k], w, tuple(dict.fromkeys(chunks[k])))
        for k, w in weights.items()
        if k in names
    ]
    return sorted(out, key=lambda e: (e.hop, -e.weight, e.name))


def _relations(
    traversed: Sequence[tuple[str, str, str, str, int, int]],
    mentions: Sequence[tuple[object, ...]],
    resolver: Resolver,
    view: Visibility,
) -> list[RelationView]:
    names = _names(mentions, resolver, view)
    visible = view.chunks(t[0] for t in traversed)
    out: dict[tuple[str, str, str], RelationView] = {}
    for chunk_id, a, type_, b, start, end in traversed:
        chunk = visible.get(chunk_id)
        if chunk is None or a not in names or b not in names:
            continue
        out.setdefault((a, type_, b), RelationView(names[a][0], type_, names[b][0], chunk_id, chunk.text[start:end]))
    return list(out.values())[:50]
