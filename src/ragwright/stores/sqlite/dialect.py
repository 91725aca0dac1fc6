"""SQLite's side of the SQL the stores share (:mod:`ragwright.stores.sql_dialect`): the dialect, and the
registry written in it (:class:`~ragwright.stores.sql_registry.SqlRegistry`)."""

from __future__ import annotations

import json
import time

from ragwright.stores.sql_dialect import Dialect
from ragwright.stores.sql_registry import SqlRegistry

__all__ = ["SQLITE_DIALECT", "SQLITE_REGISTRY"]

#: SQLite's side of the shared staging statements: lease times as epoch seconds, documents as JSON text.
SQLITE_DIALECT = Dialect(
    placeholder="?",
    lease_now="?",
    lease_now_params=lambda: (time.time(),),
    lease_expired="leased_at < ?",
    lease_expired_params=lambda seconds: (time.time() - seconds,),
    encode_document=lambda document: json.dumps(document, default=str),
    decode_document=json.loads,
    wrong_vector_size="length(vector) != ?",
    wrong_vector_size_param=lambda dimension: dimension * 4,  # float32 bytes
    encode_json=lambda value: json.dumps(value, default=str),
    decode_json=json.loads,
    encode_list=json.dumps,
    decode_list=json.loads,
    encode_text=lambda text: text,
    json_type="TEXT",
    list_type="TEXT",
    byte_order="",
)
SQLITE_REGISTRY = SqlRegistry(SQLITE_DIALECT)
