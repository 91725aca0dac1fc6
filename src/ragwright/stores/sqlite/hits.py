"""Hits whose chunk is decoded from its row only when read (a part of the SQLite store's search arms).

Each arm of a hybrid search returns dozens of candidates; fusion ranks them by id and score and the
caller sees a handful. A :class:`RowHit` keeps the row its arm read (already through the security and
metadata filters, in SQL) and turns it into a :class:`~ragwright.model.chunk.Chunk` — three JSON
columns decoded — the first time ``chunk`` is read; ``chunk_id`` and ``with_score`` never decode. The
chunk is the one the row held when the arm read it, exactly as an eager decode would have given.
"""

from __future__ import annotations

from typing import Any

from ragwright.model.chunk import Chunk
from ragwright.stores.base import Hit
from ragwright.stores.sqlite.schema import chunk_from_row

__all__ = ["RowHit", "decoded_count"]

#: The slot :class:`Hit` keeps its chunk in (read and written past the subclass's property).
_CHUNK_SLOT: Any = Hit.__dict__["chunk"]

_decoded = [0]


def decoded_count() -> int:
    """How many rows :class:`RowHit` has decoded in this process (tests count decodes with it)."""
    return _decoded[0]


class RowHit(Hit):
    """A :class:`Hit` over a chunk row (``CHUNK_COLUMNS`` order), decoded on first access to ``chunk``."""

    __slots__ = ("_row", "chunk_id")  # a slot: fusion reads the id of every candidate several times
    _row: tuple[Any, ...]
    chunk_id: str

    def __init__(self, row: tuple[Any, ...], score: float) -> None:
        object.__setattr__(self, "_row", row)
        object.__setattr__(self, "chunk_id", row[0])
        object.__setattr__(self, "score", score)

    @property  # read-only here: the chunk comes from the row
    def chunk(self) -> Chunk:
        try:
            chunk: Chunk = _CHUNK_SLOT.__get__(self, Hit)
        except AttributeError:  # not decoded yet (two threads racing decode equal chunks; one is kept)
            chunk = chunk_from_row(self._row)
            _CHUNK_SLOT.__set__(self, chunk)
            _decoded[0] += 1
        return chunk

    def with_score(self, score: float) -> Hit:
        return RowHit(self._row, score)

    def __eq__(self, other: object) -> bool:
        """Equal to any hit with the same chunk and score (deferred or not)."""
        if not isinstance(other, Hit):
            return NotImplemented
        return (self.chunk, self.score) == (other.chunk, other.score)

    def __hash__(self) -> int:
        return hash((self.chunk, self.score))

    def __repr__(self) -> str:
        return f"Hit(chunk={self.chunk!r}, score={self.score!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Hit, (self.chunk, self.score))
