"""OpenAICompatEmbedder against a scripted local HTTP server (no network)."""

from __future__ import annotations

import numpy as np
import pytest

from ragwright.errors import ConfigError, RetrievalError
from ragwright.models.embedders.base import Embedder
from ragwright.models.embedders.openai_compat import OpenAICompatEmbedder
from tests.models.fake_http import FakeServer, Reply


def vectors_for(texts: list[str]) -> dict[str, object]:
    # Deterministic 3-d vectors, returned in *reverse* order with indexes (clients must sort by index).
    data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]} for i, t in enumerate(texts)]
    return {"data": list(reversed(data)), "model": "m"}


def embedder(server: FakeServer, **kwargs: object) -> OpenAICompatEmbedder:
    options: dict[str, object] = {"base_url": server.url, "api_key": "k", "backoff": 0.0}
    options.update(kwargs)
    return OpenAICompatEmbedder("emb-model", **options)  # type: ignore[arg-type]


def test_batches_orders_and_normalises(fake_server: FakeServer) -> None:
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    fake_server.script(
        Reply(body=vectors_for(texts[:2])), Reply(body=vectors_for(texts[2:4])), Reply(body=vectors_for(texts[4:]))
    )
    emb = embedder(fake_server, batch_size=2, document_prefix="passage: ")
    matrix = emb.embed_documents(texts)
    assert isinstance(emb, Embedder)  # after the first answer: on Python 3.11 isinstance reads .dimension
    assert matrix.shape == (5, 3) and matrix.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, rtol=1e-6)
    expected = np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(matrix, expected, rtol=1e-6)
    assert [r.body["input"] for r in fake_server.requests] == [
        ["passage: a", "passage: bb"],
        ["passage: ccc", "passage: dddd"],
        ["passage: eeeee"],
    ]
    assert all(r.path == "/embeddings" and r.headers["authorization"] == "Bearer k" for r in fake_server.requests)
    assert emb.dimension == 3  # learnt from the first answer, no extra request
    assert len(fake_server.requests) == 3


def test_query_dimension_request_and_name(fake_server: FakeServer) -> None:
    fake_server.script(Reply(body={"data": [{"index": 0, "embedding": [3.0, 4.0]}]}))
    emb = embedder(fake_server, dimension=2, request_dimensions=True, query_prefix="query: ")
    np.testing.assert_allclose(emb.embed_query("q"), [0.6, 0.8], rtol=1e-6)
    assert fake_server.requests[0].body == {"model": "emb-model", "input": ["query: q"], "dimensions": 2}
    assert emb.name.startswith("openai-compat:emb-model:2")
    assert emb.embed_documents([]).shape == (0, 2)
    assert emb.count_tokens("abcdef") >= 2


def test_wrong_answers_raise(fake_server: FakeServer) -> None:
    fake_server.script(Reply(body={"data": [{"index": 0, "embedding": [1.0, 0.0]}]}))
    with pytest.raises(RetrievalError, match="1 vectors for 2 texts"):
        embedder(fake_server).embed_documents(["a", "b"])
    with pytest.raises(RetrievalError, match="expected 5"):
        embedder(fake_server, dimension=5).embed_documents(["a"])
    fake_server.script(Reply(body={"oops": True}))
    with pytest.raises(RetrievalError, match="unexpected"):
        embedder(fake_server).embed_query("a")


def test_retry_then_success_and_exhaustion(fake_server: FakeServer) -> None:
    fake_server.script(Reply(502, {"error": "gateway"}), Reply(body={"data": [{"index": 0, "embedding": [1.0]}]}))
    assert embedder(fake_server).embed_query("a").tolist() == [1.0]
    fake_server.script(Reply(500, {"error": "down"}))
    with pytest.raises(RetrievalError, match="HTTP 500"):
        embedder(fake_server, max_retries=1).embed_query("a")


def test_configuration_is_checked() -> None:
    with pytest.raises(ConfigError):
        OpenAICompatEmbedder("", base_url="http://127.0.0.1:1")
    with pytest.raises(ConfigError, match="dimension"):
        OpenAICompatEmbedder("m", base_url="http://127.0.0.1:1", request_dimensions=True)
