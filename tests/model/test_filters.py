import pytest

from ragwright.errors import ConfigError
from ragwright.model.filters import And, Compare, Eq, Exists, In, Not, Or, all_of, as_filter, filter_size, matches


def test_mapping_is_and_of_equalities() -> None:
    f = as_filter({"department": "finance", "page": 3})
    assert f == And((Eq("department", "finance"), Eq("page", 3)))
    assert matches(f, {"department": "finance", "page": 3})
    assert not matches(f, {"department": "finance", "page": "3"})
    assert not matches(f, {"department": "finance"})


def test_list_value_in_mapping_is_in() -> None:
    f = as_filter({"dept": ["a", "b"]})
    assert f == In("dept", ("a", "b"))
    assert matches(f, {"dept": "b"}) and not matches(f, {"dept": "c"})


def test_list_metadata_membership() -> None:
    assert matches(Eq("tags", "x"), {"tags": ["x", "y"]})
    assert not matches(Eq("tags", "z"), {"tags": ["x", "y"]})


def test_not_over_missing_key_is_true() -> None:
    assert matches(Not(Eq("a", 1)), {})
    assert not matches(Exists("a"), {"a": None})


def test_compare_is_kind_sensitive() -> None:
    assert matches(Compare("year", "gte", 2020), {"year": 2021})
    assert not matches(Compare("year", "gte", 2020), {"year": "2021"})
    assert matches(Or((Eq("a", 1), Eq("b", 2))), {"b": 2})


def test_all_of_skips_none() -> None:
    assert all_of([None, {"a": 1}]) == Eq("a", 1)
    assert all_of([None, None]) is None


@pytest.mark.parametrize(
    "build",
    [lambda: Eq("bad key", 1), lambda: Eq("k", [1]), lambda: In("k", ()), lambda: Compare("k", "eq", 1)],  # type: ignore[arg-type]
)
def test_invalid_filters_are_refused(build: object) -> None:
    with pytest.raises(ConfigError):
        build()  # type: ignore[operator]


def test_filter_size_counts_every_comparison() -> None:
    assert filter_size(None) == 0
    assert filter_size(as_filter({"a": 1, "b": [1, 2, 3]})) == 4
    assert filter_size(Or((Not(Exists("a")), And((Compare("n", "gt", 1), In("k", ("x", "y"))))))) == 4
