"""The agent loop: answers under the citation contract, caps under adversarial scripts, repeats, trajectory."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import count

import pytest

from ragwright.agent import AgentLoop, AgentOptions, AgentTools
from ragwright.agent.actions import action_schema
from ragwright.errors import ConfigError, GenerationError
from ragwright.model.identity import Identity
from ragwright.model.results import SearchResult
from ragwright.rag import Rag
from ragwright.rag_agent import enable_agent
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat
from tests.agent.conftest import ACME, act

Q = "Where does the director of Big Stone Gap live?"
NO_FIRST = AgentOptions(first_search=False)  # scripts that start from nothing


def test_a_two_hop_answer_is_cited_and_traced(rag: Rag) -> None:
    chat = ScriptedChat(
        [
            act("search", "director of Big Stone Gap"),
            act("search", "Adriana Trigiani lives"),
            act("answer", "Adriana Trigiani directed it [Source 1]; she lives in Greenwich Village [Source 2]."),
        ]
    )
    response = enable_agent(rag, llm=chat).ask(Q, identity=ACME)
    assert not response.declined and not response.uncited and response.mode == "agent"
    cited = {c.document_id for c in response.citations}
    assert "Greenwich Village" in response.answer and cited <= {s.document_id for s in response.sources}
    assert [s["tool"] for s in response.trajectory] == ["search", "search", "search"]
    seed, first = response.trajectory[0], response.trajectory[1]
    assert seed["note"] == "first_search" and seed["arguments"] == {"query": Q} and seed["round"] == 0
    assert first["arguments"] == {"input": "director of Big Stone Gap"} and first["result_ids"]
    assert first["tokens"]["prompt"] > 0 and first["tokens"]["result"] > 0
    assert response.usage["llm_calls"] == 3 and response.usage["tool_calls"] == 3
    assert response.retrieval_path == "agent: search → search → search"
    assert response.to_dict()["trajectory"][1]["tool"] == "search"
    assert "A first search for the question found:\n[Source 1]" in chat.calls[0].last_user
    # the JSON path: every turn asked for the action schema (the local model's grammar)
    assert chat.calls[0].kwargs["json_schema"] == action_schema(("search", "fetch", "calculate"))


def test_invalid_and_uncited_answers_are_flagged_like_ask(rag: Rag) -> None:
    agent = enable_agent(rag)
    agent.llm = ScriptedChat([act("search", "Big Stone Gap film"), act("answer", "It is a comedy film [Source 7].")])
    response = agent.ask("What is Big Stone Gap?", identity=ACME)
    assert response.invalid_citations == (7,)
    # as in ask: an answer left without a valid citation is cited with the sources holding its words
    assert [c.document_id for c in response.citations] == ["film.md"] and response.answer.endswith("[Source 1]")
    agent.llm = ScriptedChat(
        [act("search", "Big Stone Gap film"), act("answer", "The moon is made of cheese and rock.")]
    )
    response = agent.ask("What is Big Stone Gap?", identity=ACME)
    assert response.uncited and not response.citations and not response.declined


def test_the_model_declining_is_a_decline(rag: Rag) -> None:
    chat = ScriptedChat(
        [act("search", "Big Stone Gap"), act("answer", "I cannot find the answer in the provided documents.")]
    )
    response = enable_agent(rag, llm=chat).ask("Who won the 1990 cup?", identity=ACME)
    assert response.declined and response.decline_reason == "model_insufficient_context"


def test_an_answer_before_any_search_is_sent_back_then_declined(rag: Rag) -> None:
    chat = ScriptedChat([act("answer", "Paris [Source 1]."), act("answer", "Paris [Source 1].")])
    response = enable_agent(rag, NO_FIRST, llm=chat).ask(Q, identity=ACME)
    assert response.declined and response.decline_reason == "agent_no_evidence" and response.sources == ()
    assert "Search first" in chat.calls[1].last_user


def test_without_a_chat_model_the_agent_refuses_naming_the_flag(rag: Rag) -> None:
    with pytest.raises(ConfigError, match="--llm local"):
        enable_agent(rag).ask(Q)


def test_calculator_and_invalid_actions_are_steps(rag: Rag) -> None:
    chat = ScriptedChat(
        [
            "not json at all",
            act("calculate", "1200 * 3"),
            act("calculate", "__import__('os').system('true')"),
            act("search", "travel budget per engineer"),
            act("answer", "Three engineers get 3600 dollars [Source 1]."),
        ]
    )
    opts = AgentOptions(max_rounds=6, first_search=False)
    response = enable_agent(rag, opts, llm=chat).ask("What is the travel budget of three engineers?", identity=ACME)
    tools = [s["tool"] for s in response.trajectory]
    assert tools == ["invalid", "calculate", "calculate", "search"]
    assert "1200 * 3 = 3600" in chat.calls[2].last_user
    assert response.trajectory[2]["note"] == "error" and "not allowed" in chat.calls[3].last_user
    assert not response.declined and response.citations


# -- caps under adversarial scripts ------------------------------------------------------------------------


def always_new_search() -> ScriptedChat:
    """The adversary: every turn asks for one more (different) search, never answers."""
    n = count()
    return ScriptedChat(lambda messages: act("search", f"Big Stone Gap director variant {next(n)}"))


def test_rounds_cap_stops_an_endless_searcher_with_an_honest_partial_answer(rag: Rag) -> None:
    chat = always_new_search()
    opts = AgentOptions(max_rounds=3, max_tool_calls=10)
    response = enable_agent(rag, opts, llm=chat).ask(Q, identity=ACME)
    assert len(chat.calls) == 4  # 3 tool turns + the one last answer turn (which it wasted on JSON)
    stop = response.trajectory[-1] if response.trajectory[-1]["tool"] == "stop" else None
    stops = [s for s in response.trajectory if s["tool"] == "stop"]
    assert stops and stops[0]["reason"] == "agent_cap_rounds" and stops[0]["rounds"] == 3
    assert stop is not None or any(s.get("note") in ("final_turn", "extractive") for s in response.trajectory)
    if response.declined:
        assert response.decline_reason == "agent_cap_rounds"
    else:  # quoted from the evidence, and says it is partial
        assert "Partial answer" in response.answer and "3 tool turns" in response.answer and response.citations
    assert "(stopped: agent_cap_rounds)" in (response.retrieval_path or "")


def test_tool_call_cap(rag: Rag) -> None:
    chat = always_new_search()
    response = enable_agent(rag, AgentOptions(max_rounds=10, max_tool_calls=2), llm=chat).ask(Q, identity=ACME)
    stop = next(s for s in response.trajectory if s["tool"] == "stop")
    assert stop["reason"] == "agent_cap_tool_calls" and stop["tool_calls"] == 2
    assert sum(s["tool"] == "search" for s in response.trajectory) == 2
    assert response.declined is False or response.decline_reason == "agent_cap_tool_calls"


def test_token_cap_is_never_passed_by_the_loop(rag: Rag) -> None:
    chat = always_new_search()
    opts = AgentOptions(max_rounds=30, max_tool_calls=60, max_tokens=1500, step_tokens=64)
    response = enable_agent(rag, opts, llm=chat).ask(Q, identity=ACME)
    stop = next(s for s in response.trajectory if s["tool"] == "stop")
    assert stop["reason"] == "agent_cap_tokens"
    assert response.usage["agent_tokens"] <= 1500
    assert response.declined is False or response.decline_reason == "agent_cap_tokens"
    if not response.declined:  # no model turn was left: quoted extractively
        assert "budget of 1500 tokens" in response.answer and response.citations


def test_a_token_flood_stops_the_loop(rag: Rag) -> None:
    flood = act("search", "Big Stone Gap " + "flood " * 20_000)
    chat = ScriptedChat(lambda messages: flood)  # ignores max_tokens like a broken backend
    response = enable_agent(rag, AgentOptions(max_tokens=8000), llm=chat).ask(Q, identity=ACME)
    assert len(chat.calls) == 1
    stop = next(s for s in response.trajectory if s["tool"] == "stop")
    assert stop["reason"] == "agent_cap_tokens"
    assert response.usage["agent_tokens"] > 8000  # counted honestly, and nothing more was sent
    assert response.declined is False or response.decline_reason == "agent_cap_tokens"


def test_repeated_searches_are_not_run_again_and_end_the_loop(rag: Rag) -> None:
    searches: list[str] = []

    async def search(query: str, who: Identity, k: int) -> Sequence[SearchResult]:
        searches.append(query)
        return await rag.asearch(query, identity=who, top_k=k)

    chat = ScriptedChat(lambda messages: act("search", "Big Stone Gap director"))
    variants = ScriptedChat(
        [
            act("search", "Big Stone Gap director"),
            act("search", "director, Big Stone Gap!"),
            act("search", "big STONE gap director"),
        ],
        default=act("answer", "Adriana Trigiani directed it [Source 1]."),
    )
    tools = AgentTools(ACME, search, rag.store)
    response = run_loop(chat, tools, AgentOptions(max_rounds=8, max_repeats=2, first_search=False))
    assert searches == ["Big Stone Gap director"]  # run once
    notes = [s.get("note") for s in response.trajectory if s["tool"] == "search"]
    assert notes == [None, "repeated", "repeated"]
    assert "already searched" in chat.calls[2].last_user
    assert next(s for s in response.trajectory if s["tool"] == "stop")["reason"] == "agent_repeated_search"
    searches.clear()
    response = run_loop(variants, AgentTools(ACME, search, rag.store), AgentOptions(max_repeats=3, first_search=False))
    assert searches == ["Big Stone Gap director"]  # punctuation, case and order do not make a new search
    assert not response.declined and response.citations


def test_no_evidence_at_a_cap_is_a_decline() -> None:
    async def nothing(query: str, who: Identity, k: int) -> Sequence[SearchResult]:
        return []

    n = count()
    chat = ScriptedChat(lambda messages: act("search", f"anything {next(n)}"))
    response = run_loop(chat, AgentTools(ACME, nothing), AgentOptions(max_rounds=2))
    assert response.declined and response.decline_reason == "agent_cap_rounds" and response.sources == ()
    assert "no passage was found" in response.answer


def test_a_failing_model_stops_with_what_was_found(rag: Rag) -> None:
    chat = ScriptedChat([act("search", "Big Stone Gap film"), GenerationError("server down")])
    response = run_loop(
        chat, enable_agent(rag).tools_for(ACME), AgentOptions(), embedder=HashingEmbedder(max_tokens=64)
    )
    assert next(s for s in response.trajectory if s["tool"] == "stop")["reason"] == "agent_model_error"
    assert response.sources and (response.declined is False or response.decline_reason == "agent_model_error")


def run_loop(chat: ScriptedChat, tools: AgentTools, options: AgentOptions, **kwargs: object) -> object:
    from ragwright._sync import run_sync

    return run_sync(AgentLoop(chat, tools, options, **kwargs).run(Q))  # type: ignore[arg-type]


def test_old_tool_results_are_shortened_to_fit_the_context(rag: Rag) -> None:
    chat = always_new_search()
    opts = AgentOptions(max_rounds=5, max_tool_calls=10, context_tokens=500)
    response = enable_agent(rag, opts, llm=chat).ask(Q, identity=ACME)
    last = chat.calls[4].messages  # the fifth turn: four searches' results before it
    assert any("(shortened to save room" in m.content for m in last)
    assert "[Source 1]" in "\n".join(m.content for m in last)  # the labels stay, citable
    turns = [s["tokens"]["prompt"] for s in response.trajectory if s["tool"] == "search" and s["round"] > 0]
    assert max(turns) <= 500 + 250  # the newest result is never cut: the prompt stays near the budget


def test_verify_answer_runs_the_groundedness_judge(rag: Rag) -> None:
    from ragwright.options import RagOptions

    judge_no = '{"supported": false, "unsupported_claims": ["it won an Oscar"]}'
    chat = ScriptedChat([act("answer", "Big Stone Gap won an Oscar [Source 1]."), judge_no])
    agent = enable_agent(rag, llm=chat)
    response = agent.ask("What is Big Stone Gap?", identity=ACME, rag_options=RagOptions(verify_answer=True))
    assert response.declined and response.decline_reason == "unsupported_after_verification"
    assert response.usage["llm_calls"] == 2 and "supported" in chat.calls[1].messages[0].content
    chat = ScriptedChat([act("answer", "Big Stone Gap is a comedy film [Source 1]."), '{"supported": true}'])
    agent.llm = chat
    response = agent.ask("What is Big Stone Gap?", identity=ACME, rag_options=RagOptions(verify_answer=True))
    assert not response.declined and response.verified is True
