"""The answerability model gates the LLM answer: it declines before spending generation."""

from ragwright.generate.llm_answer import LlmAnswerer
from ragwright.model.chunk import Chunk
from ragwright.model.results import SearchResult
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
