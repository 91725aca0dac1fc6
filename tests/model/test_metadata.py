import math
from datetime import UTC, datetime

import pytest

from ragwright.errors import ConfigError
from ragwright.model.metadata import kind_of, normalize_metadata, values_equal


def test_number_never_equals_string() -> None:
    assert not values_equal(3, "3")
    assert not values_equal("3", 3)
    assert values_equal(3, 3.0)
    assert values_equal("3", "3")


def test_boolean_is_not_a_number() -> None:
    assert not values_equal(True, 1)
    assert not values_equal(0, False)
    assert values_equal(True, True)
    assert kind_of(True) == "boolean"


def test_normalize_dates_and_lists() -> None:
    meta = normalize_metadata({"when": datetime(2024, 1, 2, tzinfo=UTC), "tags": ("a", "b")})
    assert meta == {"when": "2024-01-02T00:00:00+00:00", "tags": ["a", "b"]}


@pytest.mark.parametrize(
    "bad",
    [{"": 1}, {"has space": 1}, {'quote"': 1}, {"x": math.nan}, {"x": [1, "a"]}, {"x": {"nested": 1}}, {"x": [[1]]}],
)
def test_invalid_metadata_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        normalize_metadata(bad)
