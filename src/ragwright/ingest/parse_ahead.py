"""Parse the next documents while this one is chunked and the last ones embedded.

Ingestion reads, parses and chunks on one producer thread while the calling thread embeds and writes
(:mod:`ragwright.ingest.pipeline`). On a machine with cores to spare, the isolated parser runs a pool of
worker processes (:func:`ragwright.parse.limits.pool_size`, by default one per three cores beyond the
first two): :class:`ParseAhead` keeps it busy by starting, on threads, the parse of the next documents
the source will list, so their results are ready when the producer reaches them. With one worker
(2- and 4-core machines, or ``limits.configure(workers=1)``) it does nothing.

It only guesses what the producer will parse: a document whose raw bytes and parser version match its
registry record (unchanged, so not parsed at all) or whose parse is cached is left alone, and a result
the producer never asks for is dropped. The producer still decides everything — the registry check,
dead letters, staging, the parse cache — exactly as without it; a parse error found ahead is raised
when the producer takes that result, as if it had parsed the document itself.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ragwright.model.document import Document
from ragwright.model.ids import sha256_bytes
from ragwright.model.records import DocumentStatus
from ragwright.parse import parse_bytes, parser_version_for
from ragwright.parse.limits import pool_size
from ragwright.parse.options import ParseOptions
from ragwright.sources.base import SourceItem, load_within

__all__ = ["ParseAhead"]

log = logging.getLogger(__name__)


class ParseAhead:
    """Parses up to ``pool_size() - 1`` upcoming items in the background (see the module docstring)."""

    def __init__(self, store: Any, options: ParseOptions, *, workers: int | None = None) -> None:
        self._store = store
        self._options = options
        self._ahead = max(0, (pool_size() if workers is None else workers) - 1)
        self._futures: dict[str, Future[tuple[str, Document | BaseException] | None]] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self.started = 0  # parses started ahead (for tests and the log)

    @property
    def active(self) -> bool:
        return self._ahead > 0

    def wrap(self, items: Iterable[SourceItem]) -> Iterator[SourceItem]:
        """*items* in order, the parse of the next ones started as each is handed out."""
        if not self.active:
            yield from items
            return
        self._pool = ThreadPoolExecutor(self._ahead, thread_name_prefix="ragwright-parse-ahead")
        window: deque[SourceItem] = deque()
        source = iter(items)
        try:
            while True:
                while len(window) <= self._ahead:
                    nxt = next(source, None)
                    if nxt is None:
                        break
                    window.append(nxt)
                    if len(window) > 1:  # the head is the producer's own: it parses that one now
                        self._submit(nxt)
                if not window:
                    return
                yield window.popleft()
        finally:
            self._pool.shutdown(wait=False, cancel_futures=True)
            with self._lock:
                self._futures.clear()

    def take(self, document_id: str, content_hash: str) -> Document | None:
        """The document parsed ahead for these bytes (waiting for it), or ``None`` when none was (or the
        bytes changed since). Raises the error the parse raised, as :func:`~ragwright.parse.parse_bytes`
        would have."""
        with self._lock:
            future = self._futures.pop(document_id, None)
        if future is None:
            return None
        outcome = future.result()
        if outcome is None or outcome[0] != content_hash:
            return None
        if isinstance(outcome[1], BaseException):
            raise outcome[1]
        return outcome[1]

    def _submit(self, item: SourceItem) -> None:
        """Start parsing *item* on a pool thread (local files only: a URL would be fetched twice)."""
        if not item.uri.startswith("file:") or self._pool is None:
            return

        def parse() -> tuple[str, Document | BaseException] | None:
            try:
                loaded = load_within(item, self._options.max_file_bytes)
            except Exception:
                return None  # the producer reads it again and dead-letters it
            if isinstance(loaded, Document):
                return None
            data = bytes(loaded)
            content_hash = item.fingerprint or sha256_bytes(data)
            try:
                version = parser_version_for(data, item.name_hint)
                previous = self._store.get_record(item.document_id)
                if (
                    previous is not None
                    and previous.status is DocumentStatus.INDEXED
                    and previous.content_hash == content_hash
                    and previous.parser_version == version
                ) or self._store.cached_parsed(content_hash, version) is not None:
                    return None  # unchanged or cached: the producer will not parse it
                with self._lock:
                    self.started += 1
                document = parse_bytes(
                    item.document_id, data, name_hint=item.name_hint, source=item.uri, options=self._options
                )
            except Exception as exc:  # raised again when (if) the producer takes it
                return content_hash, exc
            return content_hash, document

        with self._lock:
            self._futures[item.document_id] = self._pool.submit(parse)
