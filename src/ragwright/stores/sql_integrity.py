"""The store integrity check in SQL, one implementation for the SQLite and PostgreSQL stores.

:func:`integrity_problems` lists what :meth:`~ragwright.stores.base.Store.check_integrity` reports:
chunks whose document has no live registry record, indexed documents whose chunk count is wrong,
vectors of the wrong size and a keyword index out of step with the chunks. The caller runs it inside
one read snapshot, so a concurrent writer never shows as a problem.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ragwright.stores.sql_dialect import Dialect, Execute

if TYPE_CHECKING:
    from ragwright.index import Bm25Index

__all__ = ["integrity_problems"]


def integrity_problems(
    run: Execute,
    dialect: Dialect,
    *,
    chunks: str,
    documents: str,
    dimension: int | None,
    keyword_index: Callable[[], Bm25Index] | None,
) -> list[str]:
    """Problems of the tables *chunks* / *documents* (empty when consistent). *keyword_index* returns
    the store's BM25 index, read after the chunk ids."""
    problems: list[str] = []
    for (doc,) in run(
        f"SELECT DISTINCT c.document_id FROM {chunks} c LEFT JOIN {documents} d ON d.document_id = c.document_id "
        "WHERE d.document_id IS NULL OR d.status = 'deleted' ORDER BY 1",
        (),
    ).fetchall():
        problems.append(f"orphan chunks of {doc!r} (no live registry record)")
    for doc, expected, actual in run(
        f"SELECT d.document_id, d.chunk_count, COUNT(c.chunk_id) FROM {documents} d "
        f"LEFT JOIN {chunks} c ON c.document_id = d.document_id WHERE d.status = 'indexed' "
        "GROUP BY d.document_id, d.chunk_count HAVING COUNT(c.chunk_id) != d.chunk_count ORDER BY 1",
        (),
    ).fetchall():
        problems.append(f"{doc!r} is indexed with {expected} chunks but {actual} are stored")
    if dimension is not None:
        row = run(
            dialect.sql(f"SELECT COUNT(*) FROM {chunks} WHERE {dialect.wrong_vector_size}"),
            (dialect.wrong_vector_size_param(dimension),),
        ).fetchone()
        if row and row[0]:
            problems.append(f"{row[0]} chunks have vectors of the wrong size")
    if keyword_index is not None:
        ids = {r[0] for r in run(f"SELECT chunk_id FROM {chunks}", ()).fetchall()}
        index = keyword_index()
        if len(index) != len(ids) or any(cid not in index for cid in ids):
            problems.append("the keyword index is out of step with the stored chunks")
    return problems
