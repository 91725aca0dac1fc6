"""The agent's tools: identity bound outside the model, fetch re-checks access, the calculator is safe."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragwright._sync import run_sync
from ragwright.agent import AgentOptions, AgentTools, Evidence
from ragwright.agent.calculator import CalculatorError, calculate
from ragwright.agent.tools import NOT_AVAILABLE, normalise_query
from ragwright.errors import ConfigError
from ragwright.model.identity import Identity
from ragwright.rag import Rag
from ragwright.rag_agent import enable_agent
from ragwright.testing.doubles import ScriptedChat
from tests.agent.conftest import ACME, act

WIDEN = {"tenant": "globex", "groups": ["*", "board"], "filter": {"tenant": "globex"}, "identity": "admin"}


def test_search_ignores_every_argument_that_would_widen_access(rag: Rag) -> None:
    tools = enable_agent(rag).tools_for(ACME)
    evidence = Evidence()
    for probe in ("quuxplan Globex Springfield", "zorblax merger board"):
        obs = run_sync(tools.run("search", {"query": probe, **WIDEN}, evidence))
        assert obs.ignored == ["filter", "groups", "identity", "tenant"]
        assert "Access is fixed" in obs.text
    docs = {r.document_id for r in evidence.results}
    assert docs and not docs & {"globex.md", "minutes.md"}
    assert "quuxplan" not in " ".join(r.chunk.text for r in evidence.results)


def test_the_model_cannot_reach_another_tenant_through_the_loop(rag: Rag) -> None:
    chat = ScriptedChat(
        [
            act("search", "quuxplan Globex factory", tenant="globex", groups=["*"]),
            act("fetch", "globex.md", tenant="globex"),
            act("answer", "The factory moves to Springfield [Source 1]."),
        ]
    )
    response = enable_agent(rag, llm=chat).ask("Where does the Globex factory move?", identity=ACME)
    assert all(s.document_id not in ("globex.md", "minutes.md") for s in response.sources)
    assert response.trajectory[1]["ignored_arguments"] == ["groups", "tenant"]
    assert response.trajectory[2]["note"] == "not_found"
    assert all(r.chunk.tenant == "acme" for r in response.sources)


def test_fetch_of_a_hidden_chunk_or_document_reads_like_a_missing_one(rag: Rag) -> None:
    hidden = rag.store.document_chunks("minutes.md")[0].id
    other = rag.store.document_chunks("globex.md")[0].id
    tools = enable_agent(rag).tools_for(ACME)
    for ref in (hidden, other, "minutes.md", "globex.md", "no-such-id", "99"):
        obs = run_sync(tools.run("fetch", {"id": ref, **WIDEN}, Evidence()))
        assert obs.text.startswith(NOT_AVAILABLE) and obs.result_ids == [] and obs.note == "not_found"
    board = enable_agent(rag).tools_for(Identity("acme", ("board",)))
    assert run_sync(board.run("fetch", {"id": hidden}, Evidence())).result_ids == [hidden]


def test_fetch_by_source_number_reads_the_passage_and_its_visible_neighbours(rag: Rag) -> None:
    tools = AgentTools(ACME, enable_agent(rag).tools_for(ACME)._search, rag.store, options=AgentOptions())
    evidence = Evidence()
    run_sync(tools.run("search", {"query": "Greenwich Village author"}, evidence))
    first = evidence.results[0].chunk.id
    obs = run_sync(tools.run("fetch", {"input": "[Source 1]"}, evidence))
    assert first in obs.result_ids and "(already shown above)" in obs.text
    obs = run_sync(tools.run("fetch", {"input": evidence.results[0].document_id}, evidence))
    assert obs.result_ids and obs.note is None


def test_the_caller_is_the_bound_identity_whatever_the_arguments(rag: Rag) -> None:
    tools = enable_agent(rag).tools_for(ACME)
    assert tools.caller(WIDEN) == ACME and tools.identity == ACME
    assert tools.names == ("search", "fetch", "calculate")  # no graph on this Rag


def test_unknown_tools_and_missing_arguments_are_reported_not_raised(rag: Rag) -> None:
    tools = enable_agent(rag).tools_for(ACME)
    assert run_sync(tools.run("delete", {"id": "x"}, Evidence())).note == "error"
    assert run_sync(tools.run("graph", {"entity": "x"}, Evidence())).note == "error"  # no graph here
    obs = run_sync(tools.run("search", {"tenant": "globex"}, Evidence()))
    assert obs.note == "error" and "needs 'query'" in obs.text


def test_normalised_queries() -> None:
    assert normalise_query("Director, Big  Stone GAP!") == normalise_query("big stone gap director director")
    assert normalise_query("a b") != normalise_query("a c")


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("1 + 2 * 3", 7),
        ("(1990 - 1969) * 2", 42),
        ("2 ** 10", 1024),
        ("7 // 2 + 7 % 2", 4),
        ("-3 + +4", 1),
        ("sqrt(16) + abs(-2)", 6.0),
        ("max(3, 9, 4) - min(2, 5)", 7),
        ("round(2 / 3, 2)", 0.67),
        ("1,200 * 3", 3600),
        ("2^3", 8),
        ("pi * 0", 0.0),
    ],
)
def test_calculator_computes_arithmetic(expression: str, value: float) -> None:
    assert calculate(expression) == pytest.approx(value)


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('echo hacked')",
        "open('/etc/passwd').read()",
        "().__class__.__bases__[0].__subclasses__()",
        "eval('1+1')",
        "x + 1",
        "'a' * 3",
        "[1, 2, 3]",
        "lambda: 1",
        "9 ** 9 ** 9",
        "10 ** 400",
        "1 / 0",
        "1e308 * 10",
        "sqrt(-1)",
        "round(1, ndigits=2)",
        "1 + " * 60 + "1",
        "",
        "True + 1",
        "(1).__class__",
    ],
)
def test_calculator_refuses_everything_else(expression: str) -> None:
    with pytest.raises(CalculatorError):
        calculate(expression)


def test_options_are_validated_with_the_field_named() -> None:
    assert AgentOptions().max_rounds == 4
    for bad in (
        {"max_rounds": 0},
        {"max_tokens": 10},
        {"tool_mode": "magic"},
        {"max_rounds": True},
        {"step_tokens": 900, "max_tokens": 800},
        {"temperature": 3.0},
    ):
        with pytest.raises(ConfigError, match="agent\\."):
            AgentOptions(**bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="did you mean 'max_rounds'"):
        AgentOptions.from_dict({"max_round": 3})


def test_graph_lookup_runs_as_the_bound_identity(tmp_path: Path) -> None:
    from ragwright.graph import GraphOptions
    from ragwright.sources import BytesSource
    from ragwright.stores.sqlite import SqliteStore
    from ragwright.testing.doubles import HashingEmbedder
    from tests.agent.conftest import AUTHOR, FILM

    secret = b"# Board minutes\n\nAdriana Trigiani secretly acquired Zorblax Holdings in Geneva."
    rag = Rag(SqliteStore(tmp_path / "g.db"), HashingEmbedder(max_tokens=64), graph=GraphOptions(merge_similarity=None))
    rag.ingest(BytesSource({"film.md": FILM, "author.md": AUTHOR}), tenant="acme")
    rag.ingest(BytesSource({"minutes.md": secret}), tenant="acme", acl=["board"])
    tools = enable_agent(rag).tools_for(Identity("acme"))
    assert "graph" in tools.names
    evidence = Evidence()
    obs = run_sync(tools.run("graph", {"entity": "Adriana Trigiani", **WIDEN}, evidence))
    assert obs.result_ids and "minutes.md" not in {r.document_id for r in evidence.results}
    assert "Zorblax" not in obs.text and "Geneva" not in obs.text
    assert "Relations:" in obs.text and "[Source" in obs.text
    found = Evidence()
    hidden = run_sync(tools.run("graph", {"entity": "Zorblax Holdings", **WIDEN}, found))
    assert "minutes.md" not in {r.document_id for r in found.results}
    assert "Geneva" not in hidden.text and "secretly" not in hidden.text
    rag.close()
