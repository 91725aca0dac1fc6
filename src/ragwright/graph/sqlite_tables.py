"""The graph tables' former module name (they are no longer SQLite only): see :mod:`ragwright.graph.tables`."""

from __future__ import annotations

from ragwright.graph.tables import SCHEMA, GraphTables, open_graph_tables

__all__ = ["SCHEMA", "SqliteGraphTables", "open_graph_tables"]

#: The former name of :class:`~ragwright.graph.tables.GraphTables`.
SqliteGraphTables = GraphTables
