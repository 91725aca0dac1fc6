"""Options, DSN handling and the connection pool of the PostgreSQL store."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragwright._deps import require
from ragwright._validate import check_int
from ragwright.errors import ConfigError, StoreError

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

DSN_PREFIXES = ("postgresql://", "postgres://")
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def is_dsn(value: object) -> bool:
    """Whether *value* names a PostgreSQL server (``postgresql://…``) rather than a store file."""
    return isinstance(value, str) and value.startswith(DSN_PREFIXES)


@dataclass(frozen=True, slots=True)
class PostgresOptions:
    """How the store uses the server.

    ``ef_search`` is HNSW's candidate list (recall vs. speed; raised to ``k`` when smaller).
    ``exact_threshold``: when a query's security + metadata filter leaves at most this many chunks,
    the dense arm scores them exactly (no index) — exact is then both faster and complete.
    ``iterative_scan`` (pgvector 0.8): ``relaxed_order`` (default), ``strict_order``, or ``off`` — off
    post-filters a fixed candidate list and can return fewer than ``k``; kept for comparisons only.
    ``max_scan_tuples`` bounds an iterative index scan under a filter (pgvector 0.8).
    ``keyword_snapshot``: a file where the BM25 index is saved on close and loaded on open.
    ``follow_alias_s``: how often a store object that follows the ``live`` alias re-reads it before a
    read (0: before every operation); a write always checks it in its transaction (see :mod:`.collections`).
    """

    schema: str = "ragwright"
    pool_size: int = 4
    ef_search: int = 100
    hnsw_m: int = 16
    hnsw_ef_construction: int = 64
    exact_threshold: int = 2000
    max_scan_tuples: int = 20000
    iterative_scan: str = "relaxed_order"
    connect_timeout: int = 10
    keyword_snapshot: Path | None = None
    follow_alias_s: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.schema, str) or not _SCHEMA_NAME.match(self.schema):
            raise ConfigError.invalid("schema", self.schema, "a lower-case SQL identifier ([a-z_][a-z0-9_]*)")
        check_int("pool_size", self.pool_size, minimum=1)
        check_int("ef_search", self.ef_search, minimum=1)
        if self.ef_search > 1000:
            raise ConfigError.invalid("ef_search", self.ef_search, "an integer from 1 to 1000 (pgvector's limit)")
        check_int("hnsw_m", self.hnsw_m, minimum=2)
        check_int("hnsw_ef_construction", self.hnsw_ef_construction, minimum=4)
        check_int("exact_threshold", self.exact_threshold, minimum=0)
        check_int("max_scan_tuples", self.max_scan_tuples, minimum=1)
        if self.iterative_scan not in ("relaxed_order", "strict_order", "off"):
            raise ConfigError.invalid("iterative_scan", self.iterative_scan, "relaxed_order, strict_order or off")
        check_int("connect_timeout", self.connect_timeout, minimum=1)
        if (
            isinstance(self.follow_alias_s, bool)
            or not isinstance(self.follow_alias_s, int | float)
            or not 0 <= self.follow_alias_s <= 3600
        ):
            raise ConfigError.invalid("follow_alias_s", self.follow_alias_s, "a number of seconds from 0 to 3600")
        if self.keyword_snapshot is not None:
            object.__setattr__(self, "keyword_snapshot", Path(self.keyword_snapshot))


def redact(dsn: str) -> str:
    """The DSN without its password, for messages and logs."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", dsn)


def import_psycopg() -> Any:
    return require("psycopg", "postgres", "the PostgreSQL store")


def connect(dsn: str, options: PostgresOptions) -> psycopg.Connection[Any]:
    """One autocommit connection (for migrations), with a readable error when the server is unreachable."""
    pg = import_psycopg()
    try:
        conn: psycopg.Connection[Any] = pg.connect(dsn, autocommit=True, connect_timeout=options.connect_timeout)
    except pg.Error as exc:
        raise StoreError(f"cannot connect to the PostgreSQL store at {redact(dsn)}: {exc}".strip()) from exc
    return conn


def open_pool(dsn: str, options: PostgresOptions) -> ConnectionPool[Any]:
    """A psycopg pool whose connections autocommit, search the store's schema and adapt numpy vectors."""
    pg = import_psycopg()
    pool_mod = require("psycopg_pool", "postgres", "the PostgreSQL store's connection pool")
    pgvector = require("pgvector.psycopg", "postgres", "the PostgreSQL store (vectors)")
    from psycopg import sql

    search_path = sql.SQL("SET search_path TO {}, public").format(sql.Identifier(options.schema))

    def configure(conn: psycopg.Connection[Any]) -> None:
        conn.execute(search_path)
        # Session settings, so a search is one statement: HNSW's candidate list, iterative index
        # scans (the filter applies inside the scan, pgvector 0.8) and their bound. Custom plans
        # only: psycopg prepares repeated statements, and a generic plan (no query vector, no LIMIT
        # value) can prefer a full scan + sort over the index once ef_search raises its cost.
        conn.execute(
            "SELECT set_config('hnsw.ef_search', %s, false), set_config('hnsw.iterative_scan', %s, false), "
            "set_config('hnsw.max_scan_tuples', %s, false), set_config('plan_cache_mode', 'force_custom_plan', false)",
            (str(options.ef_search), options.iterative_scan, str(options.max_scan_tuples)),
        )
        pgvector.register_vector(conn)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # psycopg_pool warns about the open= default in some versions
        pool: ConnectionPool[Any] = pool_mod.ConnectionPool(
            dsn,
            min_size=1,
            max_size=options.pool_size,
            kwargs={"autocommit": True, "connect_timeout": options.connect_timeout},
            configure=configure,
            name="ragwright",
            open=False,
        )
    try:
        pool.open(wait=True, timeout=float(options.connect_timeout))
    except (pg.Error, pool_mod.PoolTimeout) as exc:
        pool.close()
        raise StoreError(f"cannot open a connection pool to {redact(dsn)}: {exc}") from exc
    return pool
