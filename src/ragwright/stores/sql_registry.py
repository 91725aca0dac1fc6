"""The registry in SQL, one implementation for the SQLite and PostgreSQL stores (a part a store is composed of).

A :class:`~ragwright.model.records.DocumentRecord` is one row of a collection's ``documents`` table. The
fields ingestion keeps about a document for itself — the name hint a rebuild parses with, its parent and
children (attachments), the metadata keys a filter can match, parser warnings, the source's metadata,
the error type and attempts of a failure — are typed fields of the record and typed columns of the row
(:data:`REGISTRY_FIELDS`), so SQL can read them (children by parent, failures by type); the ``metadata``
column holds only the user's metadata.

Stores written before the columns existed kept those fields in the metadata under ``_``-prefixed keys
(``_name``, ``_parent``, …); they are migrated once (:meth:`SqlRegistry.backfill`): a value that fits its
column moves there, one that does not (a caller's own key that happened to share the name) stays in the
metadata.

The statements are written once with ``?`` placeholders; the :class:`~ragwright.stores.sql_dialect.Dialect`
says how JSON, lists and text are stored. Access updates (a document's tenant and ACL onto its chunks,
parents and record) are here too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.common import record_columns, record_from_columns
from ragwright.stores.sql_dialect import Dialect, Execute

__all__ = ["RECORD_COLUMNS", "REGISTRY_FIELDS", "RegistryField", "SqlRegistry", "legacy_fields"]


@dataclass(frozen=True, slots=True)
class RegistryField:
    """One registry field: its :class:`DocumentRecord` attribute, its column, the column's kind (``text``,
    ``int``, ``list`` of strings, ``keys``: a list of strings or NULL for "not recorded", or ``json``
    object) and the ``record.metadata`` key it was kept under before the columns existed."""

    attr: str
    column: str
    kind: str
    legacy_key: str

    def fits(self, value: Any) -> bool:
        """Whether a legacy metadata *value* can move into the column."""
        if self.kind == "text":
            return isinstance(value, str)
        if self.kind == "int":
            return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
        if self.kind in ("list", "keys"):
            return isinstance(value, list) and all(isinstance(v, str) for v in value)
        return isinstance(value, dict)

    def encode(self, value: Any, d: Dialect) -> Any:
        """The column value of the record's *value* (``None``: NULL)."""
        if value is None:
            return None
        if self.kind == "text":
            return d.encode_text(value)
        if self.kind in ("list", "keys"):
            return d.encode_list([d.encode_text(v) for v in value])
        if self.kind == "json":
            return d.encode_json(dict(value)) if value else None
        return value

    def decode(self, value: Any, d: Dialect) -> Any:
        """The record's value of the column *value* (NULL: the field's default)."""
        if value is None:
            return {"list": (), "json": {}, "int": 0}.get(self.kind)
        if self.kind in ("list", "keys"):
            return tuple(d.decode_list(value))
        if self.kind == "json":
            return dict(d.decode_json(value))
        return value


REGISTRY_FIELDS: Final = (
    RegistryField("name_hint", "name_hint", "text", "_name"),
    RegistryField("parent", "parent_document", "text", "_parent"),
    RegistryField("children", "children", "list", "_children"),
    RegistryField("metadata_keys", "metadata_keys", "keys", "_keys"),
    RegistryField("warnings", "warnings", "list", "_warnings"),
    RegistryField("source_meta", "source_meta", "json", "_source_meta"),
    RegistryField("error_type", "error_type", "text", "_error_type"),
    RegistryField("attempts", "attempts", "int", "_attempts"),
)
_BASE_COLUMNS: Final = (
    "document_id, source, content_hash, status, parser_version, chunker_version, embedding_model, chunk_count, "
    "stage, reason, tenant, acl, source_root, title, created_at, updated_at, metadata"
)
#: Every column of a ``documents`` row, in the order :meth:`SqlRegistry.row` writes them.
RECORD_COLUMNS: Final = _BASE_COLUMNS + ", " + ", ".join(f.column for f in REGISTRY_FIELDS)
_BASE_COUNT: Final = _BASE_COLUMNS.count(",") + 1


def legacy_fields(metadata: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A metadata object written before the registry columns existed, split: the user's metadata, and
    the record fields (by attribute) of the ``_`` keys whose values fit their columns."""
    rest = dict(metadata)
    fields: dict[str, Any] = {}
    for f in REGISTRY_FIELDS:
        if f.legacy_key in rest and f.fits(rest[f.legacy_key]):
            value = rest.pop(f.legacy_key)
            fields[f.attr] = tuple(value) if f.kind in ("list", "keys") else value
    return rest, fields


def column_type(field: RegistryField, dialect: Dialect) -> str:
    """The SQL type of *field*'s column in *dialect*."""
    kind = "list" if field.kind == "keys" else field.kind
    return {"text": "TEXT", "int": "BIGINT", "list": dialect.list_type, "json": dialect.json_type}[kind]


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
        fields = (f.encode(getattr(record, f.attr), d) for f in REGISTRY_FIELDS)
        return (*record_columns(record, d.encode_list(list(record.acl)), d.encode_json(record.metadata)), *fields)

    def from_row(self, row: Sequence[Any]) -> DocumentRecord:
        d = self.dialect
        base, extra = list(row[:_BASE_COUNT]), row[_BASE_COUNT:]
        base[11], base[16] = d.decode_list(base[11]), d.decode_json(base[16])
        fields = {f.attr: f.decode(v, d) for f, v in zip(REGISTRY_FIELDS, extra, strict=True)}
        return dataclasses.replace(record_from_columns(base), **fields)

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
        """Move the registry fields of rows written before the columns existed from their metadata (the
        ``_`` keys, :func:`legacy_fields`) into the columns (once, when a store is upgraded); returns the
        rows changed."""
        d = self.dialect
        changed = 0
        rows = run(f"SELECT document_id, metadata FROM {table}", ()).fetchall()
        sets = ", ".join(f"{f.column} = ?" for f in REGISTRY_FIELDS)
        update = d.sql(f"UPDATE {table} SET metadata = ?, {sets} WHERE document_id = ?")
        for document_id, stored in rows:
            rest, fields = legacy_fields(d.decode_json(stored))
            if not fields:
                continue
            encoded = [f.encode(fields.get(f.attr), d) for f in REGISTRY_FIELDS]
            run(update, (d.encode_json(rest), *encoded, document_id))
            changed += 1
        return changed
