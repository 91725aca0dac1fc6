"""PostgreSQL's side of the SQL written once for both databases (stores/sql_dialect.py): lease times from
the server's clock, documents and metadata as ``jsonb``, lists as ``text[]``, text without NUL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragwright.stores.postgres.schema import pg_json, pg_text
from ragwright.stores.sql_dialect import Dialect
from ragwright.stores.sql_registry import SqlRegistry

if TYPE_CHECKING:
    import psycopg

__all__ = ["POSTGRES_DIALECT", "POSTGRES_REGISTRY", "upgrade_registry"]

#: The schema version whose migration gave the registry fields their columns (schema.py).
REGISTRY_COLUMNS_VERSION = 5

#: PostgreSQL's side of the shared staging statements: lease times from the server's clock, documents as jsonb.
POSTGRES_DIALECT = Dialect(
    placeholder="%s",
    lease_now="now()",
    lease_now_params=lambda: (),
    lease_expired="leased_at < now() - make_interval(secs => ?)",
    lease_expired_params=lambda seconds: (seconds,),
    encode_document=pg_json,
    decode_document=lambda stored: stored,
    wrong_vector_size="vector_dims(vector) != ?",
    wrong_vector_size_param=lambda dimension: dimension,
    encode_json=pg_json,
    decode_json=lambda stored: stored,
    encode_list=lambda values: values,
    decode_list=tuple,
    encode_text=pg_text,
    json_type="JSONB",
    list_type="TEXT[]",
    byte_order=' COLLATE "C"',
)
#: The registry rows of a collection's ``documents`` table (stores/sql_registry.py).
POSTGRES_REGISTRY = SqlRegistry(POSTGRES_DIALECT)


def upgrade_registry(conn: psycopg.Connection[Any], old_version: int) -> int:
    """Move the registry fields of rows written before version 5 into their columns (inside the migration's
    transaction, on the ``documents`` table the search path names); returns the rows changed."""
    if not 0 < old_version < REGISTRY_COLUMNS_VERSION:
        return 0
    return POSTGRES_REGISTRY.backfill(lambda query, params: conn.execute(query, params or None), "documents")
