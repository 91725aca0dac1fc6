"""Typed, frozen options of the query transforms.

A transform runs only when it is *configured* (its options given to :class:`TransformOptions`, which
the :class:`~ragwright.retrieve.Retriever` takes with a chat model) **and** the per-call switch of
:class:`~ragwright.options.RetrievalOptions` allows it (``use_hyde``, ``use_multi_query`` default on,
``use_query_rewrite`` and ``use_self_query`` default off). Every option is validated here, at
configuration time: a prompt template missing a required placeholder is refused before any query.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ragwright._validate import OptionsBase, check_bool, check_choice, check_float, check_int
from ragwright.errors import ConfigError
from ragwright.model.metadata import validate_key

FieldKind = Literal["string", "number", "bool"]
FilterOp = Literal["eq", "in", "gt", "gte", "lt", "lte"]
SelfQueryMode = Literal["hard", "soft"]
OPS: tuple[str, ...] = ("eq", "in", "gt", "gte", "lt", "lte")
INTENTS: tuple[str, ...] = ("lookup", "comparison", "summary", "chitchat", "out_of_scope")

DEFAULT_MULTI_QUERY_TEMPLATE = (
    "Generate {count} different phrasings of the following question.\n"
    "Return only the rephrased questions, one per line, with no numbering.\n\n"
    "Question: {query}"
)
DEFAULT_HYDE_TEMPLATE = "Write a short passage that answers the following question.\n\nQuestion: {query}"

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def check_template(name: str, value: Any, required: Sequence[str]) -> None:
    """A prompt template: a non-empty string with every *required* ``{placeholder}`` and no other."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError.invalid(name, value, "a non-empty prompt template string")
    found = set(_PLACEHOLDER.findall(value))
    missing = [p for p in required if p not in found]
    if missing:
        need = " and ".join("{" + p + "}" for p in required)
        raise ConfigError.invalid(name, value, f"a template containing {need} (missing {{{missing[0]}}})")
    unknown = sorted(found - set(required))
    if unknown:
        raise ConfigError.invalid(
            name,
            value,
            f"a template whose only placeholders are {', '.join('{' + p + '}' for p in required)} "
            f"(unknown {{{unknown[0]}}})",
        )


def fill_template(template: str, **values: object) -> str:
    """Substitute ``{name}`` placeholders without ``str.format`` (other braces in the text stay as they are)."""
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template)


def _check_weight(name: str, value: Any) -> None:
    check_float(name, value, lo=0.0, lo_open=True)


@dataclass(frozen=True)
class MultiQueryOptions(OptionsBase):
    """Multi-query expansion: ``variant_count`` paraphrases from one chat call.

    ``prompt_template`` must contain ``{count}`` and ``{query}``. Each variant runs the search arms
    and every ranking is fused with RRF, each variant at ``variant_weight`` and the original query at
    :attr:`TransformOptions.original_weight` (always the highest). Variants longer than
    ``max_variant_chars`` or repeating the original are discarded.
    """

    variant_count: int = 3
    prompt_template: str = DEFAULT_MULTI_QUERY_TEMPLATE
    variant_weight: float = 1.0
    temperature: float = 0.0
    max_tokens: int = 256
    max_variant_chars: int = 300

    def __post_init__(self) -> None:
        check_int("variant_count", self.variant_count, minimum=1)
        check_template("prompt_template", self.prompt_template, ("count", "query"))
        _check_weight("variant_weight", self.variant_weight)
        check_float("temperature", self.temperature, lo=0.0, hi=2.0)
        check_int("max_tokens", self.max_tokens, minimum=16)
        check_int("max_variant_chars", self.max_variant_chars, minimum=8)


@dataclass(frozen=True)
class HydeOptions(OptionsBase):
    """Hypothetical document embeddings, multi-hypothesis.

    ``hypothesis_count`` passages (1 = classic single-document HyDE) are written at
    ``hypothesis_temperature``, at most ``max_parallel`` at a time, embedded in one batch, and the
    dense arm searches with their L2-normalised mean. BM25 and sparse arms keep the raw query.
    """

    prompt_template: str = DEFAULT_HYDE_TEMPLATE
    hypothesis_count: int = 3
    hypothesis_temperature: float = 0.8
    max_parallel: int = 4
    max_tokens: int = 256

    def __post_init__(self) -> None:
        check_template("prompt_template", self.prompt_template, ("query",))
        check_int("hypothesis_count", self.hypothesis_count, minimum=1)
        check_float("hypothesis_temperature", self.hypothesis_temperature, lo=0.0, hi=2.0)
        check_int("max_parallel", self.max_parallel, minimum=1)
        check_int("max_tokens", self.max_tokens, minimum=16)


def _pairs(name: str, value: Any) -> tuple[tuple[str, str], ...]:
    items = value.items() if isinstance(value, Mapping) else value
    try:
        pairs = tuple((k, v) for k, v in items)
    except (TypeError, ValueError) as exc:
        raise ConfigError.invalid(name, value, "a mapping of term -> expansion") from exc
    for term, expansion in pairs:
        if not isinstance(term, str) or not term.strip() or not isinstance(expansion, str) or not expansion.strip():
            raise ConfigError.invalid(name, value, "a mapping of non-empty term strings to non-empty expansions")
    return tuple(sorted((t.strip(), e.strip()) for t, e in pairs))


@dataclass(frozen=True)
class RewriteOptions(OptionsBase):
    """Query rewriting: one structured chat call plus a deterministic glossary.

    * ``glossary``: term → expansion (``{"PTO": "paid time off"}``), applied without a model; an
      all-capitals term matches case-sensitively (an acronym), any other term case-insensitively.
    * ``history_turns``: how many recent conversation turns the condenser sees.
    * ``condense`` / ``decompose`` / ``step_back`` / ``keywords`` / ``classify``: the parts asked of
      the model; each output joins the query mix at its weight (the original stays, at the highest).
    * ``skip_retrieval_when_not_needed``: return no results when the model classifies the message as
      needing no retrieval (greetings); off by default, the classification is only recorded.
    Validation: non-empty, ``max_query_chars`` per query, ``max_keywords``, ``max_sub_questions``,
    intent in ``allowed_intents``. Any failure → the raw query (``rewrite_failed``).
    """

    glossary: Mapping[str, str] | Sequence[tuple[str, str]] = ()
    history_turns: int = 6
    condense: bool = True
    decompose: bool = True
    step_back: bool = False
    keywords: bool = True
    classify: bool = True
    skip_retrieval_when_not_needed: bool = False
    allowed_intents: tuple[str, ...] = INTENTS
    max_query_chars: int = 400
    max_keywords: int = 8
    max_sub_questions: int = 4
    standalone_weight: float = 1.2
    glossary_weight: float = 1.2
    sub_question_weight: float = 1.0
    step_back_weight: float = 0.8
    keyword_weight: float = 1.0
    temperature: float = 0.0
    max_tokens: int = 384

    def __post_init__(self) -> None:
        object.__setattr__(self, "glossary", _pairs("glossary", self.glossary))
        check_int("history_turns", self.history_turns, minimum=0)
        for name in ("condense", "decompose", "step_back", "keywords", "classify", "skip_retrieval_when_not_needed"):
            check_bool(name, getattr(self, name))
        intents = self.allowed_intents
        if (
            not isinstance(intents, tuple | list)
            or not intents
            or not all(isinstance(i, str) and i.strip() for i in intents)
        ):
            raise ConfigError.invalid("allowed_intents", intents, "a non-empty tuple of intent names")
        object.__setattr__(self, "allowed_intents", tuple(intents))
        check_int("max_query_chars", self.max_query_chars, minimum=16)
        check_int("max_keywords", self.max_keywords, minimum=1)
        check_int("max_sub_questions", self.max_sub_questions, minimum=1)
        for name in (
            "standalone_weight",
            "glossary_weight",
            "sub_question_weight",
            "step_back_weight",
            "keyword_weight",
        ):
            _check_weight(name, getattr(self, name))
        check_float("temperature", self.temperature, lo=0.0, hi=2.0)
        check_int("max_tokens", self.max_tokens, minimum=32)

    @property
    def glossary_map(self) -> dict[str, str]:
        return dict(self.glossary)  # normalised to pairs in __post_init__

    @property
    def max_weight(self) -> float:
        return max(
            self.standalone_weight,
            self.glossary_weight,
            self.sub_question_weight,
            self.step_back_weight,
            self.keyword_weight,
        )


@dataclass(frozen=True)
class AllowedField(OptionsBase):
    """One metadata field the model may filter on: its kind, operators and values (the allow-list).

    A ``string`` field needs ``values`` (matched case-insensitively; the filter uses the allow-list's
    own spelling, never the model's text). A ``number`` field may bound values with ``minimum`` /
    ``maximum``. ``description`` is shown to the model.
    """

    kind: FieldKind = "string"
    operators: tuple[str, ...] = ("eq", "in")
    values: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    description: str = ""

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, ("string", "number", "bool"))
        ops = tuple(self.operators) if isinstance(self.operators, tuple | list) else self.operators
        if not isinstance(ops, tuple) or not ops or any(op not in OPS for op in ops):
            raise ConfigError.invalid("operators", self.operators, "a non-empty tuple from " + ", ".join(OPS))
        if self.kind != "number" and any(op in ("gt", "gte", "lt", "lte") for op in ops):
            raise ConfigError.invalid("operators", self.operators, f"eq/in only for a {self.kind} field")
        object.__setattr__(self, "operators", ops)
        vals = tuple(self.values) if isinstance(self.values, tuple | list | set | frozenset) else self.values
        if not isinstance(vals, tuple):
            raise ConfigError.invalid("values", self.values, "a tuple of allowed values")
        if self.kind == "string":
            if not vals or not all(isinstance(v, str) and v.strip() for v in vals):
                raise ConfigError.invalid("values", self.values, "a non-empty tuple of strings for a string field")
            vals = tuple(dict.fromkeys(vals))
        object.__setattr__(self, "values", vals)
        check_float("minimum", self.minimum, optional=True)
        check_float("maximum", self.maximum, optional=True)
        if self.minimum is not None and self.maximum is not None and self.minimum > self.maximum:
            raise ConfigError.invalid("maximum", self.maximum, f"a number >= minimum ({self.minimum})")
        if not isinstance(self.description, str):
            raise ConfigError.invalid("description", self.description, "a string")


def _fields(value: Any) -> tuple[tuple[str, AllowedField], ...]:
    items = value.items() if isinstance(value, Mapping) else value
    try:
        pairs = tuple((k, v) for k, v in items)
    except (TypeError, ValueError) as exc:
        raise ConfigError.invalid("fields", value, "a mapping of field name -> AllowedField") from exc
    if not pairs:
        raise ConfigError.invalid("fields", value, "at least one allow-listed field")
    for name, spec in pairs:
        try:
            validate_key(name)
        except (TypeError, ValueError) as exc:
            raise ConfigError.invalid("fields", name, f"a valid metadata key ({exc})") from exc
        if not isinstance(spec, AllowedField):
            raise ConfigError.invalid(f"fields[{name!r}]", spec, "an AllowedField")
    return pairs


@dataclass(frozen=True)
class SelfQueryOptions(OptionsBase):
    """Self-query: the model proposes *business* filters; only allow-listed fields,
    operators and values survive, built as typed filter objects (never spliced into filter text).

    ``mode="hard"`` filters inside every arm and, when fewer than ``min_results`` results come back,
    relaxes the proposed filters one field at a time in ``relax_order`` (default: the reverse of the
    order ``fields`` were given, so the first field is kept longest), then drops them all. The caller's
    own ``metadata_filter`` and the identity's security filter are never relaxed or widened.
    ``mode="soft"`` never filters: results matching the proposals get their score multiplied by
    ``1 + soft_boost × (share of clauses matched)`` and are re-sorted.
    """

    fields: Mapping[str, AllowedField] | Sequence[tuple[str, AllowedField]] = ()
    mode: SelfQueryMode = "hard"
    soft_boost: float = 0.5
    min_results: int = 5
    relax_order: tuple[str, ...] | None = None
    max_clauses: int = 4
    search_text_weight: float = 1.0
    temperature: float = 0.0
    max_tokens: int = 256

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", _fields(self.fields))
        check_choice("mode", self.mode, ("hard", "soft"))
        check_float("soft_boost", self.soft_boost, lo=0.0)
        check_int("min_results", self.min_results, minimum=1)
        names = self.field_map
        if self.relax_order is not None:
            order = tuple(self.relax_order) if isinstance(self.relax_order, tuple | list) else None
            if order is None or any(n not in names for n in order) or len(set(order)) != len(order):
                raise ConfigError.invalid(
                    "relax_order", self.relax_order, "a tuple of distinct allow-listed field names"
                )
            object.__setattr__(self, "relax_order", order)
        check_int("max_clauses", self.max_clauses, minimum=1)
        _check_weight("search_text_weight", self.search_text_weight)
        check_float("temperature", self.temperature, lo=0.0, hi=2.0)
        check_int("max_tokens", self.max_tokens, minimum=32)

    @property
    def field_map(self) -> dict[str, AllowedField]:
        return dict(self.fields)  # normalised to pairs in __post_init__

    @property
    def relaxation(self) -> tuple[str, ...]:
        """Field names in the order they are relaxed: ``relax_order`` then the rest, last-declared first."""
        given = self.relax_order or ()
        return given + tuple(n for n in reversed(list(self.field_map)) if n not in given)


@dataclass(frozen=True)
class TransformOptions(OptionsBase):
    """Which query transforms are configured, and the original query's weight in fusion.

    A transform left ``None`` never runs. ``original_weight`` must be above every other query weight
    (the original always participates with the highest weight).

    Cost: multi-query and HyDE multiply. Every query branch (the original, each variant,
    each rewrite output) runs its own HyDE generation: ``branches × hypothesis_count`` chat calls,
    12 per query with the defaults (3 variants + the original, 3 hypotheses), plus one call each for
    multi-query, rewriting and self-query, and ``branches × arms`` searches.
    """

    rewrite: RewriteOptions | None = None
    multi_query: MultiQueryOptions | None = None
    hyde: HydeOptions | None = None
    self_query: SelfQueryOptions | None = None
    original_weight: float = 1.5

    def __post_init__(self) -> None:
        for name, cls in (
            ("rewrite", RewriteOptions),
            ("multi_query", MultiQueryOptions),
            ("hyde", HydeOptions),
            ("self_query", SelfQueryOptions),
        ):
            value = getattr(self, name)
            if value is not None and not isinstance(value, cls):
                raise ConfigError.invalid(name, value, f"a {cls.__name__} or None")
        _check_weight("original_weight", self.original_weight)
        others = [("multi_query.variant_weight", self.multi_query.variant_weight)] if self.multi_query else []
        if self.rewrite is not None:
            others.append(("rewrite weights", self.rewrite.max_weight))
        if self.self_query is not None:
            others.append(("self_query.search_text_weight", self.self_query.search_text_weight))
        for name, weight in others:
            if weight >= self.original_weight:
                raise ConfigError.invalid(
                    "original_weight",
                    self.original_weight,
                    f"a weight above {name} ({weight}): the original ranks highest",
                )

    @property
    def any(self) -> bool:
        return any(x is not None for x in (self.rewrite, self.multi_query, self.hyde, self.self_query))
