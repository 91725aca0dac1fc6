"""Former home of :class:`RetrievalResults`; the typed record now lives in :mod:`ragwright.model.outcome`.

Strategies report their decisions as a :class:`~ragwright.model.outcome.RetrievalOutcome`; the list a
search returns carries it (``results.outcome``) and its flat view under the seed's names
(``results.extensions``).
"""

from __future__ import annotations

from ragwright.model.outcome import RetrievalOutcome, RetrievalResults

__all__ = ["RetrievalOutcome", "RetrievalResults"]
