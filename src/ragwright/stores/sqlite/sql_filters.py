"""Compile the filter AST and the security filter into SQLite WHERE clauses over JSON columns.

Kind-sensitivity is kept by checking ``json_type`` beside every comparison, so the number 3 never
matches the string "3". Every leaf is wrapped in ``COALESCE(…, 0)`` so that ``NOT`` over a missing
key behaves like the reference matcher (missing key: ``Eq`` false, ``Not(Eq)`` true).
Keys and values travel as parameters, never spliced into SQL text.
"""

from __future__ import annotations

from typing import Any

from ragwright.model.filters import And, Compare, Eq, Exists, Filter, In, Not, Or
from ragwright.model.identity import Identity
from ragwright.model.metadata import kind_of

_OPS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_NUMBER_TYPES = "('integer','real')"


def _path(key: str) -> str:
    return f'$."{key}"'


def compile_filter(flt: Filter | None, column: str, params: list[Any]) -> str:
    """SQL for *flt* against the JSON metadata in *column*; appends parameters to *params*."""
    if flt is None:
        return "1"
    if isinstance(flt, Eq):
        return _compile_eq(column, flt.key, flt.value, params)
    if isinstance(flt, In):
        parts = [_compile_eq(column, flt.key, v, params) for v in flt.values]
        return "(" + " OR ".join(parts) + ")"
    if isinstance(flt, Compare):
        path = _path(flt.key)
        types = "('text')" if kind_of(flt.value) == "string" else _NUMBER_TYPES
        params.extend([path, path, flt.value])
        return f"COALESCE(json_type({column}, ?) IN {types} AND json_extract({column}, ?) {_OPS[flt.op]} ?, 0)"
    if isinstance(flt, Exists):
        params.append(_path(flt.key))
        return f"COALESCE(json_type({column}, ?) NOT IN ('null'), 0)"
    if isinstance(flt, And):
        return "(" + " AND ".join(compile_filter(c, column, params) for c in flt.clauses) + ")" if flt.clauses else "1"
    if isinstance(flt, Or):
        return "(" + " OR ".join(compile_filter(c, column, params) for c in flt.clauses) + ")" if flt.clauses else "0"
    if isinstance(flt, Not):
        return "(NOT " + compile_filter(flt.clause, column, params) + ")"
    raise TypeError(f"unknown filter node {flt!r}")


def _compile_eq(column: str, key: str, value: Any, params: list[Any]) -> str:
    path = _path(key)
    kind = kind_of(value)
    if kind == "boolean":
        params.append(path)
        return f"COALESCE(json_type({column}, ?) = '{'true' if value else 'false'}', 0)"
    types = "('text')" if kind == "string" else _NUMBER_TYPES
    sql_value: Any = value if kind == "string" else float(value)
    params.extend([path, path, sql_value, path, path, sql_value])
    return (
        f"(COALESCE((json_type({column}, ?) IN {types} AND json_extract({column}, ?) = ?), 0) "
        f"OR COALESCE((json_type({column}, ?) = 'array' AND EXISTS (SELECT 1 FROM json_each({column}, ?) je "
        f"WHERE je.type IN {types} AND je.value = ?)), 0))"
    )


def compile_security(identity: Identity, tenant_col: str, acl_col: str, params: list[Any]) -> str:
    """Tenant equality and ACL overlap; an empty ACL matches nobody (missing ACL = deny)."""
    groups = identity.visible_groups
    params.append(identity.tenant)
    params.extend(groups)
    marks = ",".join("?" for _ in groups)
    return f"({tenant_col} = ? AND EXISTS (SELECT 1 FROM json_each({acl_col}) ja WHERE ja.value IN ({marks})))"
