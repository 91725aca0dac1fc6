"""The registry in SQL, one implementation for the SQLite and PostgreSQL stores (a part a store is composed of).

A :class:`~ragwright.model.records.DocumentRecord` is one row of a collection's ``documents`` table. The
fields ingestion keeps about a document for itself — the name hint a rebuild parses with, its parent and
children (attachments), the metadata keys a filter can match, parser warnings, the source's metadata,
the error type and attempts of a failure — travel in ``record.metadata`` under ``_``-prefixed keys; the
store keeps them in typed columns (:data:`REGISTRY_FIELDS`), so SQL can read them (children by parent,
failures by type) and the user's metadata column holds only the user's metadata. A value whose type does
not fit its column stays in the metadata column, so a record reads back exactly as it was written.
Stores written before the columns existed are migrated once (:meth:`SqlRegistry.backfill`).

The statements are written once with ``?`` placeholders; the :class:`~ragwright.stores.sql_dialect.Dialect`
says how JSON, lists and text are stored. Access updates (a document's tenant and ACL onto its chunks,
parents and record) are here too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.common import record_columns, record_from_columns
from ragwright.stores.sql_dialect import Dialect, Execute

__all__ = ["RECORD_COLUMNS", "REGISTRY_FIELDS", "RegistryField", "SqlRegistry", "join_fields", "split_fields"]


@dataclass(frozen=True, slots=True)
class RegistryField:
    """One registry field: its ``record.metadata`` key, its column and the column's kind (``text``,
    ``int``, ``list`` of strings, or ``json`` object)."""

    key: str
    column: str
    kind: str

    def fits(self, value: Any) -> bool:
        if self.kind == "text":
            return isinstance(value, str)
        if self.kind == "int":
            return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
        if self.kind == "list":
            return isinstance(value, list) and all(isinstance(v, str) for v in value)
        return isinstance(value, dict)


REGISTRY_FIELDS: Final = (
    RegistryField("_name", "name_hint", "text"),
    RegistryField("_parent", "parent_document", "text"),
    RegistryField("_children", "children", "list"),
    RegistryField("_keys", "metadata_keys", "list"),
    RegistryField("_warnings", "warnings", "list"),
    RegistryField("_source_meta", "source_meta", "json"),
    RegistryField("_error_type", "error_type", "text"),
    RegistryField("_attempts", "attempts", "int"),
)
_BASE_COLUMNS: Final = (
    "document_id, source, content_hash, status, parser_version, chunker_version, embedding_model, chunk_count, "
    "stage, reason, tenant, acl, source_root, title, created_at, updated_at, metadata"
)
#: Every column of a ``documents`` row, in the order :meth:`SqlRegistry.row` writes them.
RECORD_COLUMNS: Final = _BASE_COLUMNS + ", " + ", ".join(f.column for f in REGISTRY_FIELDS)
_BASE_COUNT: Final = _BASE_COLUMNS.count(",") + 1


def split_fields(metadata: Mapping[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """*metadata* without the registry fields that fit their columns, and those fields' values (``None``
    where absent or kept in the metadata)."""
    rest = dict(metadata)
    values: list[Any] = []
    for f in REGISTRY_FIELDS:
        value = rest.get(f.key)
        if f.key in rest and f.fits(value):
            del rest[f.key]
            values.append(value)
        else:
            values.append(None)
    return rest, values


def join_fields(metadata: Mapping[str, Any], values: Sequence[Any]) -> dict[str, Any]:
    """The record's metadata: *metadata* with the registry fields read from their columns put back."""
    out = dict(metadata)
    for f, value in zip(REGISTRY_FIELDS, values, strict=True):
        if value is not None:
            out[f.key] = value
    return out


def column_type(field: RegistryField, dialect: Dialect) -> str:
    """The SQL type of *field*'s column in *dialect*."""
    return {"text": "TEXT", "int": "BIGINT", "list": dialect.list_type, "json": dialect.json_type}[field.kind]


class SqlRegistry:
    """Registry rows of a ``documents`` table: writing, reading, access updates and the one-time backfill."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        names = RECORD_COLUMNS.split(", ")
        self._upsert = dialect.sql(
            "INSERT INTO {table} (" + RECORD_COLUMNS + ") VALUES (" + ", ".join("?" * len(names)) + ") "
            "ON CONFLICT (document_id) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in names[1:])
        )

    # -- rows ------------------------------------------------------------------------------------------------
    def upsert_sql(self, table: str) -> str:
        """The statement writing one record (parameters: :meth:`row`)."""
        return self._upsert.replace("{table}", table)

    def row(self, record: DocumentRecord) -> tuple[Any, ...]:
        d = self.dialect
        rest, values = split_fields(record.metadata)
        encoded = [None if v is None else _encode(f.kind, v, d) for f, v in zip(REGISTRY_FIELDS, values, strict=True)]
        return (*record_columns(record, d.encode_list(list(record.acl)), d.encode_json(rest)), *encoded)

    def from_row(self, row: Sequence[Any]) -> DocumentRecord:
        d = self.dialect
        base, extra = list(row[:_BASE_COUNT]), row[_BASE_COUNT:]
        values = [None if v is None else _decode(f.kind, v, d) for f, v in zip(REGISTRY_FIELDS, extra, strict=True)]
        base[11], base[16] = d.decode_list(base[11]), join_fields(d.decode_json(base[16]), values)
        return record_from_columns(base)

    # -- statements --------------------------------------------------------------------------------------------
    def write(self, run: Execute, table: str, record: DocumentRecord) -> None:
        run(self.upsert_sql(table), self.row(record))

    def get(self, run: Execute, table: str, document_id: str) -> DocumentRecord | None:
        sql = self.dialect.sql(f"SELECT {RECORD_COLUMNS} FROM {table} WHERE document_id = ?")
        row = run(sql, (document_id,)).fetchone()
        return None if row is None else self.from_row(row)

    def records(self, run: Execute, table: str, status: DocumentStatus | None = None) -> list[DocumentRecord]:
        where, params = ("", ()) if status is None else (" WHERE status = ?", (status.value,))
        sql = self.dialect.sql(
            f"SELECT {RECORD_COLUMNS} FROM {table}{where} ORDER BY document_id{self.dialect.byte_order}"
        )
        return [self.from_row(r) for r in run(sql, params).fetchall()]

    def update_access(
        self,
        run: Execute,
        *,
        chunks: str,
        documents: str,
        parents: str,
        document_id: str,
        tenant: str,
        acl: Sequence[str],
    ) -> Any:
        """Set a document's tenant and ACL on its chunks, record and parents; returns the chunks' cursor
        (its ``rowcount`` is the number of chunks)."""
        params = (tenant, self.dialect.encode_list(list(acl)), document_id)
        statement = self.dialect.sql("UPDATE {} SET tenant = ?, acl = ? WHERE document_id = ?")
        cur = run(statement.format(chunks), params)
        run(statement.format(documents), params)
        run(statement.format(parents), params)
        return cur

    # -- migration ---------------------------------------------------------------------------------------------
    def add_columns(self, run: Execute, table: str, existing: set[str]) -> list[str]:
        """Add the registry columns *table* lacks (its column names: *existing*); returns those added."""
        added = []
        for f in REGISTRY_FIELDS:
            if f.column not in existing:
                run(f"ALTER TABLE {table} ADD COLUMN {f.column} {column_type(f, self.dialect)}", ())
                added.append(f.column)
        return added

    def backfill(self, run: Execute, table: str) -> int:
        """Move the registry fields of rows written before the columns existed from their metadata into
        the columns (once, when a store is upgraded); returns the rows changed."""
        d = self.dialect
        changed = 0
        rows = run(f"SELECT document_id, metadata FROM {table}", ()).fetchall()
        sets = ", ".join(f"{f.column} = ?" for f in REGISTRY_FIELDS)
        update = d.sql(f"UPDATE {table} SET metadata = ?, {sets} WHERE document_id = ?")
        for document_id, stored in rows:
            metadata = d.decode_json(stored)
            rest, values = split_fields(metadata)
            if len(rest) == len(metadata):
                continue
            encoded = [
                None if v is None else _encode(f.kind, v, d) for f, v in zip(REGISTRY_FIELDS, values, strict=True)
            ]
            run(update, (d.encode_json(rest), *encoded, document_id))
            changed += 1
        return changed


def _encode(kind: str, value: Any, d: Dialect) -> Any:
    if kind == "text":
        return d.encode_text(value)
    if kind == "list":
        return d.encode_list([d.encode_text(v) for v in value])
    if kind == "json":
        return d.encode_json(value)
    return value


def _decode(kind: str, value: Any, d: Dialect) -> Any:
    if kind == "list":
        return list(d.decode_list(value))
    if kind == "json":
        return d.decode_json(value)
    return value
