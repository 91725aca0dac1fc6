"""Each routing rule on questions that should and should not fire it; options; the router's fallbacks."""

from __future__ import annotations

import logging

import pytest

from ragwright.errors import ConfigError
from ragwright.route import ROUTES, Router, RouterOptions
from ragwright.route.features import chitchat_kind, extract
from ragwright.route.rules import classify

#: feature → (questions that must show it, questions that must not)
CASES: dict[str, tuple[list[str], list[str]]] = {
    "chitchat": (
        [
            "hi",
            "Hello there!",
            "good morning",
            "Thanks a lot for your help!",
            "ok thanks",
            "bye",
            "how are you?",
            "Who are you?",
            "What can you do?",
            "Hi! How are you?",
            "thank you so much",
        ],
        [
            "hi, what is the notice period?",
            "Thanks — and who directed Big Stone Gap?",
            "What is your refund policy?",
            "Who are the authors of the report?",
            "help me find the travel policy",
        ],
    ),
    "corpus_scope": (
        [
            "What are the main themes across the documents?",
            "Summarise everything about supplier risk",
            "What are the key risks across all contracts?",
            "what is this collection about?",
            "Give me an overview of the whole corpus",
        ],
        [
            "What is the main entrance of the building?",
            "Which themes does chapter 3 discuss?",
            "What is the capital of France?",
        ],
    ),
    "document_scope": (
        [
            "Which documents mention auto-renewal?",
            "Which contracts have a notice period?",
            "Summarise the annual report",
            "What is this paper about?",
        ],
        ["Which year was the treaty signed?", "Who wrote the song?", "What does the contract say about notice?"],
    ),
    "arithmetic": (
        [
            "How many years apart were the two films released?",
            "What is the total revenue of both companies?",
            "How many more employees does Acme have than Globex?",
            "What is the average salary?",
            "How old was Ed Wood when Plan 9 was released?",
            "What is 12 * 7?",
        ],
        ["How many employees does Acme have?", "When was the 1990-1995 survey run?", "What does IL-6 do?"],
    ),
    "comparison": (
        [
            "Were Scott Derrickson and Ed Wood of the same nationality?",
            "Which was founded first, Acme or Globex?",
            "Compare the leave policies for staff and contractors",
            "What is the difference between BM25 and TF-IDF?",
            "Are both Cypress and Ajuga genera?",
            "Who is older, Pablo Trapero or Aleksander Ford?",
        ],
        ["Who founded Acme?", "Is tea or coffee served at the meeting?", "What year was Globex founded?"],
    ),
    "multi_part": (
        ["Who directed Big Stone Gap? Where does she live?", "Who founded Acme and when was it sold?"],
        ["Who founded Acme?", "What are salt and pepper?"],
    ),
    "relational": (
        [
            "What is the relationship between Acme and Globex?",
            "How is Adriana Trigiani related to Big Stone Gap?",
            "What connects the two treaties?",
        ],
        ["What is a relational database?", "Who is Adriana Trigiani?"],
    ),
    "multi_hop": (
        [
            "What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?",
            "The director of the romantic comedy Big Stone Gap is based in what New York city?",
            "In which city was the company that acquired Zorblax founded?",
            "What is Trigiani's husband's job?",
        ],
        [
            "What is the name of the river?",
            "Who directed Big Stone Gap?",
            "What is the capital of France?",
            "What is the number of the building?",
        ],
    ),
}


@pytest.mark.parametrize("feature", list(CASES))
def test_each_feature_fires_on_its_cues_only(feature: str) -> None:
    positives, negatives = CASES[feature]
    for q in positives:
        assert getattr(extract(q), feature) is not None, (feature, q, extract(q))
    for q in negatives:
        assert getattr(extract(q), feature) is None, (feature, q, extract(q))


def test_chitchat_kinds() -> None:
    assert chitchat_kind("Hi, who are you?") == "about_assistant"
    assert chitchat_kind("thanks!") == "thanks"
    assert chitchat_kind("bye for now") is None or chitchat_kind("bye") == "farewell"
    assert chitchat_kind("") is None


@pytest.mark.parametrize(
    ("question", "route"),
    [
        ("hello!", "none"),
        ("What are the main themes across the documents?", "graph_global"),
        ("Which documents mention auto-renewal?", "hierarchical"),
        ("How many years apart were the two films released?", "agentic"),
        ("Were Scott Derrickson and Ed Wood of the same nationality?", "agentic"),
        ("How is Adriana Trigiani related to Big Stone Gap?", "graph_local"),
        ("The director of the romantic comedy Big Stone Gap is based in what New York city?", "graph_local"),
        ("Who directed Big Stone Gap?", "hybrid"),
        ("0-dimensional biomaterials show inductive properties.", "hybrid"),
    ],
)
def test_rules_route_when_everything_is_available(question: str, route: str) -> None:
    decision = Router().decide(question)
    assert decision.route == route and decision.source == "rules"
    assert decision.reason.startswith("rules: ") and route in decision.reason


def test_unavailable_routes_give_way_to_the_next_then_hybrid() -> None:
    router = Router()
    q = "Were Scott Derrickson and Ed Wood of the same nationality?"
    d = router.decide(q, {"agentic": "no chat model"})
    assert (d.route, d.wanted) == ("graph_local", "agentic")
    assert "agentic unavailable (no chat model)" in d.reason
    d = router.decide(q, {"agentic": "no chat model", "graph_local": "no entity graph"})
    assert (
        d.route == "hybrid"
        and d.reason.endswith("→ hybrid")
        and "graph_local unavailable (no entity graph)" in d.reason
    )


def test_routes_not_allowed_resolve_to_hybrid_and_off_always_hybrid() -> None:
    only = Router(RouterOptions(routes=("hybrid", "none")))
    d = only.decide("What are the main themes across the documents?")
    assert d.route == "hybrid" and "graph_global unavailable (not in route.routes)" in d.reason
    assert only.decide("hi").route == "none"
    off = Router(RouterOptions(mode="off")).decide("hi")
    assert (off.route, off.source, off.reason) == ("hybrid", "off", "off: routing off → hybrid")


def test_every_decision_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="ragwright.route.router"):
        Router().decide("hello")
    assert any(r.getMessage().startswith("route_decided: none (rules: chitchat") for r in caplog.records)


def test_options_are_validated_early() -> None:
    assert RouterOptions().routes == ROUTES
    assert RouterOptions(routes=["agentic", "hybrid", "hybrid"]).routes == ("hybrid", "agentic")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"route\.mode"):
        RouterOptions(mode="smart")
    with pytest.raises(ConfigError, match="must include 'hybrid'"):
        RouterOptions(routes=("none", "agentic"))
    with pytest.raises(ConfigError, match=r"route\.routes"):
        RouterOptions(routes=("hybrid", "graph"))
    with pytest.raises(ConfigError, match=r"route\.routes"):
        RouterOptions(routes="hybrid")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="llm_max_tokens"):
        RouterOptions(llm_max_tokens=1)
    with pytest.raises(ConfigError, match="did you mean 'mode'"):
        RouterOptions.from_dict({"mdoe": "auto"})


def test_the_rule_table_has_a_verdict_for_no_cue() -> None:
    verdict = classify(extract("Who directed Big Stone Gap?"))
    assert verdict.routes == ("hybrid",) and verdict.feature is None


def test_a_statement_is_one_search_whatever_its_words() -> None:
    claim = extract("Varenicline monotherapy is more effective after 26 weeks compared to combination therapy.")
    assert claim.form == "statement" and claim.comparison is None and claim.present() == {}
    assert extract("Smc5/6 engagement halts the activation of Mms21.").arithmetic is None
    assert extract("The PRDM1 gene, when combined with the PRDM14 gene, plays a role?").arithmetic is None
    assert extract("main themes across all documents").corpus_scope is not None  # scope words still count
    assert extract("Big Stone Gap was directed by a woman who lives in what city?").multi_hop is not None


def test_choice_questions_and_reduced_relatives() -> None:
    assert extract("Which company is based in Kentucky, Vocelli Pizza or Fazoli's?").comparison is not None
    assert extract("What is the 1996 film written by James Gunn called?").multi_hop == "written by"
    assert extract("Which film was written by James Gunn?").multi_hop is None  # a passive verb, one lookup
