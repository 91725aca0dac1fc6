"""Rows in each feature's side tables (graph, hierarchy, memory), written through the features' own code:
shared by the SQLite and PostgreSQL side-table tests."""

from typing import Any

import numpy as np

from ragwright.graph.model import Extraction, Mention
from ragwright.graph.tables import open_graph_tables
from ragwright.hierarchy.tables import DocumentRow, open_hierarchy_tables
from ragwright.memory.store import MemoryItem, MemoryScope, open_memory

TEXT = "Ada Lovelace met Charles Babbage in London."
SCOPE = MemoryScope("acme", "ann")
#: Tables :func:`fill` writes to.
FILLED = ("graph_documents", "graph_mentions", "hier_documents", "memory_items")


def fill(store: Any, doc: str) -> None:
    """One document's rows in each feature's side tables, through the features' own code."""
    graph = open_graph_tables(store)
    mentions = tuple(Mention.of(f"{doc}#0", TEXT, a, b, "PERSON") for a, b in ((0, 12), (17, 32)))
    graph.replace_document(doc, "acme", ["hr"], "rules", [(doc, Extraction(f"{doc}#0", mentions))])
    hierarchy = open_hierarchy_tables(store)
    vector = np.full(4, 0.5, dtype=np.float32)
    hierarchy.replace_document(
        DocumentRow(doc, "acme", ("hr",), "Title", "A summary.", (), (f"{doc}#0",), "extractive", vector, vector)
    )
    open_memory(store).add(MemoryItem(f"ann read {doc}", SCOPE), vector, "m")


def counts(store: Any) -> dict[str, int]:
    """The features' own counts of their rows (what a feature object sees)."""
    graph, hierarchy = open_graph_tables(store).counts(), open_hierarchy_tables(store).counts()
    return {
        "graph mentions": graph["mentions"],
        "graph documents": graph["documents"],
        "hierarchy documents": hierarchy["documents"],
        "memory items": len(open_memory(store).items(SCOPE)),
    }
