"""The scale-out store: PostgreSQL + pgvector, and the distributed-ingestion queue.

Needs the ``postgres`` extra (``pip install 'ragwright[postgres]'``); importing this package is cheap
(psycopg is imported when a store is opened).
"""

from ragwright.stores.postgres.connection import PostgresOptions, is_dsn
from ragwright.stores.postgres.store import PostgresStore

__all__ = ["PostgresOptions", "PostgresStore", "is_dsn"]
