"""Transform options: seed defaults, placeholder validation at configuration time, weights."""

from __future__ import annotations

import pytest

from ragwright.errors import ConfigError
from ragwright.options import RetrievalOptions
from ragwright.retrieve.transforms import (
    AllowedField,
    HydeOptions,
    MultiQueryOptions,
    RewriteOptions,
    SelfQueryOptions,
    TransformOptions,
)
from ragwright.retrieve.transforms.options import fill_template


def test_seed_defaults() -> None:
    mq, hyde = MultiQueryOptions(), HydeOptions()
    assert mq.variant_count == 3 and "{count}" in mq.prompt_template and "{query}" in mq.prompt_template
    assert (hyde.hypothesis_count, hyde.hypothesis_temperature, hyde.max_parallel) == (3, 0.8, 4)
    assert "{query}" in hyde.prompt_template
    opts = RetrievalOptions()
    assert opts.use_hyde and opts.use_multi_query  # on by default, as in seed 000 (they need a configured llm)
    assert not opts.use_query_rewrite and not opts.use_self_query
    assert not TransformOptions().any  # nothing runs unless configured


def test_reexported_from_options_module() -> None:
    import ragwright.options as options

    assert options.HydeOptions is HydeOptions and options.TransformOptions is TransformOptions
    with pytest.raises(AttributeError):
        options.NoSuchOptions  # noqa: B018


@pytest.mark.parametrize(
    ("template", "missing"),
    [
        ("Rephrase {query} please", "count"),
        ("Give {count} phrasings", "query"),
        ("no placeholders at all", "count"),
    ],
)
def test_multi_query_template_needs_count_and_query(template: str, missing: str) -> None:
    with pytest.raises(ConfigError) as err:
        MultiQueryOptions(prompt_template=template)
    assert err.value.field == "prompt_template" and "{" + missing + "}" in str(err.value)


def test_templates_refuse_unknown_placeholders_and_non_strings() -> None:
    with pytest.raises(ConfigError, match=r"unknown \{question\}"):
        HydeOptions(prompt_template="Answer {question} for {query}")
    with pytest.raises(ConfigError, match=r"\{query\}"):
        HydeOptions(prompt_template="Write a passage.")
    with pytest.raises(ConfigError):
        HydeOptions(prompt_template="   ")
    with pytest.raises(ConfigError):
        MultiQueryOptions(prompt_template=None)  # type: ignore[arg-type]


def test_fill_template_leaves_other_braces() -> None:
    out = fill_template('Return JSON like {"a": 1}. {count} of {query}', count=3, query="q {x}")
    assert out == 'Return JSON like {"a": 1}. 3 of q {x}'


@pytest.mark.parametrize(
    ("cls", "field", "value"),
    [
        (MultiQueryOptions, "variant_count", 0),
        (HydeOptions, "hypothesis_count", 0),
        (HydeOptions, "hypothesis_temperature", 2.5),
        (HydeOptions, "max_parallel", 0),
        (RewriteOptions, "max_query_chars", 3),
        (RewriteOptions, "allowed_intents", ()),
        (SelfQueryOptions, "mode", "maybe"),
    ],
)
def test_invalid_values_refused(cls: type, field: str, value: object) -> None:
    kwargs = {field: value}
    if cls is SelfQueryOptions:
        kwargs["fields"] = {"doc_type": AllowedField(values=("policy",))}
    with pytest.raises(ConfigError):
        cls(**kwargs)


def test_original_query_must_weigh_most() -> None:
    with pytest.raises(ConfigError, match="original"):
        TransformOptions(multi_query=MultiQueryOptions(variant_weight=2.0))
    with pytest.raises(ConfigError, match="original"):
        TransformOptions(rewrite=RewriteOptions(standalone_weight=1.5))
    assert TransformOptions(multi_query=MultiQueryOptions(variant_weight=1.4)).original_weight == 1.5
    with pytest.raises(ConfigError):
        TransformOptions(hyde=MultiQueryOptions())  # type: ignore[arg-type]


def test_allow_list_validation() -> None:
    with pytest.raises(ConfigError):
        AllowedField(kind="string", values=())  # a string field needs its allowed values
    with pytest.raises(ConfigError):
        AllowedField(kind="string", operators=("gt",), values=("a",))  # ordering only for numbers
    with pytest.raises(ConfigError):
        AllowedField(kind="number", operators=("like",))
    with pytest.raises(ConfigError):
        AllowedField(kind="number", minimum=5, maximum=1)
    with pytest.raises(ConfigError):
        SelfQueryOptions(fields={})
    with pytest.raises(ConfigError):
        SelfQueryOptions(fields={"doc_type": AllowedField(values=("a",))}, relax_order=("year",))
    fields = {"doc_type": AllowedField(values=("policy",)), "year": AllowedField(kind="number")}
    assert SelfQueryOptions(fields=fields).relaxation == ("year", "doc_type")  # last declared relaxed first
    assert SelfQueryOptions(fields=fields, relax_order=("doc_type",)).relaxation == ("doc_type", "year")


def test_glossary_normalised_and_hashable() -> None:
    opts = RewriteOptions(glossary={"PTO": " paid time off "})
    assert opts.glossary_map == {"PTO": "paid time off"}
    hash(opts)
    with pytest.raises(ConfigError):
        RewriteOptions(glossary={"PTO": ""})
