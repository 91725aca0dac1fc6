"""What the SQL parts of a store (``sql_staging``, ``sql_integrity``, ``sql_registry``) need to know of a database.

The SQLite and PostgreSQL stores share their staging and integrity statements, written once with ``?``
placeholders; each store declares a :class:`Dialect` for the rest and hands over how a statement runs
(:data:`Execute`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Dialect", "Execute"]

#: Runs one statement with its parameters and returns the cursor.
Execute = Callable[[str, Sequence[Any]], Any]


@dataclass(frozen=True)
class Dialect:
    """What the shared statements need to know about a database."""

    placeholder: str
    #: SQL of a lease's time when it is taken, and its parameters.
    lease_now: str
    lease_now_params: Callable[[], tuple[Any, ...]]
    #: SQL predicate of a lease older than the given number of seconds, and its parameters.
    lease_expired: str
    lease_expired_params: Callable[[float], tuple[Any, ...]]
    encode_document: Callable[[dict[str, Any]], Any]
    decode_document: Callable[[Any], dict[str, Any]]
    #: SQL predicate of a stored vector whose size is not the given dimension, and its parameter.
    wrong_vector_size: str
    wrong_vector_size_param: Callable[[int], Any]
    #: How a JSON object (metadata), a list of strings (ACL, registry lists) and text are stored and read
    #: back, and their column types (sql_registry.py); the collation ordering ids by their bytes.
    encode_json: Callable[[Any], Any]
    decode_json: Callable[[Any], Any]
    encode_list: Callable[[list[str]], Any]
    decode_list: Callable[[Any], Any]
    encode_text: Callable[[str], str]
    json_type: str
    list_type: str
    byte_order: str

    def sql(self, statement: str) -> str:
        """*statement* (written with ``?``) in this dialect's placeholders."""
        return statement if self.placeholder == "?" else statement.replace("?", self.placeholder)
