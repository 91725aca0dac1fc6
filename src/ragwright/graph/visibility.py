"""The graph's one security filter: what the caller may see of the graph, from the caller's identity.

Two layers, both always on: every graph read runs under :meth:`Visibility.sql` (the store's own tenant
+ ACL expression, SQLite's or PostgreSQL's, over the tenant/ACL each graph row copied from its chunk),
and every chunk the graph would show or name anything from is fetched again through the store with the caller's identity
(:meth:`Visibility.chunks`), so a deleted chunk or one whose ACL changed since the graph row was written
counts for nothing. An entity, relation or summary is shown only through mentions in chunks that pass
both — never its name otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.stores.base import ChunkLookup
from ragwright.stores.side_tables import side_dialect


class Visibility:
    """The caller's view of the graph (see the module docstring)."""

    def __init__(self, store: ChunkLookup, identity: Identity) -> None:
        self.store, self.identity = store, identity
        self._seen: dict[str, Chunk | None] = {}

    def sql(self) -> tuple[str, list[Any]]:
        """The caller's tenant + ACL predicate over the graph rows' ``tenant`` / ``acl``, in the SQL of the
        store's side tables (the store's own security expression)."""
        params: list[Any] = []
        return side_dialect(self.store).security(self.identity, "tenant", "acl", params), params

    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """The chunks among *chunk_ids* the caller may see now (fetched through the store, cached per view)."""
        asked = list(dict.fromkeys(chunk_ids))
        wanted = [c for c in asked if c not in self._seen]
        if wanted:
            found = {c.id: c for c in self.store.get_chunks(wanted, self.identity)}
            for cid in wanted:
                self._seen[cid] = found.get(cid)
        return {cid: chunk for cid in asked if (chunk := self._seen.get(cid)) is not None}
