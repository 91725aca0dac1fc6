"""Expansion after ranking: parents in place of their children (whole, or auto-merged when enough of
their children were hit), neighbours around each hit.

Pure functions over a :class:`~ragwright.stores.base.ChunkLookup` (any store: ``get_parents`` /
``get_chunks`` apply the caller's security filter inside the lookup): what the caller cannot see is
never added. :func:`expand` runs the configured steps in the pipeline's order.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Literal

from ragwright.chunk.passages import merge_adjacent
from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.model.results import SearchResult
from ragwright.stores.base import ChunkLookup

__all__ = ["ChunkLookup", "expand", "expand_neighbours", "swap_parents"]

log = logging.getLogger(__name__)


def expand(
    lookup: ChunkLookup,
    results: list[SearchResult],
    identity: Identity,
    *,
    parents: Literal["off", "swap", "auto_merge"] = "off",
    auto_merge_ratio: float = 0.5,
    neighbour_window: int = 0,
) -> list[SearchResult]:
    """Parents (``swap``: every hit child by its parent; ``auto_merge``: only where at least
    *auto_merge_ratio* of a parent's children were hit), then *neighbour_window* chunks each side."""
    if parents != "off" and any(r.chunk.parent_id for r in results):
        results = swap_parents(lookup, results, identity, auto_merge_ratio if parents == "auto_merge" else None)
    if neighbour_window > 0 and results:
        results = expand_neighbours(lookup, results, identity, neighbour_window)
    return results


def swap_parents(
    lookup: ChunkLookup, results: list[SearchResult], identity: Identity, auto_merge: float | None = None
) -> list[SearchResult]:
    """Children → their parents, the best-ranked occurrence keeping its place.

    With *auto_merge* (a fraction), a parent replaces its children only when at least that share of
    its children were hit; otherwise the children stay. If any parent cannot be found (or is not
    visible to *identity*), the results are returned unchanged with a warning.
    """
    wanted = list(dict.fromkeys(r.chunk.parent_id for r in results if r.chunk.parent_id))
    found = {p.id: p for p in lookup.get_parents(wanted, identity)}
    if any(pid not in found for pid in wanted):
        log.warning(
            "parent_lookup_failed: %d of %d parents missing; returning the matched chunks",
            len(set(wanted) - set(found)),
            len(wanted),
        )
        return results
    matched: dict[str, list[str]] = {}
    for r in results:
        if r.chunk.parent_id is not None:
            matched.setdefault(r.chunk.parent_id, []).append(r.chunk.id)
    merge = {
        pid
        for pid, hits in matched.items()
        if auto_merge is None or len(set(hits)) >= auto_merge * max(1, _child_count(found[pid]))
    }
    out: list[SearchResult] = []
    emitted: set[str] = set()
    for r in results:
        pid = r.chunk.parent_id
        if pid is None or pid not in merge:
            out.append(r)
        elif pid not in emitted:
            emitted.add(pid)
            parent = replace(found[pid], metadata={**found[pid].metadata, "matched_children": matched[pid]})
            out.append(replace(r, chunk=parent))
    return out


def expand_neighbours(
    lookup: ChunkLookup, results: list[SearchResult], identity: Identity, window: int
) -> list[SearchResult]:
    """Each hit grows by up to *window* chunks on each side (prev/next links, fetched under the
    caller's identity); overlapping or adjacent hits merge into one passage without repeated text."""
    known: dict[str, Chunk] = {r.chunk.id: r.chunk for r in results}
    backward = [r.chunk.prev_id for r in results]
    forward = [r.chunk.next_id for r in results]
    for _ in range(window):
        wanted = [cid for cid in backward + forward if cid and cid not in known]
        for chunk in lookup.get_chunks(wanted, identity) if wanted else []:
            known[chunk.id] = chunk
        backward = [known[c].prev_id if c in known else None for c in backward if c]
        forward = [known[c].next_id if c in known else None for c in forward if c]
    rank = {r.chunk.id: i for i, r in enumerate(results)}
    members = list(results) + [SearchResult(c, float("-inf")) for cid, c in known.items() if cid not in rank]
    out: list[tuple[int, SearchResult]] = []
    for passage in merge_adjacent(members):
        hits = [r for r in passage.results if r.chunk.id in rank]
        if not hits:
            continue
        best = min(hits, key=lambda r: rank[r.chunk.id])
        chunk = replace(
            best.chunk,
            text=passage.text,
            metadata={**best.chunk.metadata, "passage_chunks": list(passage.chunk_ids)},
        )
        out.append((rank[best.chunk.id], replace(best, chunk=chunk)))
    return [r for _, r in sorted(out, key=lambda pair: pair[0])]


def _child_count(parent: Chunk) -> int:
    children = parent.metadata.get("children")
    return len(children) if isinstance(children, list) else 0
