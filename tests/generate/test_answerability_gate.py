"""The answerability model gates the LLM answer: it declines before spending generation."""

import pytest

from ragwright.errors import ConfigError, GenerationError
from ragwright.generate import llm_answer
from ragwright.generate.answerability import LogisticModel
from ragwright.generate.llm_answer import LlmAnswerer
from ragwright.model.chunk import Chunk
from ragwright.model.results import RagResponse, SearchResult
from ragwright.models.embedders import default_embedder
from ragwright.options import RagOptions
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

SOURCES = [
    SearchResult(Chunk.create("ibm", "IBM was founded in 1911 as the Computing-Tabulating-Recording Company.", 0), 0.6)
]


def test_the_gate_declines_before_the_model_is_called() -> None:
    chat = ScriptedChat(default="It lives 20 years [Source 1].")
    response = LlmAnswerer(chat, embedder=default_embedder()).answer(
        "How long do ducks live in captivity?", SOURCES, RagOptions()
    )
    assert response.declined and response.decline_reason is not None
    assert response.decline_reason.startswith("answerability_")
    assert chat.calls == [] and response.answerability is not None and "answerability_s" in response.timings


def test_off_or_another_embedder_leaves_the_decision_to_the_model() -> None:
    chat = ScriptedChat(default="It lives 20 years [Source 1].")
    off = LlmAnswerer(chat, embedder=default_embedder()).answer(
        "How long do ducks live in captivity?", SOURCES, RagOptions(answerability="off")
    )
    other = LlmAnswerer(chat, embedder=HashingEmbedder()).answer("How long do ducks live?", SOURCES, RagOptions())
    assert not off.declined and not other.declined and len(chat.calls) == 2
    assert off.answerability is None and other.answerability is None


class YesNoChat(ScriptedChat):
    """A scripted chat model that also reads yes/no (the pair signal), with a fixed P(yes)."""

    def __init__(self, yes: float | Exception, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.yes, self.scored = yes, []  # type: list[str]

    def format_chat(self, messages: object) -> str:
        return "\n".join(m.content for m in messages)  # type: ignore[attr-defined]

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def truncate(self, text: str, max_tokens: int) -> str:
        return " ".join(text.split()[:max_tokens])

    def yes_probabilities(self, prompts: list[str]) -> list[float]:
        self.scored.extend(prompts)
        if isinstance(self.yes, Exception):
            raise self.yes
        return [self.yes] * len(prompts)


STACKED = LogisticModel(("lex_logit", "pair_logit"), (0.0, 0.0), (1.0, 1.0), (0.5, 1.0), 0.0, threshold=0.5)
QUESTION = "When was IBM founded?"


def answer_with(
    chat: YesNoChat, monkeypatch: pytest.MonkeyPatch, weights: LogisticModel | None, *, pair_gate: bool = True
) -> RagResponse:
    monkeypatch.setattr(llm_answer, "pair_model", lambda name: weights)
    return LlmAnswerer(chat, embedder=default_embedder(), pair_gate=pair_gate).answer(QUESTION, SOURCES, RagOptions())


def test_the_pair_gate_is_a_switch_off_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not LlmAnswerer(ScriptedChat()).pair_gate
    chat = YesNoChat(0.01, default="In 1911 [Source 1].")
    response = answer_with(chat, monkeypatch, STACKED, pair_gate=False)
    assert not response.declined and chat.scored == [] and len(chat.calls) == 1


def test_the_lexical_gate_alone_lets_this_question_through(monkeypatch: pytest.MonkeyPatch) -> None:
    chat = YesNoChat(0.01, default="In 1911 [Source 1].")
    response = answer_with(chat, monkeypatch, None)  # no pair weights for this model: lexical only
    assert not response.declined and chat.scored == [] and len(chat.calls) == 1


def test_the_chat_models_no_declines_before_generating(monkeypatch: pytest.MonkeyPatch) -> None:
    chat = YesNoChat(0.01, default="In 1911 [Source 1].")
    response = answer_with(chat, monkeypatch, STACKED)
    assert response.declined and response.decline_reason == "answerability_pair"
    assert chat.calls == [] and len(chat.scored) == 1
    assert QUESTION in chat.scored[0] and "1911" in chat.scored[0]  # the question and its best evidence
    assert response.answerability is not None and response.answerability < 0.5
    assert "answerability_pair_s" in response.timings


def test_the_chat_models_yes_lets_it_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    chat = YesNoChat(0.99, default="In 1911 [Source 1].")
    response = answer_with(chat, monkeypatch, STACKED)
    assert not response.declined and len(chat.calls) == 1
    assert response.answerability is not None and response.answerability > 0.5


def test_a_failed_pair_reading_leaves_the_decision_to_the_lexical_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    chat = YesNoChat(GenerationError("boom"), default="In 1911 [Source 1].")
    response = answer_with(chat, monkeypatch, STACKED)
    assert not response.declined and len(chat.calls) == 1 and len(chat.scored) == 1


def test_the_pair_gate_is_an_ask_option_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragwright.config.overrides import SWITCHES

    monkeypatch.setattr(llm_answer, "pair_model", lambda name: STACKED)
    chat = YesNoChat(0.01, default="In 1911 [Source 1].")
    answerer = LlmAnswerer(chat, embedder=default_embedder())  # the answerer's own switch stays off
    response = answerer.answer(QUESTION, SOURCES, RagOptions(pair_gate=True))
    assert response.declined and response.decline_reason == "answerability_pair" and len(chat.scored) == 1
    assert not answerer.answer(QUESTION, SOURCES, RagOptions()).declined  # off unless asked for
    with pytest.raises(ConfigError, match="pair_gate"):
        RagOptions(pair_gate="yes")  # type: ignore[arg-type]
    assert any(s.name == "pair_gate" for s in SWITCHES)  # ragwright ask --pair-gate, [answers] pair_gate


def test_a_pair_alone_model_lets_the_chat_models_reading_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    """The 1.5B model's weights are its P(yes) alone (it read the training pairs better than the stack):
    a model over ``pair_logit`` only, cut at its own threshold, whatever the lexical probability."""
    from ragwright.generate.pair import load_pair_models

    alone = LogisticModel(("pair_logit",), (0.0,), (1.0,), (1.0,), 0.0, threshold=0.59)
    declined = answer_with(YesNoChat(0.55, default="In 1911 [Source 1]."), monkeypatch, alone)
    assert declined.declined and declined.decline_reason == "answerability_pair"
    assert declined.answerability == pytest.approx(0.55)
    assert not answer_with(YesNoChat(0.65, default="In 1911 [Source 1]."), monkeypatch, alone).declined
    shipped = load_pair_models()
    variants = {(m.meta or {}).get("variant", "stacked"): m.features for m in shipped.values()}
    assert variants.get("pair alone") == ("pair_logit",)  # the 1.5B model's entry
