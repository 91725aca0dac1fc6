"""The shipped embedder, chat-model and reranker conformance suites run over the shipped implementations.

Embedders: the test double, MiniLM (ONNX int8, the default) and WordLlama. Chat models: the scripted
double (honouring limits) and, slow, the local Qwen2.5-Coder-0.5B. Rerankers: a cross-encoder folder
(the tiny keyword model of test_cross_encoder), the pointwise LLM reranker over a yes/no scorer double
and, slow, over the local 0.5B, and the listwise LLM reranker over a scripted chat model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from ragwright.models.embedders import OnnxEmbedder, WordLlamaEmbedder
from ragwright.models.llms.base import Message
from ragwright.models.rerankers import CrossEncoderReranker, LlmListwiseReranker, LlmPointwiseReranker
from ragwright.testing.chat import ChatModelConformance
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat
from ragwright.testing.embedders import EmbedderConformance
from ragwright.testing.rerankers import RerankerConformance
from tests.models.test_cross_encoder import _config, _hf_folder, _keyword_tensors
from tests.models.test_llm_rerankers import FakeScorer

COUNTING = ", ".join(str(i) for i in range(1, 31))


# -- embedders -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> OnnxEmbedder:
    return OnnxEmbedder.default().load()


@pytest.fixture(scope="module")
def wordllama() -> WordLlamaEmbedder:
    return WordLlamaEmbedder().load()


class TestHashingEmbedder(EmbedderConformance):
    batch_tolerance = 0.0

    @pytest.fixture
    def embedder(self) -> HashingEmbedder:
        return HashingEmbedder()


class TestMiniLM(EmbedderConformance):
    @pytest.fixture
    def embedder(self, minilm: OnnxEmbedder) -> OnnxEmbedder:
        return minilm


class TestWordLlama(EmbedderConformance):
    batch_tolerance = 1e-6

    @pytest.fixture
    def embedder(self, wordllama: WordLlamaEmbedder) -> WordLlamaEmbedder:
        return wordllama


# -- chat models ---------------------------------------------------------------------------------


class TestScriptedChat(ChatModelConformance):
    @pytest.fixture
    def chat(self) -> ScriptedChat:
        return ScriptedChat(lambda messages: COUNTING, honour_limits=True)


def test_scripted_chat_replies_whole_unless_asked_to_honour_limits() -> None:
    chat = ScriptedChat(lambda messages: COUNTING)
    assert chat.chat([Message("user", "count")], max_tokens=2, stop=[", 5"]).text == COUNTING
    assert "".join(chat.stream([Message("user", "count")], max_tokens=2)) == COUNTING


@pytest.fixture(scope="module")
def local_llm() -> Iterator[Any]:
    from ragwright.models.llms import load_chat
    from ragwright.models.llms.local import LlamaCppChat

    chat = load_chat("local:0.5b", n_ctx=1024)
    assert isinstance(chat, LlamaCppChat)
    yield chat.load()


@pytest.mark.slow
class TestLocalChat(ChatModelConformance):
    @pytest.fixture
    def chat(self, local_llm: Any) -> Any:
        return local_llm


# -- rerankers -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def keyword_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CrossEncoderReranker]:
    root = tmp_path_factory.mktemp("conformance-cross-encoder")
    folder = _hf_folder(root / "keyword", _keyword_tensors(), _config(1))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGWRIGHT_CACHE_DIR", str(root / "cache"))  # the converted ONNX goes there
        yield CrossEncoderReranker(folder).load()


class TestCrossEncoder(RerankerConformance):
    # The keyword model reads a small vocabulary; its score rises with the share of "gold" in the pair.
    query = "where is the gold"
    relevant = "the gold is in the old castle"
    irrelevant = ("the dog is in the forest", "a small red bird on the bridge")

    @pytest.fixture
    def reranker(self, keyword_cross_encoder: CrossEncoderReranker) -> CrossEncoderReranker:
        return keyword_cross_encoder


class TestPointwiseLlmReranker(RerankerConformance):
    @pytest.fixture
    def reranker(self) -> LlmPointwiseReranker:
        return LlmPointwiseReranker(FakeScorer())


@pytest.mark.slow
class TestPointwiseLocalLlmReranker(RerankerConformance):
    tolerance = 0.02  # the reused KV prefix shifts a probability by a hair

    @pytest.fixture
    def reranker(self, local_llm: Any) -> LlmPointwiseReranker:
        return LlmPointwiseReranker(local_llm)


def _rank_by_overlap(messages: list[Message]) -> str:
    """A listwise ranking from the prompt: passages by shared words with the query, ties by text."""
    user = messages[-1].content
    query = set(re.findall(r"\w+", user.split("Query: ", 1)[1].split("\n", 1)[0].lower()))
    listed = re.findall(r"^\[(\d+)\] (.*)$", user, re.M)
    order = sorted(listed, key=lambda item: (-len(query & set(re.findall(r"\w+", item[1].lower()))), item[1]))
    return '{"ranking": [' + ", ".join(number for number, _ in order) + "]}"


class TestListwiseLlmReranker(RerankerConformance):
    pointwise = False  # a listwise ranking gives each listed passage its own place

    @pytest.fixture
    def reranker(self) -> LlmListwiseReranker:
        return LlmListwiseReranker(ScriptedChat(_rank_by_overlap))


def test_the_suites_catch_a_broken_reranker() -> None:
    """A reranker that scores positions instead of passages fails the suite's position check."""

    class ByPosition:
        name = "by-position"

        def score(self, query: str, passages: Any) -> list[float]:
            return [float(-i) for i in range(len(passages))]

    with pytest.raises(AssertionError):
        RerankerConformance().test_scores_follow_the_passages_not_their_positions(ByPosition())


def test_the_suites_catch_an_embedder_whose_batch_differs() -> None:
    """An embedder whose vectors depend on the batch fails the batch check."""

    class BatchDependent(HashingEmbedder):
        def embed_documents(self, texts: Any) -> Any:
            out = super().embed_documents(texts)
            if len(texts) > 1:
                out[:, 0] += 0.1
            return out

    with pytest.raises(AssertionError):
        EmbedderConformance().test_a_batch_equals_one_by_one(BatchDependent())


def test_the_suites_catch_a_chat_model_ignoring_stop() -> None:
    with pytest.raises(AssertionError):
        ChatModelConformance().test_stop_ends_the_reply_before_the_stop_string(ScriptedChat(lambda m: COUNTING))
