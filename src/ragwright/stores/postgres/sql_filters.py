"""Compile the filter AST and the security filter into PostgreSQL WHERE clauses over JSONB.

Equality uses JSONB containment (``metadata @> '{"k": v}'`` or ``'{"k": [v]}'`` for list fields),
which is kind-sensitive by construction (3 is not "3", true is not 1) and served by the GIN index.
Orderings are guarded by ``CASE jsonb_typeof(…)`` so a string is never cast to a number; strings
compare in code-point order (``COLLATE "C"``), like the reference matcher. Keys and values always
travel as bound parameters (``%s``), never spliced into SQL text.
"""

from __future__ import annotations

import json
from typing import Any

from ragwright.model.filters import And, Compare, Eq, Exists, Filter, In, Not, Or
from ragwright.model.identity import Identity
from ragwright.model.metadata import kind_of

_OPS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def compile_filter(flt: Filter | None, column: str, params: list[Any]) -> str:
    """SQL for *flt* against the JSONB metadata in *column*; appends parameters to *params*."""
    if flt is None:
        return "TRUE"
    if isinstance(flt, Eq):
        return _compile_eq(column, flt.key, flt.value, params)
    if isinstance(flt, In):
        return "(" + " OR ".join(_compile_eq(column, flt.key, v, params) for v in flt.values) + ")"
    if isinstance(flt, Compare):
        op = _OPS[flt.op]
        if kind_of(flt.value) == "string":
            params.extend([flt.key, flt.key, flt.value])
            return (
                f"(CASE WHEN jsonb_typeof({column} -> %s) = 'string' "
                f'THEN ({column} ->> %s) COLLATE "C" {op} %s ELSE FALSE END)'
            )
        params.extend([flt.key, flt.key, float(flt.value)])
        return (
            f"(CASE WHEN jsonb_typeof({column} -> %s) = 'number' "
            f"THEN ({column} -> %s)::numeric {op} %s::double precision::numeric ELSE FALSE END)"
        )
    if isinstance(flt, Exists):
        params.append(flt.key)
        return f"COALESCE(jsonb_typeof({column} -> %s) <> 'null', FALSE)"
    if isinstance(flt, And):
        return (
            "(" + " AND ".join(compile_filter(c, column, params) for c in flt.clauses) + ")" if flt.clauses else "TRUE"
        )
    if isinstance(flt, Or):
        return (
            "(" + " OR ".join(compile_filter(c, column, params) for c in flt.clauses) + ")" if flt.clauses else "FALSE"
        )
    if isinstance(flt, Not):
        return "(NOT " + compile_filter(flt.clause, column, params) + ")"
    raise TypeError(f"unknown filter node {flt!r}")


def _compile_eq(column: str, key: str, value: Any, params: list[Any]) -> str:
    """Scalar equality, or membership when the stored value is a list (containment covers both)."""
    params.extend([json.dumps({key: value}), json.dumps({key: [value]})])
    return f"({column} @> %s::jsonb OR {column} @> %s::jsonb)"


def compile_security(identity: Identity, tenant_col: str, acl_col: str, params: list[Any]) -> str:
    """Tenant equality and ACL overlap (GIN-served ``&&``); an empty ACL matches nobody."""
    params.append(identity.tenant)
    params.append(list(identity.visible_groups))
    return f"({tenant_col} = %s AND {acl_col} && %s::text[])"
