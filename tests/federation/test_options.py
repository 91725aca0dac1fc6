"""Federation options: names, trust weights and the text syntax, validated with ConfigError."""

import pytest

from ragwright.errors import ConfigError
from ragwright.federation import LIVE, FederationOptions, SourceSpec, parse_stores, parse_weights


def test_text_syntax() -> None:
    assert parse_weights("a=1.0, b=0.5,c") == {"a": 1.0, "b": 0.5, "c": 1.0}
    assert parse_weights(["a", "b=2"]) == {"a": 1.0, "b": 2.0}
    assert parse_weights({"a": 3}) == {"a": 3.0}
    assert parse_stores("pg=postgresql://u@h:5432/db?sslmode=disable,f=/tmp/x.db") == {
        "pg": "postgresql://u@h:5432/db?sslmode=disable",
        "f": "/tmp/x.db",
    }


def test_parse_joins_stores_and_defaults_to_live() -> None:
    only_stores = FederationOptions.parse(None, {"pg": "postgresql://h/db"})
    assert only_stores.names == (LIVE, "pg") and only_stores.sources[1].uri == "postgresql://h/db"
    both = FederationOptions.parse("g2=0.5,pg=0.25", "pg=postgresql://h/db")
    assert both.weights == {"g2": 0.5, "pg": 0.25} and both.sources[0].uri is None


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: SourceSpec("a", 0.0), "federation weight of 'a'"),
        (lambda: SourceSpec("a", -1.0), "federation weight of 'a'"),
        (lambda: SourceSpec("a", float("nan")), "federation weight of 'a'"),
        (lambda: SourceSpec("a", True), "federation weight of 'a'"),  # type: ignore[arg-type]
        (lambda: parse_weights("a=heavy"), "federation weight of 'a'"),
        (lambda: parse_weights("a=inf"), "federation weight of 'a'"),
        (lambda: SourceSpec("bad name"), "federation source name"),
        (lambda: parse_weights("a,a=2"), "federation collections"),
        (lambda: FederationOptions(()), "federation sources"),
        (lambda: FederationOptions((SourceSpec("a"), SourceSpec("a"))), "federation sources"),
        (lambda: FederationOptions((SourceSpec("a"),), rrf_k=0), "federation rrf_k"),
        (lambda: FederationOptions((SourceSpec("a"),), source_timeout_s=0), "federation source_timeout_s"),
        (lambda: parse_stores("pg"), "federation store"),
        (lambda: parse_stores("live=/x.db"), "federation store"),
        (lambda: FederationOptions.from_table({"collection": "a"}), "federation.collection"),
    ],
)
def test_invalid_values_name_the_field(make: object, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        make()  # type: ignore[operator]
    assert err.value.field == field
    assert str(err.value)  # says what is accepted


def test_table_round_trip_masks_passwords() -> None:
    table = {"collections": ["live", "pg=0.5"], "stores": {"pg": "postgresql://u:secret@h/db"}, "rrf_k": 10}
    options = FederationOptions.from_table(table)
    assert options is not None and options.rrf_k == 10 and options.weights == {"live": 1.0, "pg": 0.5}
    shown = options.to_table()
    assert shown["collections"] == ["live", "pg=0.5"] and shown["stores"] == {"pg": "postgresql://u:***@h/db"}
    assert FederationOptions.from_table({}) is None and FederationOptions.from_table(None) is None
