"""The chunks' rowids and the filtered sets every search arm of a SQLite store starts from (a part of
:class:`~ragwright.stores.sqlite.SqliteStore`).

Derived state, reloaded when the file changed (this process's writes or another's): every chunk's rowid
(sorted; matrix positions index it) with the crc32 of its chunk id (a rowid reused by another chunk is
noticed), the *eligible positions* of a filter (the chunks an identity may see that match a metadata
filter: the dense arm's input) and the *allowed ids* (the same set as chunk ids: the keyword and sparse
arms' input). The security and metadata filters are compiled to SQL and applied here, *before* top-k;
the sets are cached per filter until the next write. Read them inside one read snapshot
(:meth:`~ragwright.stores.sqlite.handle.SqliteHandle.read_snapshot`): they then come from one committed
state of the file.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.stores.sqlite.sql_filters import compile_filter, compile_security

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ragwright.stores.sqlite.handle import SqliteHandle

__all__ = ["SqliteRows"]

log = logging.getLogger(__name__)

#: Eligible sets kept per store until the next write (each up to one int64 per chunk).
_CACHED_SETS = 64


class SqliteRows:
    """The rowids of the current collection's chunks and the eligible sets of filters over them."""

    def __init__(self, handle: SqliteHandle) -> None:
        self._h = handle
        self.rowids: npt.NDArray[np.int64] | None = None  # every chunk's rowid, sorted (positions index it)
        self.tags: npt.NDArray[np.uint32] | None = None  # crc32 of each rowid's chunk id
        self.version: tuple[int, int] | None = None  # the file version the rowids reflect
        #: Counts reloads: derived state built over the rowids (the dense index) re-syncs when it moved.
        self.generation = 0
        self._eligible: dict[str, npt.NDArray[np.intp]] = {}
        self._allowed: dict[str, frozenset[str] | None] = {}
        handle.on_move(self.reset)

    def reset(self) -> None:
        """Forget everything (the handle moved to another collection)."""
        self.rowids = None
        self._eligible.clear()
        self._allowed.clear()

    def load(self) -> npt.NDArray[np.int64]:
        """Every chunk's rowid (sorted), reloaded when the file changed (ours or another process). Call
        inside a read snapshot. Read from the chunk-id index: the rows themselves (vectors, texts) are not
        read."""
        import zlib

        import numpy as np

        h = self._h
        version = h.version()
        if self.rowids is None or version != self.version:
            rows = h.conn.execute(f"SELECT rowid, chunk_id FROM {h.tables.chunks}").fetchall()
            rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            order = np.argsort(rowids, kind="stable")
            tags = np.fromiter((zlib.crc32(r[1].encode()) for r in rows), dtype=np.uint32, count=len(rows))
            del rows
            self.rowids, self.tags = rowids[order], tags[order]
            self.version = version
            self.generation += 1
            self._eligible.clear()
            self._allowed.clear()
        return self.rowids

    def eligible_positions(
        self, identity: Identity, metadata_filter: Filter | None, *, recheck: bool = True
    ) -> npt.NDArray[np.intp]:
        """Positions (in the rowids) of the chunks *identity* may see that match the filter (call inside a
        read snapshot: the positions index the rowids loaded in it).

        The set is cached per (identity signature, compiled filter) until the next write, so repeated
        queries — unfiltered or with the same metadata filter — do not scan the table.
        """
        import numpy as np

        h = self._h
        with h.read_snapshot():
            rowids = self.load()
            params: list[Any] = []
            where = _where(identity, metadata_filter, params)
            key = _filter_key(identity, where, params)
            if key in self._eligible:
                return self._eligible[key]
            eligible = np.fromiter(
                (r[0] for r in h.conn.execute(f"SELECT rowid FROM {h.tables.chunks} WHERE {where}", params)),
                dtype=np.int64,
            )
            eligible.sort()
            positions = np.searchsorted(rowids, eligible)
            if positions.size and (positions[-1] >= rowids.size or not np.array_equal(rowids[positions], eligible)):
                # Rowids that do not list every row of this snapshot (labelled with a version they do not
                # reflect): never index past them or mix them up — reload them here, in this snapshot.
                if not recheck:
                    raise RuntimeError("the rowids of a read snapshot do not cover its rows")
                log.warning("derived_state_stale: %s: rowids reloaded", h.path)
                self.rowids = None
                return self.eligible_positions(identity, metadata_filter, recheck=False)
            if len(self._eligible) > _CACHED_SETS:
                self._eligible.clear()
            self._eligible[key] = positions
            return positions

    def allowed_ids(self, identity: Identity, metadata_filter: Filter | None) -> frozenset[str] | None:
        """The chunk ids the keyword and sparse arms may return (``None``: every chunk). Call inside a read
        snapshot.

        The set is cached per (identity signature, compiled filter) until the next write, like the
        eligible positions; when it covers every chunk the index runs unrestricted (no per-query id mapping).
        """
        h = self._h
        params: list[Any] = []
        key = _filter_key(identity, _where(identity, metadata_filter, params), params)
        with h.read_snapshot():
            positions = self.eligible_positions(identity, metadata_filter)  # also drops stale cached sets
            if key in self._allowed:
                return self._allowed[key]
            rowids = self.load()  # the ones positions index (same snapshot, same version)
            allowed: frozenset[str] | None = None
            if positions.size != rowids.size:
                allowed = frozenset(
                    r[0]
                    for r in h.conn.execute(
                        f"SELECT chunk_id FROM {h.tables.chunks} WHERE rowid IN (SELECT value FROM json_each(?))",
                        (json.dumps(rowids[positions].tolist()),),
                    )
                )
            if len(self._allowed) > _CACHED_SETS:
                self._allowed.clear()
            self._allowed[key] = allowed
            return allowed


def _where(identity: Identity, metadata_filter: Filter | None, params: list[Any]) -> str:
    """The security and metadata filters compiled to one SQL predicate (its values appended to *params*)."""
    return (
        compile_security(identity, "tenant", "acl", params)
        + " AND "
        + compile_filter(metadata_filter, "metadata", params)
    )


def _filter_key(identity: Identity, where: str, params: list[Any]) -> str:
    """Cache key of an eligible set: the caller's ACL signature and the compiled filter with its values."""
    return identity.acl_signature() + "\x1f" + where + "\x1f" + json.dumps(params, default=repr, sort_keys=True)
