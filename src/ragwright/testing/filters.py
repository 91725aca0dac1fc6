"""Hypothesis strategies for "the store's filter translation agrees with the reference matcher".

:class:`~ragwright.testing.conformance.FilterTranslationConformance` runs them against a store; a
third-party backend may also draw ``filters`` and ``metadatas`` in its own tests. Broad on purpose:
empty ``And``/``Or``, ``None`` and list metadata values, non-ASCII strings, float comparison operands:
each is a place where a SQL translation can part from :func:`~ragwright.model.filters.matches`.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ragwright.model.filters import And, Compare, Eq, Exists, In, Not, Or

__all__ = ["filters", "metadatas"]

keys = st.sampled_from(["a", "b", "c"])
scalars = st.one_of(
    st.integers(-3, 3), st.sampled_from(["1", "2", "x", "é"]), st.booleans(), st.sampled_from([1.0, 2.5])
)
leaf = st.one_of(
    st.builds(Eq, keys, scalars),
    st.builds(lambda k, vs: In(k, tuple(vs)), keys, st.lists(scalars, min_size=1, max_size=3)),
    st.builds(
        Compare,
        keys,
        st.sampled_from(["gt", "gte", "lt", "lte"]),
        st.one_of(st.integers(-3, 3), st.sampled_from(["1", "x", "Z", "é"]), st.sampled_from([0.5, 2.5])),
    ),
    st.builds(Exists, keys),
)
filters = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.builds(lambda cs: And(tuple(cs)), st.lists(inner, min_size=0, max_size=3)),
        st.builds(lambda cs: Or(tuple(cs)), st.lists(inner, min_size=0, max_size=3)),
        st.builds(Not, inner),
    ),
    max_leaves=6,
)
metadata_values = st.one_of(
    scalars, st.none(), st.lists(st.sampled_from(["1", "x", "y"]), max_size=2), st.lists(st.integers(0, 3), max_size=2)
)
metadatas = st.lists(st.dictionaries(keys, metadata_values, max_size=3), min_size=1, max_size=6)
