"""Staging in SQL, one implementation for the SQLite and PostgreSQL stores (a part a store is composed of).

Raw source bytes (compressed) and parsed documents are kept by content hash, with the leases of ingestion
runs in flight; :class:`~ragwright.stores.base.Staging` gives the semantics. The statements are written
once, with ``?`` placeholders; a :class:`Dialect` says what differs between the two databases — the
placeholder, how a lease's time is written and expired, and how a parsed document is stored (JSON text
or ``jsonb``). The store hands over how statements run: *write* and *read* open a unit of work and yield
a function that executes one statement and returns its cursor; *live_hashes* gives the SQL that lists
the content hashes live registry records refer to (the store knows its collections).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from contextlib import AbstractContextManager

from ragwright.model.document import Document
from ragwright.stores.sql_dialect import Dialect, Execute

__all__ = ["SqlStaging"]


class SqlStaging:
    """The ``Staging`` methods of a store over its ``staged``, ``parsed`` and ``staging_leases`` tables."""

    def __init__(
        self,
        dialect: Dialect,
        *,
        write: Callable[[], AbstractContextManager[Execute]],
        read: Callable[[], AbstractContextManager[Execute]],
        live_hashes: Callable[[], str],
        lease_s: float,
    ) -> None:
        self.dialect, self._write, self._read, self._live, self.lease_s = dialect, write, read, live_hashes, lease_s

    def stage(self, content_hash: str, data: bytes) -> None:
        with self._write() as run:
            run(
                self.dialect.sql(
                    "INSERT INTO staged(content_hash, data, size) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
                ),
                (content_hash, zlib.compress(data, 6), len(data)),
            )

    def staged(self, content_hash: str) -> bytes | None:
        with self._read() as run:
            row = run(self.dialect.sql("SELECT data FROM staged WHERE content_hash = ?"), (content_hash,)).fetchone()
        return None if row is None else zlib.decompress(row[0])

    def cache_parsed(self, content_hash: str, parser_version: str, document: Document) -> None:
        with self._write() as run:
            run(
                self.dialect.sql(
                    "INSERT INTO parsed(content_hash, parser_version, document) VALUES (?, ?, ?) "
                    "ON CONFLICT (content_hash, parser_version) DO UPDATE SET document = excluded.document"
                ),
                (content_hash, parser_version, self.dialect.encode_document(document.to_dict())),
            )

    def cached_parsed(self, content_hash: str, parser_version: str) -> Document | None:
        with self._read() as run:
            row = run(
                self.dialect.sql("SELECT document FROM parsed WHERE content_hash = ? AND parser_version = ?"),
                (content_hash, parser_version),
            ).fetchone()
        return None if row is None else Document.from_dict(self.dialect.decode_document(row[0]))

    def lease(self, run_id: str, content_hash: str) -> None:
        d = self.dialect
        with self._write() as run:
            run(
                d.sql(
                    f"INSERT INTO staging_leases(run_id, content_hash, leased_at) VALUES (?, ?, {d.lease_now}) "
                    "ON CONFLICT (run_id, content_hash) DO UPDATE SET leased_at = excluded.leased_at"
                ),
                (run_id, content_hash, *d.lease_now_params()),
            )

    def prune(self, release: str | None) -> int:
        """Release *release*'s leases (and expired ones); drop what no live record or lease refers to."""
        d = self.dialect
        with self._write() as run:
            run(
                d.sql(f"DELETE FROM staging_leases WHERE run_id = ? OR {d.lease_expired}"),
                (release, *d.lease_expired_params(self.lease_s)),
            )
            keep = f"{self._live()} UNION SELECT content_hash FROM staging_leases"
            a = run(f"DELETE FROM staged WHERE content_hash NOT IN ({keep})", ()).rowcount
            b = run(f"DELETE FROM parsed WHERE content_hash NOT IN ({keep})", ()).rowcount
        return int(a + b)
