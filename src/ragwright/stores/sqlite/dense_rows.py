"""Re-syncing the SQLite store's dense matrix without re-reading it (a helper of ``dense.py``).

Below the ANN threshold the store keeps every vector in a float32 matrix, re-synced whenever the file
changed. With other processes writing, that is nearly every search; reading every vector back each
time made a search under two writers several times slower than alone. The rows are keyed by (rowid,
crc32 of the chunk id), and a stored vector never changes in place (a rewrite is a new row), so a row
with the same key and tag as in the previous matrix is that row: it is copied from there, and only the
rows added since are read from the file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ragwright.index.ann import VectorReader

    I64 = npt.NDArray[np.int64]
    U32 = npt.NDArray[np.uint32]
    F32 = npt.NDArray[np.float32]


def reusing_reader(
    old_keys: I64, old_tags: U32, old_matrix: F32, keys: I64, tags: U32, read: VectorReader
) -> VectorReader:
    """A :data:`~ragwright.index.ann.VectorReader` for the rows *keys*/*tags* (sorted keys, the current
    rowids and tags) that copies the rows the previous matrix holds under the same key and tag and reads
    the others through *read*. Answers in key order, like *read*."""
    import numpy as np

    def reader(wanted: I64) -> tuple[I64, F32]:
        if wanted.size == 0 or old_keys.size == 0:
            return read(wanted)
        at = np.minimum(np.searchsorted(old_keys, wanted), old_keys.size - 1)
        now = np.minimum(np.searchsorted(keys, wanted), max(0, keys.size - 1))
        known = (old_keys[at] == wanted) & (keys[now] == wanted) if keys.size else np.zeros(wanted.size, bool)
        known &= old_tags[at] == tags[now]
        got_keys, got_rows = read(wanted[~known])
        out_keys = np.concatenate([wanted[known], got_keys])
        rows = np.concatenate([old_matrix[at[known]], got_rows.reshape(got_keys.size, old_matrix.shape[1])])
        order = np.argsort(out_keys, kind="stable")
        return out_keys[order], rows[order]

    return reader
