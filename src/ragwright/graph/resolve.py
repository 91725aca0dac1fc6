"""Entity resolution's merge rule, apart from storage: which names of one tenant and type to merge.

:meth:`~ragwright.graph.index.GraphIndex.resolve` reads a tenant's entity keys, embeds one surface of
each and calls :func:`merge_targets` per type; ``benchmarks/graph_extraction.py`` calls the same
function on gold entity clusters (Re-DocRED) to measure ``GraphOptions.merge_similarity``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def compatible(a: str, b: str) -> bool:
    """Names that differ only in a number or a year are different things (``iPhone 14`` / ``iPhone 15``)."""
    digits_a, digits_b = (
        [w for w in a.split() if any(ch.isdigit() for ch in w)],
        [w for w in b.split() if any(ch.isdigit() for ch in w)],
    )
    return digits_a == digits_b


def normalised(vectors: Any) -> Any:
    """*vectors* as a float32 matrix of unit rows (a zero row stays zero)."""
    import numpy as np

    matrix = np.asarray(vectors, dtype=np.float32)
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)


def merge_targets(keys: Sequence[str], vectors: Any, threshold: float) -> dict[int, int]:
    """``{j: i}``: key *j* merges into key *i* (``i < j``, and *i* is never merged itself).

    *keys* come canonical-first (the most mentioned name first); *vectors* are their embeddings, one
    row each (normalised here). A key merges into the first earlier, unmerged key whose cosine is at
    least *threshold* and whose numbers match (:func:`compatible`): clusters are stars around a
    canonical name, never chains.
    """
    import numpy as np

    if len(keys) != len(vectors):
        raise ValueError(f"{len(keys)} keys but {len(vectors)} vectors")
    if len(keys) < 2:
        return {}
    matrix = normalised(vectors)
    sims = matrix @ matrix.T
    target: dict[int, int] = {}
    for i in range(len(keys)):
        if i in target:
            continue
        for found in np.nonzero(sims[i, i + 1 :] >= threshold)[0]:
            j = int(found) + i + 1
            if j not in target and compatible(keys[i], keys[j]):
                target[j] = i
    return target
