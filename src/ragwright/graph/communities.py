"""Communities (Louvain, networkx) and their extractive summaries, per tenant (never across tenants).

Louvain (Blondel et al. 2008, networkx's ``louvain_partitions``) gives a dendrogram: its last
``levels`` partitions are kept, level 0 the coarsest. Each community of two or more entities gets an
extractive summary: its key entities (most connected first), its strongest relations and the
sentences stating them, each citing its chunk. A summary's sentences are never reference-list,
navigation or table-of-contents lines (:func:`is_reference_line`: "Oxford: Oxford University Press.",
"^ Smith, J. (2001). …", leader dots), and prose sentences come before other lines (:func:`is_prose`): a
bibliography's dense capitalised names make strong relations, but say nothing of what the corpus is
about. A summary records every chunk it names or quotes
anything from; global search uses a summary only when the caller may see all of them.
Summaries are rebuilt for a tenant whose graph changed (``dirty``) when global search next needs them.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ragwright._deps import require
from ragwright.generate.lines import clean_inline, is_navigation, is_title_like
from ragwright.graph.local import Resolver
from ragwright.graph.options import GraphOptions
from ragwright.graph.tables import GraphTables
from ragwright.model.identity import Identity
from ragwright.stores.base import ChunkLookup

if TYPE_CHECKING:
    from ragwright.models.embedders.base import Embedder

#: Marks only a reference-list entry carries: a caret back-link, ISBN/ISSN/DOI/arXiv, "Retrieved <date>",
#: "Archived from", page ranges, a year in parentheses closing a clause ("Smith, J. (2001).").
_CITATION: Final = re.compile(
    r"\^|\bISBN\b|\bISSN\b|\bdoi\s*[:.]|\barXiv\s*:|\bRetrieved (?:on )?(?:\d|[A-Z][a-z]+ \d)"
    r"|\bArchived (?:from\b|\d{4}-\d\d-\d\d)"
    r"|\bpp?\.\s*\d|\(\s*(?:1[5-9]|20)\d\d[a-z]?\s*\)\s*[.,:]"
)
#: A publisher ("Csiro Publishing", "Oxford University Press"), an author list ("Smith, J.;", "Young,
#: Emma.", "Boles, Walter E., eds.", "Ruochen Zhang2, Melissa Dell3"): a reference entry when the line is
#: not prose.
_PUBLISHER: Final = re.compile(
    r"\b(?:Press|Publishing|Publishers|Publications|Editions|Verlag|Books|Limited|Ltd)\b"
    r"|\b[A-Z][\w'’-]+, (?:[A-Z]\.\s?){1,3}[,;.]|\b[A-Z][\w'’-]+, [A-Z][\w'’-]+(?: [A-Z]\.)*(?:;|\.\s*$)"
    r"|\beds?\.|\b[A-Z][a-z]+\d{1,2}\W.*\b[A-Z][a-z]+\d{1,2}\b"
)
#: Reference markers ending a sentence ("… (Åland).[51]"): left out of the quote (still the chunk's own
#: text, a prefix of the span), so a ``[Source N]`` follows the sentence's words.
_TRAILING_MARKERS: Final = re.compile(r"(?:\s*\[(?:\d{1,4}|[a-z]|note \d+|citation needed)\])+\s*$", re.IGNORECASE)
#: Summaries as written: (level, community, payload, chunk ids).
_Summaries = list[tuple[int, int, dict[str, Any], Sequence[str]]]
_WORDS: Final = re.compile(r"[^\W\d_][\w'’-]*")
_ENDS: Final = (".", "!", "?", "。")


def is_prose(sentence: str) -> bool:
    """A sentence of running text: five words or more, ending as a sentence, not title-like, at least a
    quarter of its words lower-case and under three quarters of its longer words (four letters or more)
    capitalised (a reference entry, an author list or a title is mostly capitals)."""
    text = clean_inline(sentence).rstrip("\"'”’)] ")
    words = _WORDS.findall(text)
    if len(words) < 5 or not text.endswith(_ENDS) or is_title_like(text):
        return False
    return 4 * sum(1 for w in words if w[0].islower()) >= len(words) and not _title_case(words)


def _title_case(words: list[str]) -> bool:
    """At least three quarters of the longer words (four letters or more) capitalised."""
    long_words = [w for w in words if len(w) > 3]
    return bool(long_words) and 4 * sum(1 for w in long_words if w[0].isupper()) >= 3 * len(long_words)


def is_reference_line(sentence: str) -> bool:
    """A reference-list, navigation or table-of-contents line (never a theme's sentence): navigation and
    leader-dot lines (:func:`~ragwright.generate.lines.is_navigation`), a citation's marks, or a line
    that is not prose and names a publisher or an author list."""
    text = " ".join(sentence.split())
    if is_navigation(text) or _CITATION.search(text):
        return True
    if is_prose(text):
        return False
    return bool(_PUBLISHER.search(text)) or _is_cited_title(text)


def _is_cited_title(text: str) -> bool:
    """A title-case line ending in a period, of sixteen words at most, no record ("The Sibley Guide to Bird Life and
    Behaviour."): a book's or an article's title in a reference list."""
    words = _WORDS.findall(text)
    if len(words) > 16 or ";" in text or not text.rstrip("\"'”’)] ").endswith("."):
        return False  # a record ("Team: Boston Bruins; Year: 1970.") is a table's row
    return _title_case(words)


def summary_text(payload: dict[str, Any]) -> str:
    """What global search embeds of a summary: its title, entities and sentences (whitespace collapsed)."""
    entities = " ".join(e["name"] for e in payload["entities"])
    sentences = " ".join(" ".join(s["text"].split()) for s in payload["sentences"])
    return f"{payload['title']}. {entities}. {sentences}"


def build_communities(
    tables: GraphTables, store: ChunkLookup, tenant: str, options: GraphOptions, embedder: Embedder | None = None
) -> int:
    """Detect *tenant*'s communities and write their summaries; returns how many summaries. With an
    *embedder*, each summary is written with its embedding (``embedding``, and ``embedder``: the model's
    name), so that global search embeds only the question."""
    nx = require("networkx", "graph", "graph communities")
    view = tables.tenant_view(tenant)
    resolver = Resolver(tables.aliases(view))
    graph = nx.Graph()
    edges: dict[tuple[str, str], list[tuple[str, str, int, int]]] = defaultdict(list)
    documents: dict[str, str] = {}  # chunk id -> its document
    for chunk_id, doc, s, t, type_, start, end in tables.relations(view):
        documents[str(chunk_id)] = str(doc)
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
    for chunk_id, doc, key, surface, *_ in mention_rows:
        documents[str(chunk_id)] = str(doc)
        surfaces[resolver.canonical(str(key))][(str(surface), str(chunk_id))] += 1
    access = {str(r[0]): r for r in mention_rows}  # chunk ids known to the graph
    members: list[tuple[int, int, str]] = []
    summaries: _Summaries = []
    texts = _chunk_texts(tables, store, tenant, {c for ev in edges.values() for c, *_ in ev} | set(access))
    for level, partition in enumerate(kept):
        for number, community in enumerate(sorted(partition, key=lambda c: (-len(c), min(c)))):
            for key in community:
                members.append((level, number, key))
            if len(community) < 2:
                continue
            summary = _summary(graph, community, edges, surfaces, texts, documents, options)
            if summary is not None:
                summaries.append((level, number, summary[0], summary[1]))
    if embedder is not None and summaries:
        _embed(tables, tenant, summaries, embedder)
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
    documents: dict[str, str],
    options: GraphOptions,
) -> tuple[dict[str, Any], list[str]] | None:
    sub = graph.subgraph(community)
    ranked = sorted(community, key=lambda k: (-sub.degree(k, weight="weight"), k))
    cited: list[str] = []
    entities = []
    names: dict[str, str] = {}
    for key in ranked[:8]:
        named = [(s, c) for (s, c), _ in surfaces[key].most_common() if c in texts]
        if named:
            entities.append({"name": named[0][0], "chunk_id": named[0][1]})
            names[key] = named[0][0]
            cited.append(named[0][1])
    if len(entities) < 2:
        return None
    strongest = sorted(sub.edges(data="weight"), key=lambda e: (-e[2], e[0], e[1]))
    relations: list[dict[str, str]] = []
    found: list[tuple[bool, dict[str, str]]] = []  # (prose, sentence), strongest relation first
    seen: set[str] = set()
    for a, b, _w in strongest:
        if a not in names or b not in names:
            continue
        pair = (a, b) if (a, b) in edges else (b, a)
        stated = [ev for ev in edges[pair] if ev[0] in texts]
        if not stated:
            continue
        relations.append({"source": names[a], "type": stated[0][1], "target": names[b], "chunk_id": stated[0][0]})
        cited.append(stated[0][0])
        for chunk_id, _type, start, end in stated:  # the first sentence stating it that is no reference line
            raw = _TRAILING_MARKERS.sub("", texts[chunk_id][start:end]).strip()  # the chunk's own text
            sentence = " ".join(raw.split())
            if is_reference_line(sentence):
                continue
            if sentence not in seen:
                seen.add(sentence)
                sentence_of = {"text": raw, "chunk_id": chunk_id, "document_id": documents.get(chunk_id, "")}
                found.append((is_prose(sentence), sentence_of))
                cited.append(chunk_id)
            break
        if len(relations) >= 8:
            break
    found.sort(key=lambda f: not f[0])  # prose first (stable: strongest relation first within each)
    sentences = [s for _, s in found[: options.summary_sentences]]
    if not sentences:
        return None
    quoted = " ".join(texts[s["chunk_id"]] for s in sentences[:2]).casefold()
    titled = [e["name"] for e in entities if e["name"].casefold() in quoted] or [e["name"] for e in entities]
    title = ", ".join(titled[:3])  # the key entities the quoted chunks name
    payload = {
        "title": title,
        "size": len(community),
        "entities": entities,
        "relations": relations,
        "sentences": sentences,
        "chunks": len(set(cited)),  # coverage, for global search's ranking
        "documents": len({documents.get(c, c) for c in cited}),
        "prose": found[0][0],
    }
    return payload, cited


def _embed(tables: GraphTables, tenant: str, summaries: _Summaries, embedder: Embedder) -> None:
    """Write each summary's embedding into its payload; a summary whose text the previous build embedded
    with the same model keeps that embedding (a rebuild embeds only the summaries with new text)."""
    known = {
        summary_text(p): p["embedding"]
        for _, _, p, _ in tables.summaries(tenant)
        if p.get("embedder") == embedder.name and "embedding" in p
    }
    texts = [summary_text(p) for _, _, p, _ in summaries]
    fresh = list(dict.fromkeys(t for t in texts if t not in known))
    if fresh:
        for text, vector in zip(fresh, embedder.embed_documents(fresh), strict=True):
            known[text] = [round(float(x), 6) for x in vector]
    for (_, _, payload, _), text in zip(summaries, texts, strict=True):
        payload["embedding"] = known[text]
        payload["embedder"] = embedder.name
