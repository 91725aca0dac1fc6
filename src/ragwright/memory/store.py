"""Where conversation memory lives: remembered items (recalled by similarity) and named sessions.

Everything is keyed by a :class:`MemoryScope` — the identity's tenant and user (its principal; an
identity without a user is keyed by its tenant and groups instead, so callers who only share a tenant
never share a memory) — and every read and write of a backend goes through that backend's one scope
filter (``_in_scope`` / ``_scope_sql``): one user's memory never reaches another user or another
tenant. A remembered answer also keeps the chunk ids it was drawn from (``sources``): recall re-checks
them against the store as the caller, so a memory never outlives the caller's access to its sources.

Backends (:class:`MemoryBackend`):

* :class:`InProcessMemory` — dictionaries behind a lock, for the in-memory store (lost with the process);
* :class:`SqlMemory` — tables beside the store's own (``memory_items``, ``memory_turns``,
  ``memory_sessions``), created lazily on the first write, like the graph's tables: in the SQLite
  store's file through a second connection (WAL: the store's readers and writers are not blocked), or
  in the PostgreSQL store's schema — one SQL for both (:class:`~ragwright.stores.side_tables.SqlSideTables`).

:func:`open_memory` picks one for a store. Scores are cosine similarities of unit vectors
(``ScoreScale.SIMILARITY``); a backend on another scale says so through ``score_scale`` and recall
then skips ``min_score`` (:mod:`ragwright.memory.recall`).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from ragwright.errors import ConfigError
from ragwright.model.identity import Identity
from ragwright.models.llms.base import Message
from ragwright.stores.base import ScoreScale
from ragwright.stores.side_tables import SideDatabase, SqliteSideDatabase, SqlSideTables, open_sql_side

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS memory_items (
        id TEXT PRIMARY KEY, tenant TEXT NOT NULL, principal TEXT NOT NULL, session TEXT, kind TEXT NOT NULL,
        text TEXT NOT NULL, model TEXT NOT NULL, vector {blob} NOT NULL, created_at {real} NOT NULL,
        sources TEXT NOT NULL DEFAULT '[]'{insertion_column})""",
    "CREATE INDEX IF NOT EXISTS memory_items_scope ON memory_items(tenant, principal, created_at)",
    """CREATE TABLE IF NOT EXISTS memory_turns (
        tenant TEXT NOT NULL, principal TEXT NOT NULL, session TEXT NOT NULL, seq INTEGER NOT NULL,
        role TEXT NOT NULL, content TEXT NOT NULL, PRIMARY KEY (tenant, principal, session, seq))""",
    """CREATE TABLE IF NOT EXISTS memory_sessions (
        tenant TEXT NOT NULL, principal TEXT NOT NULL, session TEXT NOT NULL, summary TEXT,
        updated_at {real} NOT NULL, PRIMARY KEY (tenant, principal, session))""",
)
KINDS: Final = ("fact", "turn")


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """Whose memory: a tenant and a principal (the identity's ``user``; for an identity without one,
    ``groups:`` and the digest of its tenant and groups)."""

    tenant: str
    principal: str = ""

    @classmethod
    def of(cls, identity: Identity) -> MemoryScope:
        return cls(identity.tenant, identity.user or f"groups:{identity.acl_signature()}")


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """One remembered thing: a ``fact`` (told explicitly) or a ``turn`` (a question with its answer, and
    the chunk ids of its ``sources``)."""

    text: str
    scope: MemoryScope
    kind: str = "fact"
    session: str | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    created_at: float = field(default_factory=time.time)
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError.invalid("memory item kind", self.kind, " | ".join(KINDS))
        if not isinstance(self.text, str) or not self.text.strip():
            raise ConfigError.invalid("memory item text", self.text, "a non-empty string")


@dataclass(frozen=True, slots=True)
class MemoryHit:
    """A recalled item and its score (on the backend's ``score_scale``)."""

    item: MemoryItem
    score: float


@dataclass(frozen=True, slots=True)
class SessionState:
    """A named session's turns (oldest first) and the summary of the turns it no longer keeps."""

    turns: tuple[Message, ...] = ()
    summary: str | None = None


@runtime_checkable
class MemoryBackend(Protocol):
    """Per-scope memory. Every method filters by *scope* inside the backend; nothing crosses scopes."""

    @property
    def score_scale(self) -> ScoreScale: ...

    def add(self, item: MemoryItem, vector: Vector, model: str, *, max_items: int | None = None) -> None:
        """Remember *item* (embedded as *vector* by *model*); beyond *max_items* in its scope the oldest go."""
        ...

    def search(self, scope: MemoryScope, vector: Vector, k: int, model: str) -> list[MemoryHit]:
        """The *k* items of *scope* embedded by *model* most similar to *vector*, best first."""
        ...

    def items(self, scope: MemoryScope) -> list[MemoryItem]:
        """Every item of *scope*, oldest first."""
        ...

    def forget(self, scope: MemoryScope, *, session: str | None = None, item_ids: Sequence[str] = ()) -> int:
        """Forget *item_ids*, or everything of *session* (its turns and items), or — with neither — all of
        *scope*'s memory; returns how many rows went."""
        ...

    def load_session(self, scope: MemoryScope, name: str) -> SessionState: ...

    def save_session(self, scope: MemoryScope, name: str, state: SessionState) -> None:
        """Replace *name*'s turns and summary (one transaction)."""
        ...

    def sessions(self, scope: MemoryScope) -> list[str]: ...

    def close(self) -> None: ...


def _cosines(vectors: Sequence[Vector], query: Vector) -> list[float]:
    import numpy as np

    if not vectors:
        return []
    matrix = np.stack([np.asarray(v, dtype=np.float32) for v in vectors])
    q = np.asarray(query, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * (float(np.linalg.norm(q)) or 1.0)
    norms[norms == 0] = 1.0
    return [float(s) for s in (matrix @ q) / norms]


class InProcessMemory:
    """Memory in dictionaries (the in-memory store's; lost when the process ends). Thread-safe."""

    score_scale = ScoreScale.SIMILARITY

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[tuple[MemoryItem, Vector, str]] = []
        self._sessions: dict[tuple[MemoryScope, str], SessionState] = {}

    @staticmethod
    def _in_scope(owner: MemoryScope, scope: MemoryScope) -> bool:
        """The one scope filter of this backend."""
        return owner == scope

    def add(self, item: MemoryItem, vector: Vector, model: str, *, max_items: int | None = None) -> None:
        with self._lock:
            self._items.append((item, vector, model))
            if max_items is not None:
                mine = [i for i, (it, _, _) in enumerate(self._items) if self._in_scope(it.scope, item.scope)]
                drop = set(mine[: max(0, len(mine) - max_items)])
                self._items = [x for i, x in enumerate(self._items) if i not in drop]

    def search(self, scope: MemoryScope, vector: Vector, k: int, model: str) -> list[MemoryHit]:
        with self._lock:
            mine = [(it, v) for it, v, m in self._items if self._in_scope(it.scope, scope) and m == model]
        scores = _cosines([v for _, v in mine], vector)
        ranked = sorted(zip(mine, scores, strict=True), key=lambda x: (-x[1], x[0][0].created_at))
        return [MemoryHit(it, s) for (it, _), s in ranked[:k]]

    def items(self, scope: MemoryScope) -> list[MemoryItem]:
        with self._lock:
            return [it for it, _, _ in self._items if self._in_scope(it.scope, scope)]

    def forget(self, scope: MemoryScope, *, session: str | None = None, item_ids: Sequence[str] = ()) -> int:
        ids = set(item_ids)
        with self._lock:

            def goes(it: MemoryItem) -> bool:
                if not self._in_scope(it.scope, scope):
                    return False
                if ids:
                    return it.id in ids
                return session is None or it.session == session

            before = len(self._items)
            self._items = [x for x in self._items if not goes(x[0])]
            removed = before - len(self._items)
            if not ids:
                for key in [k for k in self._sessions if self._in_scope(k[0], scope)]:
                    if session is None or key[1] == session:
                        removed += len(self._sessions.pop(key).turns)
            return removed

    def load_session(self, scope: MemoryScope, name: str) -> SessionState:
        with self._lock:
            for (owner, session), state in self._sessions.items():
                if session == name and self._in_scope(owner, scope):
                    return state
        return SessionState()

    def save_session(self, scope: MemoryScope, name: str, state: SessionState) -> None:
        with self._lock:
            self._sessions[(scope, name)] = state

    def sessions(self, scope: MemoryScope) -> list[str]:
        with self._lock:
            return sorted(name for owner, name in self._sessions if self._in_scope(owner, scope))

    def close(self) -> None:
        pass


class SqlMemory(SqlSideTables):
    """Memory in the store's side tables, SQLite or PostgreSQL (see the module docstring). Thread-safe;
    each write is one transaction (:class:`~ragwright.stores.side_tables.SqlSideTables`); the tables are
    created on the first write, so reading a store that never remembered anything writes nothing."""

    score_scale = ScoreScale.SIMILARITY

    def __init__(self, db: SideDatabase) -> None:
        super().__init__(db, SCHEMA, lock="memory", lazy="memory_items")

    @classmethod
    def open(cls, path: Any, *, busy_timeout: float = 30.0) -> SqlMemory:
        """Memory in the SQLite file at *path*."""
        conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=busy_timeout)
        return cls(SqliteSideDatabase(conn))

    @staticmethod
    def _scope_sql(scope: MemoryScope) -> tuple[str, tuple[str, ...]]:
        """The one scope filter of this backend: a WHERE clause and its parameters."""
        return "tenant = ? AND principal = ?", (scope.tenant, scope.principal)

    def add(self, item: MemoryItem, vector: Vector, model: str, *, max_items: int | None = None) -> None:
        import numpy as np

        blob = np.asarray(vector, dtype=np.float32).tobytes()
        where, params = self._scope_sql(item.scope)
        with self._write() as (run, _):
            run(
                "INSERT INTO memory_items (id, tenant, principal, session, kind, text, model, vector, created_at, "
                "sources) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    item.id,
                    item.scope.tenant,
                    item.scope.principal,
                    item.session,
                    item.kind,
                    item.text,
                    model,
                    blob,
                    item.created_at,
                    json.dumps(list(item.sources)),
                ),
            )
            if max_items is not None:
                run(
                    f"DELETE FROM memory_items WHERE {where} AND id NOT IN (SELECT id FROM memory_items WHERE {where} "
                    f"ORDER BY created_at DESC, {self.dialect.insertion_order} DESC LIMIT ?)",
                    (*params, *params, max_items),
                )

    def _item(self, row: tuple[Any, ...]) -> MemoryItem:
        item_id, tenant, principal, session, kind, text, created_at, sources = row
        scope = MemoryScope(tenant, principal)
        return MemoryItem(text, scope, kind, session, item_id, created_at, tuple(json.loads(sources)))

    def search(self, scope: MemoryScope, vector: Vector, k: int, model: str) -> list[MemoryHit]:
        import numpy as np

        where, params = self._scope_sql(scope)
        rows = self._rows(
            f"SELECT id, tenant, principal, session, kind, text, created_at, sources, vector FROM memory_items "
            f"WHERE {where} AND model = ?",
            (*params, model),
        )
        vectors = [np.frombuffer(r[8], dtype=np.float32) for r in rows]
        scores = _cosines(vectors, vector)
        ranked = sorted(zip(rows, scores, strict=True), key=lambda x: (-x[1], x[0][6]))
        return [MemoryHit(self._item(r[:8]), s) for r, s in ranked[:k]]

    def items(self, scope: MemoryScope) -> list[MemoryItem]:
        where, params = self._scope_sql(scope)
        rows = self._rows(
            f"SELECT id, tenant, principal, session, kind, text, created_at, sources FROM memory_items WHERE {where} "
            f"ORDER BY created_at, {self.dialect.insertion_order}",
            params,
        )
        return [self._item(r) for r in rows]

    def forget(self, scope: MemoryScope, *, session: str | None = None, item_ids: Sequence[str] = ()) -> int:
        if not self._exists():
            return 0
        where, params = self._scope_sql(scope)
        with self._write() as (run, _):
            if item_ids:
                marks = ",".join("?" * len(item_ids))
                sql = f"DELETE FROM memory_items WHERE {where} AND id IN ({marks})"
                return int(run(sql, (*params, *item_ids)).rowcount)
            extra, more = ("", ()) if session is None else (" AND session = ?", (session,))
            removed = int(run(f"DELETE FROM memory_items WHERE {where}{extra}", (*params, *more)).rowcount)
            removed += int(run(f"DELETE FROM memory_turns WHERE {where}{extra}", (*params, *more)).rowcount)
            run(f"DELETE FROM memory_sessions WHERE {where}{extra}", (*params, *more))
            return removed

    def load_session(self, scope: MemoryScope, name: str) -> SessionState:
        where, params = self._scope_sql(scope)
        turns = self._rows(
            f"SELECT role, content FROM memory_turns WHERE {where} AND session = ? ORDER BY seq", (*params, name)
        )
        summary = self._rows(f"SELECT summary FROM memory_sessions WHERE {where} AND session = ?", (*params, name))
        return SessionState(tuple(Message(r, c) for r, c in turns), summary[0][0] if summary else None)

    def save_session(self, scope: MemoryScope, name: str, state: SessionState) -> None:
        where, params = self._scope_sql(scope)
        turns = [(scope.tenant, scope.principal, name, i, m.role, m.content) for i, m in enumerate(state.turns)]
        with self._write() as (run, many):
            run(f"DELETE FROM memory_turns WHERE {where} AND session = ?", (*params, name))
            if turns:
                many("INSERT INTO memory_turns VALUES (?,?,?,?,?,?)", turns)
            run(
                "INSERT INTO memory_sessions VALUES (?,?,?,?,?) ON CONFLICT (tenant, principal, session) "
                "DO UPDATE SET summary = excluded.summary, updated_at = excluded.updated_at",
                (scope.tenant, scope.principal, name, state.summary, time.time()),
            )

    def sessions(self, scope: MemoryScope) -> list[str]:
        where, params = self._scope_sql(scope)
        return [r[0] for r in self._rows(f"SELECT session FROM memory_sessions WHERE {where} ORDER BY session", params)]


def open_memory(store: Any) -> MemoryBackend:
    """The memory backend of *store*: a store may offer ``memory_backend()`` (a backend) or
    ``memory_database()`` (a connection); the PostgreSQL store keeps it in its schema and an
    :class:`~ragwright.stores.sqlite.SqliteStore` in its own file
    (:func:`~ragwright.stores.side_tables.open_sql_side`); the in-memory store in process. Any other
    store is refused with what to use instead."""
    hook = getattr(store, "memory_backend", None)
    if callable(hook):
        backend: MemoryBackend = hook()
        return backend
    from ragwright.stores.memory import MemoryStore

    if isinstance(store, MemoryStore):
        return InProcessMemory()
    feature = "persistent conversation memory and sessions ([memory.persistent], --session)"
    return SqlMemory(open_sql_side(store, hook="memory_database", feature=feature))


#: The former name of :class:`SqlMemory` (SQLite only then).
SqliteMemory = SqlMemory
