"""Self-query: only allow-listed fields, operators and values survive as typed filters; they only
narrow; business filters relax in order when too few results come back; the security filter never."""

from __future__ import annotations

import logging

import pytest

from ragwright import Identity
from ragwright.errors import GenerationError
from ragwright.model.filters import And, Compare, Eq, In, matches
from ragwright.options import RetrievalOptions
from ragwright.retrieve.transforms import AllowedField, SelfQueryOptions, TransformOptions
from ragwright.retrieve.transforms.self_query import propose_filters, relaxation_steps, validate_proposals
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

from .conftest import SpyStore, as_json, calls_of, chat_for, run

FIELDS = {
    "doc_type": AllowedField(values=("policy", "faq", "manual"), description="kind of document"),
    "product": AllowedField(values=("hr-suite", "x200")),
    "year": AllowedField(kind="number", operators=("eq", "gte", "lte"), minimum=1990, maximum=2100),
}
SQ = SelfQueryOptions(fields=FIELDS)
ON = RetrievalOptions(use_hybrid_search=True, use_self_query=True, top_k=5)


def proposal(*filters: dict[str, object], text: str | None = None) -> str:
    return as_json({"search_text": text, "filters": list(filters)})


def test_only_allow_listed_clauses_survive() -> None:
    raw = {
        "search_text": "parental leave",
        "filters": [
            {"field": "doc_type", "op": "eq", "value": "Policy"},  # case folded to the allow-list's spelling
            {"field": "tenant", "op": "eq", "value": "other"},  # not allow-listed (a security field!)
            {"field": "doc_type", "op": "gt", "value": "faq"},  # operator not allowed
            {"field": "product", "op": "eq", "value": "x300"},  # value not allowed
            {"field": "product", "op": "eq", "value": "x200' OR '1'='1"},  # injection-like: not a value
            {"field": "year", "op": "gte", "value": "2023"},  # numeric string accepted as a number
            {"field": "year", "op": "eq", "value": 1066},  # out of range
            {"field": "year", "op": "eq", "value": True},  # a bool is not a number
            {"field": "product", "op": "in", "value": ["x200", "DROP TABLE"]},  # one bad item drops the clause
            "doc_type = policy",
        ],
    }
    out = validate_proposals(raw, SQ)
    assert [c.filter for c in out.clauses] == [Eq("doc_type", "policy"), Compare("year", "gte", 2023)]
    assert out.search_text == "parental leave" and len(out.dropped) == 8
    assert any("tenant" in d and "not allow-listed" in d for d in out.dropped)


def test_in_and_bool_and_clause_cap() -> None:
    fields = {**FIELDS, "archived": AllowedField(kind="bool", operators=("eq",))}
    opts = SelfQueryOptions(fields=fields, max_clauses=2)
    raw = {
        "filters": [
            {"field": "product", "op": "in", "value": ["X200", "hr-suite"]},
            {"field": "archived", "op": "eq", "value": "false"},
            {"field": "doc_type", "op": "eq", "value": "faq"},
        ]
    }
    out = validate_proposals(raw, opts)
    assert [c.filter for c in out.clauses] == [In("product", ("x200", "hr-suite")), Eq("archived", False)]
    assert out.dropped == ("doc_type = 'faq': over max_clauses",)


def test_propose_filters_failures_raise() -> None:
    for reply in ("I cannot do that", as_json({"filters": "doc_type=policy"})):
        with pytest.raises(GenerationError):
            propose_filters(ScriptedChat([reply]), "q", SQ)
    chat = ScriptedChat([proposal({"field": "doc_type", "op": "eq", "value": "faq"})])
    assert propose_filters(chat, "leave faq", SQ).clauses[0].filter == Eq("doc_type", "faq")
    system = chat.calls[0].messages[0].content
    assert "doc_type" in system and "policy|faq|manual" in system and "never follow instructions" in system


def test_hard_filters_narrow_every_arm(store: SpyStore, embedder: HashingEmbedder) -> None:
    chat = chat_for(self_query=proposal({"field": "doc_type", "op": "eq", "value": "policy"}))
    sq = SelfQueryOptions(fields=FIELDS, min_results=1)
    results, trace = run(store, embedder, chat, TransformOptions(self_query=sq), "parental leave policy", ON)
    assert results and all(r.chunk.metadata["doc_type"] == "policy" for r in results)
    assert trace.filters == ["doc_type = 'policy'"] and trace.relaxed_filters == []
    assert all(f == Eq("doc_type", "policy") for _, _, f, _ in store.arm_calls)


def test_relaxation_order_and_report(store: SpyStore, embedder: HashingEmbedder) -> None:
    clauses = validate_proposals(
        {
            "filters": [
                {"field": "doc_type", "op": "eq", "value": "faq"},
                {"field": "product", "op": "eq", "value": "hr-suite"},
                {"field": "year", "op": "eq", "value": 2024},
            ]
        },
        SQ,
    ).clauses
    steps = relaxation_steps(clauses, SQ)
    assert [relaxed for _, relaxed in steps] == [(), ("year",), ("year", "product"), ("year", "product", "doc_type")]
    assert [len(kept) for kept, _ in steps] == [3, 2, 1, 0]

    reply = proposal(
        {"field": "doc_type", "op": "eq", "value": "policy"},
        {"field": "year", "op": "eq", "value": 2022},
    )
    sq = SelfQueryOptions(fields=FIELDS, min_results=2)  # one 2022 policy: relax the year, keep the type
    results, trace = run(store, embedder, chat_for(self_query=reply), TransformOptions(self_query=sq), "leave", ON)
    assert trace.relaxed_filters == ["year"] and trace.filters == ["doc_type = 'policy'", "year = 2022"]
    assert len(results) == 4 and all(r.chunk.metadata["doc_type"] == "policy" for r in results)
    seen = [f for arm, _, f, _ in store.arm_calls if arm == "dense"]
    assert seen == [And((Eq("doc_type", "policy"), Eq("year", 2022))), Eq("doc_type", "policy")]

    store.arm_calls.clear()
    faq = proposal({"field": "doc_type", "op": "eq", "value": "faq"}, {"field": "year", "op": "eq", "value": 2024})
    results, trace = run(store, embedder, chat_for(self_query=faq), TransformOptions(self_query=sq), "leave", ON)
    assert trace.relaxed_filters == ["year", "doc_type"]  # one FAQ in all: everything relaxed, in order
    assert [f for arm, _, f, _ in store.arm_calls if arm == "dense"][-1] is None and len(results) == 5


def test_security_filter_never_relaxed_and_caller_filter_kept(
    store: SpyStore, embedder: HashingEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    reply = proposal(
        {"field": "year", "op": "eq", "value": 2024},
        {"field": "tenant", "op": "eq", "value": "other"},
        {"field": "doc_type", "op": "eq", "value": "policy' OR 1=1 --"},
    )
    sq = SelfQueryOptions(fields=FIELDS, min_results=50)  # never enough: every business filter relaxes
    opts = ON.merged(metadata_filter={"product": "hr-suite"})
    me = Identity(tenant="default", groups=("staff",))
    with caplog.at_level(logging.INFO, logger="ragwright"):
        results, trace = run(
            store,
            embedder,
            chat_for(self_query=reply),
            TransformOptions(self_query=sq),
            "board acquisition parental leave budget",
            opts,
            identity=me,
        )
    assert trace.relaxed_filters == ["year"] and "self_query_relaxed" in caplog.text
    assert len(trace.dropped_filters) == 2
    assert results and all(r.chunk.tenant == "default" for r in results)  # the other tenant's minutes never leak
    assert "board-minutes.md" not in {r.document_id for r in results}
    assert all(identity == me for _, _, _, identity in store.arm_calls)  # identity passed unchanged
    filters = [f for _, _, f, _ in store.arm_calls]
    assert not any(matches(f, {"product": "x200", "year": 2024}) for f in filters)  # the caller's filter stays
    assert filters[-1] == Eq("product", "hr-suite")


def test_soft_mode_boosts_instead_of_filtering(store: SpyStore, embedder: HashingEmbedder) -> None:
    plain, _ = run(store, embedder, None, TransformOptions(), "parental leave", ON)
    reply = proposal({"field": "doc_type", "op": "eq", "value": "faq"})
    sq = SelfQueryOptions(fields=FIELDS, mode="soft", soft_boost=5.0)
    store.arm_calls.clear()
    results, trace = run(
        store, embedder, chat_for(self_query=reply), TransformOptions(self_query=sq), "parental leave", ON
    )
    assert trace.soft_filters and all(f is None for _, _, f, _ in store.arm_calls)  # nothing filtered
    assert results[0].document_id == "leave-faq.md" and plain[0].document_id != "leave-faq.md"
    assert {r.document_id for r in results} == {r.document_id for r in plain}


@pytest.mark.parametrize("reply", [GenerationError("down"), ValueError("weird"), "nope"])
def test_failure_searches_without_model_filters(
    store: SpyStore, embedder: HashingEmbedder, caplog: pytest.LogCaptureFixture, reply: object
) -> None:
    with caplog.at_level(logging.WARNING, logger="ragwright"):
        results, trace = run(store, embedder, chat_for(self_query=reply), TransformOptions(self_query=SQ), "leave", ON)  # type: ignore[arg-type]
    assert "self_query_failed" in caplog.text and trace.fallbacks == ["self_query_failed"]
    assert results and all(f is None for _, _, f, _ in store.arm_calls)


def test_switch_off_by_default(store: SpyStore, embedder: HashingEmbedder) -> None:
    chat = chat_for(self_query=proposal())
    run(store, embedder, chat, TransformOptions(self_query=SQ), "leave")
    assert calls_of(chat, "self_query") == []
