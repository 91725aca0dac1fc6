"""Keeping summaries, multi-vector rows and trees in step with the store.

* :meth:`HierarchyIndex.on_written` (an ingest hook, after a document's chunks are written) writes
  the document's summary (:mod:`~ragwright.hierarchy.summarize`), its vector and centroid, and its
  multi-vector rows — a summary per parent chunk when the Rag builds parents, and, when
  ``questions`` > 0 and a chat model is configured, hypothetical questions per parent — replacing the
  previous ones in one transaction, and marks the document's scope stale.
* :meth:`HierarchyIndex.sync` reconciles with the registry: a removed (or failed) document loses its
  rows, one whose tenant/ACL changed has them updated, an indexed document without a summary (ingested
  before hierarchy was switched on) is summarised from its stored chunks. The Rag calls it after every
  ingestion; :meth:`documents_changed` after a removal or an ACL change. A document whose summary
  fails (the embedder or the chat model down) is logged (``hierarchy_summary_failed``) and left for
  the next sync: ingestion never fails for it.
* :meth:`HierarchyIndex.refresh_trees` rebuilds the stale scopes' trees (:mod:`~ragwright.hierarchy.tree`);
  searches call it first, so a tree is never older than the last write it has seen.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ragwright.hierarchy.options import HierarchyOptions
from ragwright.hierarchy.summarize import Summary, extractive_summary, hypothetical_questions, llm_summary
from ragwright.hierarchy.tables import DocumentRow, HierarchyTables, VectorRow, open_hierarchy_tables
from ragwright.hierarchy.tree import TreeBuilder
from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.side_tables import follow_documents

if TYPE_CHECKING:
    from ragwright.models.embedders.base import Embedder
    from ragwright.models.llms.base import ChatModel
    from ragwright.stores.base import Store

log = logging.getLogger(__name__)
PARENT_SUMMARY_SENTENCES = 3


def fit(embedder: Embedder, text: str) -> str:
    """*text* cut (at a word) to what *embedder* embeds without truncating."""
    limit = max(8, embedder.max_tokens - 8)
    if embedder.count_tokens(text) <= limit:
        return text
    words = text.split(" ")
    low, high = 1, len(words)
    while low < high:  # the longest prefix that fits
        mid = (low + high + 1) // 2
        if embedder.count_tokens(" ".join(words[:mid])) <= limit:
            low = mid
        else:
            high = mid - 1
    return " ".join(words[:low])


class HierarchyIndex:
    """Summaries, multi-vector rows and trees of one store (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        options: HierarchyOptions | None = None,
        *,
        llm: ChatModel | None = None,
        tables: HierarchyTables | None = None,
    ) -> None:
        self.store, self.embedder = store, embedder
        self.options = options or HierarchyOptions()
        if self.options.summary == "llm" and llm is None:
            from ragwright.errors import ConfigError

            raise ConfigError(
                "HierarchyOptions(summary='llm') needs a chat model: Rag(..., llm=load_chat('local')), or "
                "summary='auto' (extractive without one)"
            )
        self.llm = llm if self.options.summary != "extractive" else None
        self.question_llm = llm if self.options.questions > 0 else None
        self.tables = tables or open_hierarchy_tables(store)
        self.tables.on_move = self.sync  # another process's reindex: the new collection's tables catch up
        self.trees = TreeBuilder(self.tables, store, embedder, self.options, self.llm)
        self._lock = threading.Lock()

    @property
    def method(self) -> str:
        return f"llm:{self.llm.name}" if self.llm is not None else "extractive"

    # -- ingestion -------------------------------------------------------------------------------------
    def on_written(self, written: Sequence[tuple[DocumentRecord, Sequence[Chunk]]]) -> None:
        """The ingest hook: replace each written document's summary and vectors."""
        for record, chunks in written:
            self.write(record, chunks)

    def summarise(self, chunks: Sequence[Chunk], vectors: dict[str, Any], sentences: int, title: str) -> Summary:
        if self.llm is not None:
            return llm_summary(self.llm, chunks, vectors, sentences_wanted=sentences, title=title)
        return extractive_summary(chunks, vectors, sentences_wanted=sentences, title=title)

    def write(self, record: DocumentRecord, chunks: Sequence[Chunk]) -> None:
        """Summarise *record*'s *chunks* and store the rows (an empty document loses its rows)."""
        if not chunks:
            self.tables.remove_document(record.document_id)
            return
        chunks = sorted(chunks, key=lambda c: c.position)
        vectors = {
            k: np.asarray(v, dtype=np.float32) for k, v in self.store.get_vectors([c.id for c in chunks]).items()
        }
        title = record.title or next((c.section_path[0] for c in chunks if c.section_path), "") or record.document_id
        summary = self.summarise(chunks, vectors, self.options.summary_sentences, title)
        texts = [fit(self.embedder, summary.text)]
        extra: list[tuple[str, str, str, tuple[str, ...]]] = []  # (kind, parent, text, chunk ids)
        for parent_id, members in _parents(chunks).items():
            if parent_id != record.document_id:
                s = self.summarise(members, vectors, PARENT_SUMMARY_SENTENCES, "")
                extra.append(("summary", parent_id, s.text, s.chunk_ids))
            if self.question_llm is not None:
                body = "\n\n".join(c.text for c in members)
                for q in hypothetical_questions(self.question_llm, body, self.options.questions):
                    extra.append(("question", parent_id, q, tuple(c.id for c in members)))
        texts += [fit(self.embedder, t) for _, _, t, _ in extra]
        embedded = np.asarray(self.embedder.embed_documents(texts), dtype=np.float32)
        have = [vectors[c.id] for c in chunks if c.id in vectors]
        centroid = np.mean(np.stack(have), axis=0) if have else None
        if centroid is not None:
            centroid = centroid / max(float(np.linalg.norm(centroid)), 1e-9)
        row = DocumentRow(
            record.document_id,
            record.tenant,
            tuple(record.acl),
            title,
            summary.text,
            summary.chunk_ids,
            tuple(c.id for c in chunks),
            summary.method,
            embedded[0],
            centroid,
        )
        rows = [
            VectorRow(
                f"{record.document_id}\x1f{kind}\x1f{i}",
                parent,
                record.document_id,
                kind,
                text,
                embedded[i + 1],
                record.tenant,
                tuple(record.acl),
                ids,
            )
            for i, (kind, parent, text, ids) in enumerate(extra)
        ]
        self.tables.replace_document(row, rows)

    # -- cascade ---------------------------------------------------------------------------------------
    def sync(self) -> dict[str, int]:
        """Reconcile with the registry (see the module docstring); returns what changed."""
        records = {r.document_id: r for r in self.store.list_records() if r.status is DocumentStatus.INDEXED}
        done = {"removed": 0, "access": 0, "summarised": 0}
        written = self.tables.summarised_at()
        for doc, (tenant, acl, _ids) in self.tables.documents().items():
            record = records.get(doc)
            if record is None:
                self.tables.remove_document(doc)
                done["removed"] += 1
            elif (record.tenant, tuple(sorted(record.acl))) != (tenant, tuple(sorted(acl))):
                self.tables.update_access(doc, record.tenant, record.acl)
                done["access"] += 1
            # re-indexed after it was summarised (by a run without the hierarchy, e.g. another process's
            # reindex: its summary cites chunks no longer served): summarise it again
            if record is not None and record.updated_at <= written.get(doc, 0.0):
                records.pop(doc)
        for doc, record in records.items():  # indexed without a (current) summary: summarise now
            chunks = self.store.document_chunks(doc)
            if not chunks:
                continue
            try:
                self.write(record, chunks)
            except Exception as exc:  # an optional stage never fails ingestion: tried again next sync
                log.warning("hierarchy_summary_failed: %s: %s", doc, exc)
                done["failed"] = done.get("failed", 0) + 1
            else:
                done["summarised"] += 1
        return done

    def documents_changed(self, document_ids: Sequence[str]) -> None:
        """A removal or an access change of these documents (Rag.remove / Rag.update_acl): follow it now."""
        follow_documents(self.store, self.tables, document_ids)

    def refresh_trees(self) -> list[str]:
        """Rebuild the stale scopes' trees (nothing when ``tree`` is off); returns the scopes rebuilt."""
        if not self.options.tree:
            return []
        with self._lock:
            return self.trees.refresh()

    def stats(self) -> dict[str, Any]:
        return {"summaries": self.method, **self.tables.counts()}


def _parents(chunks: Sequence[Chunk]) -> dict[str, list[Chunk]]:
    """The parent of each chunk (its parent chunk, else its document) and its children, in order."""
    out: dict[str, list[Chunk]] = {}
    for c in chunks:
        out.setdefault(c.parent_id or c.document_id, []).append(c)
    return out


def reader(tenant: str, acl: Sequence[str]) -> Identity:
    """An identity that sees exactly the documents of *tenant* with *acl*."""
    return Identity(tenant, tuple(acl))
