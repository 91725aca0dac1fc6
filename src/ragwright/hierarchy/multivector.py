"""Multi-vector parents (a parent indexed through several vectors): a parent — the parent
chunk when the Rag builds parents, else the document — is found through its chunks (their ranks in the
flat result), its summary vector and the hypothetical questions it answers, each ranking fused by RRF
(Cormack, Clarke & Büttcher 2009), and every hit resolves to the parent: the parent chunk as the caller
may see it, or the whole document when it is short (``document_chars``), else its matched chunks —
all of a document or nothing of it, every chunk fetched through the store with the caller's identity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ragwright.hierarchy import search as _search
from ragwright.hierarchy.search import STAGE1_CANDIDATES, HierarchyResult, HierarchySearch
from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.model.ids import chunk_id, content_hash
from ragwright.model.results import SearchResult
from ragwright.retrieve.fusion import rrf


def multi_vector(
    search: HierarchySearch, query: str, identity: Identity, flat: Sequence[SearchResult], k: int
) -> HierarchyResult:
    """Parents ranked through all their vectors (chunks, summaries, questions), resolved to the parent."""
    q = search.embed_query(query)
    chunk_rank: dict[str, tuple[str, float]] = {}
    matched: dict[str, list[str]] = {}
    for r in flat:
        key = r.chunk.parent_id or r.document_id
        chunk_rank.setdefault(key, (key, r.score))
        matched.setdefault(key, []).append(r.chunk_id)
    docs, dmatrix = search.document_matrix()
    allowed = _search.allowed_rows(docs, identity)
    summary = [(d, s) for d, s in dmatrix.dense("summary", q, allowed, STAGE1_CANDIDATES)]
    cited: dict[str, tuple[str, ...]] = {r.document_id: r.cited for r in docs}
    rows, vmatrix = search.vector_matrix()
    vallowed = _search.allowed_rows(rows, identity)
    by_vid = {r.vector_id: r for r in rows}
    questions: dict[str, float] = {}
    for vid, score in vmatrix.dense("dense", q, vallowed, STAGE1_CANDIDATES * 3):
        row = by_vid[vid]
        if row.kind == "summary":
            summary.append((row.parent_id, score))
        else:
            questions[row.parent_id] = max(questions.get(row.parent_id, -1.0), score)
        cited.setdefault(row.parent_id, row.chunk_ids)
    parent_chunks = {r.parent_id for r in rows if r.parent_id != r.document_id}
    parent_chunks |= {r.chunk.parent_id for r in flat if r.chunk.parent_id}
    has_parents = bool(parent_chunks)
    # a document summary stands for the document only where documents are the parents
    summary_rank = sorted(
        {p: s for p, s in summary if has_parents is False or p in parent_chunks}.items(), key=lambda x: -x[1]
    )
    rankings = {
        "chunk": list(chunk_rank.values()),
        "summary": summary_rank,
        "question": sorted(questions.items(), key=lambda x: -x[1]),
    }
    fused = rrf(rankings)
    doc_of = {r.parent_id: r.document_id for r in rows}
    doc_of.update({r.chunk.parent_id or r.document_id: r.document_id for r in flat})
    results: list[SearchResult] = []
    for f in fused:
        parent = resolve_parent(
            search,
            f.chunk_id,
            f.chunk_id in parent_chunks,
            doc_of.get(f.chunk_id, f.chunk_id),
            matched.get(f.chunk_id) or list(cited.get(f.chunk_id, ())),
            identity,
        )
        if parent is not None:
            results.append(SearchResult(parent, f.score, f.arms, "rrf"))
        if len(results) == k:
            break
    return HierarchyResult(results, [], [], "chunks + summaries + questions → parents → rrf")


def resolve_parent(
    search: HierarchySearch,
    parent_id: str,
    is_chunk: bool,
    document_id: str,
    matched: Sequence[str],
    identity: Identity,
) -> Chunk | None:
    """The parent as *identity* may see it: the parent chunk, or the document (whole when short, else
    its matched chunks); ``None`` when not visible."""
    if is_chunk:
        found = search.store.get_parents([parent_id], identity)
        if not found:
            return None
        p = found[0]
        return replace(p, metadata={**p.metadata, "matched_children": list(matched)})
    ids = [c.id for c in search.store.document_chunks(document_id)]
    visible = search.visible_chunks(ids, identity)
    if not visible or len(visible) < len(ids):
        return None  # all of a document, or nothing of it
    members = sorted(visible.values(), key=lambda c: c.position)
    limit = search.index.options.document_chars
    if sum(len(c.text) + 2 for c in members) > limit:
        wanted = set(matched)
        members = [c for c in members if c.id in wanted] or members[:1]
    text: list[str] = []
    used = 0
    for c in members:
        if used + len(c.text) > limit and text:
            break
        text.append(c.text)
        used += len(c.text) + 2
    body = "\n\n".join(text)
    first = members[0]
    return Chunk(
        id="d-" + chunk_id(document_id, content_hash(body), 0)[2:],
        document_id=document_id,
        text=body,
        position=first.position,
        section_path=first.section_path[:1],
        page=first.page,
        tenant=first.tenant,
        acl=first.acl,
        metadata={
            "parent": True,
            "document_parent": True,
            "children": [c.id for c in members][: len(text)],
            "matched_children": list(matched),
        },
    )
