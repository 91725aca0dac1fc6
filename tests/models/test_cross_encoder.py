"""Cross-encoder reranker: tiny BERT cross-encoders built here, checked against a numpy forward pass."""

from __future__ import annotations

import itertools
import json
import math
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragwright.errors import ConfigError, MissingDependencyError
from ragwright.model.chunk import Chunk
from ragwright.model.results import ArmHit, SearchResult
from ragwright.models.rerankers import CrossEncoderReranker, load_reranker
from ragwright.postprocess.rerank import Reranker, rerank

SRC = Path(__file__).resolve().parents[2] / "src"
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
_WORD_LIST = """
gold silver river mountain city forest ocean desert winter summer cat dog bird fish tree stone road bridge house
tower king queen knight castle sword shield fire water earth wind light dark red blue green white black north south
east west old new small large fast slow where is the what how
"""
WORDS = _WORD_LIST.split()
VOCAB = {w: i for i, w in enumerate(SPECIALS + WORDS)}
H, LAYERS, HEADS, INTER, POSITIONS = 16, 2, 2, 32, 64


# -- building tiny cross-encoders ----------------------------------------------------------------


def _tokenizer_json(path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    tok = Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", VOCAB["[CLS]"]), ("[SEP]", VOCAB["[SEP]"])],
    )
    tok.save(str(path))


def _config(labels: int, **extra: Any) -> dict[str, Any]:
    return {
        "architectures": ["BertForSequenceClassification"],
        "model_type": "bert",
        "hidden_size": H,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "intermediate_size": INTER,
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": POSITIONS,
        "type_vocab_size": 2,
        "vocab_size": len(VOCAB),
        "id2label": {str(i): f"LABEL_{i}" for i in range(labels)},
        **extra,
    }


def _random_tensors(labels: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)

    def r(*shape: int, scale: float = 0.3) -> Any:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    t = {
        "embeddings.word_embeddings.weight": r(len(VOCAB), H),
        "embeddings.position_embeddings.weight": r(POSITIONS, H),
        "embeddings.token_type_embeddings.weight": r(2, H),
        "embeddings.LayerNorm.weight": 1 + r(H, scale=0.1),
        "embeddings.LayerNorm.bias": r(H, scale=0.1),
        "pooler.dense.weight": r(H, H),
        "pooler.dense.bias": r(H),
    }
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for name, (rows, cols) in {
            "attention.self.query": (H, H),
            "attention.self.key": (H, H),
            "attention.self.value": (H, H),
            "attention.output.dense": (H, H),
            "intermediate.dense": (INTER, H),
            "output.dense": (H, INTER),
        }.items():
            t[p + name + ".weight"], t[p + name + ".bias"] = r(rows, cols), r(rows)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            t[p + ln + ".weight"], t[p + ln + ".bias"] = 1 + r(H, scale=0.1), r(H, scale=0.1)
    return {f"bert.{k}": v for k, v in t.items()} | {"classifier.weight": r(labels, H), "classifier.bias": r(labels)}


def _keyword_tensors(keyword: str = "gold") -> dict[str, Any]:
    """A model whose score rises with the share of *keyword* tokens in the pair.

    Every token embeds to the same zero-mean pattern, the keyword adds +a/-a on dims 0/1; attention
    is uniform (zero Q/K), so [CLS] takes in the mean of the sequence; the classifier reads
    dim 0 - dim 1.  Feed-forward blocks are zero, so each layer is LN(x + mean(x)).
    """
    z, eye = np.zeros, np.eye(H, dtype=np.float32)
    base = np.array([0, 0] + [1, -1] * 7, dtype=np.float32)
    words = np.tile(base, (len(VOCAB), 1))
    words[VOCAB[keyword], :2] = [4.0, -4.0]
    t = {
        "embeddings.word_embeddings.weight": words,
        "embeddings.position_embeddings.weight": z((POSITIONS, H), np.float32),
        "embeddings.token_type_embeddings.weight": z((2, H), np.float32),
        "embeddings.LayerNorm.weight": np.ones(H, np.float32),
        "embeddings.LayerNorm.bias": z(H, np.float32),
        "pooler.dense.weight": eye,
        "pooler.dense.bias": z(H, np.float32),
    }
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for name, w in {
            "attention.self.query": z((H, H), np.float32),
            "attention.self.key": z((H, H), np.float32),
            "attention.self.value": eye,
            "attention.output.dense": eye,
            "intermediate.dense": z((INTER, H), np.float32),
            "output.dense": z((H, INTER), np.float32),
        }.items():
            t[p + name + ".weight"], t[p + name + ".bias"] = w, z(w.shape[0], np.float32)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            t[p + ln + ".weight"], t[p + ln + ".bias"] = np.ones(H, np.float32), z(H, np.float32)
    classifier = z((1, H), np.float32)
    classifier[0, :2] = [1.0, -1.0]
    return {f"bert.{k}": v for k, v in t.items()} | {
        "classifier.weight": classifier,
        "classifier.bias": z(1, np.float32),
    }


def _hf_folder(folder: Path, tensors: dict[str, Any], config: dict[str, Any]) -> Path:
    st = pytest.importorskip("safetensors.numpy")
    folder.mkdir(parents=True, exist_ok=True)
    st.save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(config))
    _tokenizer_json(folder / "tokenizer.json")
    return folder


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def _cache_env(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGWRIGHT_CACHE_DIR", str(cache))


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, Any], dict[str, Any]]]:
    root = tmp_path_factory.mktemp("models")
    out = {}
    for name, tensors, cfg in (
        ("random-1", _random_tensors(1, seed=1), _config(1)),
        ("random-2", _random_tensors(2, seed=2), _config(2)),
        ("keyword", _keyword_tensors(), _config(1)),
    ):
        out[name] = (_hf_folder(root / name, tensors, cfg), tensors, cfg)
    return out


# -- the independent reference: BERT + pooler + classifier in float64 numpy ------------------------


def _ln(x: Any, g: Any, b: Any, eps: float = 1e-12) -> Any:
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * g + b


def _reference_ids(query: str, passage: str, max_length: int) -> tuple[list[int], list[int]]:
    q = [VOCAB.get(w, 1) for w in query.split()]
    p = [VOCAB.get(w, 1) for w in passage.split()][: max_length - len(q) - 3]
    ids = [VOCAB["[CLS]"], *q, VOCAB["[SEP]"], *p, VOCAB["[SEP]"]]
    return ids, [0] * (len(q) + 2) + [1] * (len(p) + 1)


def _reference_score(tensors: dict[str, Any], ids: list[int], types: list[int]) -> float:
    erf = np.vectorize(math.erf)
    t = {k.removeprefix("bert."): v.astype(np.float64) for k, v in tensors.items()}
    n, hd = len(ids), H // HEADS
    x = t["embeddings.word_embeddings.weight"][ids] + t["embeddings.position_embeddings.weight"][:n]
    x = _ln(
        x + t["embeddings.token_type_embeddings.weight"][types],
        *(t[f"embeddings.LayerNorm.{s}"] for s in ("weight", "bias")),
    )
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."

        def lin(v: Any, name: str, p: str = p) -> Any:
            return v @ t[p + name + ".weight"].T + t[p + name + ".bias"]

        q, k, v = (lin(x, f"attention.self.{s}").reshape(n, HEADS, hd) for s in ("query", "key", "value"))
        scores = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(hd)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        ctx = np.einsum("hqk,khd->qhd", probs, v).reshape(n, -1)
        x = _ln(
            lin(ctx, "attention.output.dense") + x,
            *(t[p + f"attention.output.LayerNorm.{s}"] for s in ("weight", "bias")),
        )
        h = lin(x, "intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
        x = _ln(lin(h, "output.dense") + x, *(t[p + f"output.LayerNorm.{s}"] for s in ("weight", "bias")))
    pooled = np.tanh(x[0] @ t["pooler.dense.weight"].T + t["pooler.dense.bias"])
    logits = pooled @ t["classifier.weight"].T + t["classifier.bias"]
    return float(logits[0] if len(logits) == 1 else logits[1] - logits[0])


def _expected(tensors: dict[str, Any], query: str, passages: list[str], max_length: int) -> list[float]:
    return [_reference_score(tensors, *_reference_ids(query, p, max_length)) for p in passages]


QUERY = "where is the old castle"
PASSAGES = [
    "the castle is north of the river",
    "a small cat",
    "gold",
    "king queen knight castle sword shield fire water earth wind light dark red blue green white black "
    "north south east west old new small large fast slow tree stone road bridge house tower",  # > window
    "the old castle stands on the mountain where the king lived",
]


# -- tests ---------------------------------------------------------------------------------------


def test_import_is_cheap() -> None:
    code = (
        "import sys, ragwright.models.rerankers; "
        "print(sorted(m for m in ('numpy', 'onnxruntime', 'tokenizers', 'onnx') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=SRC)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", ["random-1", "random-2"])
def test_scores_match_numpy_reference(models: dict[str, Any], name: str) -> None:
    folder, tensors, _ = models[name]
    reranker = CrossEncoderReranker(folder, max_length=20, batch_size=2)
    assert reranker.name == f"cross-encoder:{name}"
    assert isinstance(reranker, Reranker)
    got = reranker.score(QUERY, PASSAGES)
    want = _expected(tensors, QUERY, PASSAGES, 20)
    np.testing.assert_allclose(got, want, atol=1e-4)
    assert len(set(np.round(want, 3))) == len(want)  # the pairs really score differently
    # one pair at a time (no padding) gives the same scores as padded batches
    np.testing.assert_allclose([reranker.score(QUERY, [p])[0] for p in PASSAGES], got, atol=1e-5)


def test_truncation_keeps_query_whole(models: dict[str, Any]) -> None:
    folder, tensors, _ = models["random-1"]
    reranker = CrossEncoderReranker(folder, max_length=12).load()
    enc = reranker._encode(QUERY, PASSAGES[3])
    ids, types = _reference_ids(QUERY, PASSAGES[3], 12)
    assert (enc.ids, enc.type_ids) == (ids, types) and len(ids) == 12
    assert reranker.score(QUERY, PASSAGES[3:4]) == pytest.approx([_reference_score(tensors, ids, types)], abs=1e-4)
    long_query = " ".join(WORDS[:15])  # alone longer than the window: both sides are cut, no error
    assert len(reranker._encode(long_query, "gold silver").ids) == 12
    assert math.isfinite(reranker.score(long_query, ["gold silver"])[0])


def test_builder_fused_and_plain_match_reference(models: dict[str, Any], tmp_path: Path) -> None:
    import onnxruntime as ort

    from ragwright.models.embedders.bert_onnx import build_bert_classifier_onnx

    folder, tensors, _ = models["random-2"]
    ids, types = _reference_ids(QUERY, PASSAGES[0], 64)
    feed = {"input_ids": [ids], "attention_mask": [[1] * len(ids)], "token_type_ids": [types]}
    for fused in (True, False):
        path = build_bert_classifier_onnx(folder, tmp_path / f"f{fused}.onnx", fused=fused)
        (logits,) = ort.InferenceSession(str(path)).run(None, {k: np.array(v) for k, v in feed.items()})
        assert logits.shape == (1, 2)
        assert float(logits[0, 1] - logits[0, 0]) == pytest.approx(_reference_score(tensors, ids, types), abs=1e-4)


def test_rerank_reorders_by_keyword_count(models: dict[str, Any]) -> None:
    folder, tensors, _ = models["keyword"]
    reranker = CrossEncoderReranker(folder)
    query = "where is the gold"
    counts = [0, 1, 2, 3, 4]
    texts = [" ".join(["gold"] * c + ["stone"] * (5 - c)) for c in counts]
    scores = reranker.score(query, texts)
    assert all(a < b for a, b in itertools.pairwise(scores)), scores  # monotonic in the count
    np.testing.assert_allclose(scores, _expected(tensors, query, texts, 512), atol=1e-4)

    results = [SearchResult(Chunk.create("d", t, i), 1.0 - i / 10) for i, t in enumerate(texts)]
    reranked = rerank(reranker, query, results)
    assert [r.chunk.text for r in reranked] == texts[::-1]
    assert reranked[0].arms["rerank"] == ArmHit(1, scores[-1]) and reranked[0].score == scores[-1]
    floor = rerank(reranker, query, results, min_score=scores[2])
    assert [r.chunk.text for r in floor] == texts[:1:-1]


def test_onnx_layout_gives_same_scores(models: dict[str, Any], tmp_path: Path) -> None:
    folder, _, _ = models["random-1"]
    converted = CrossEncoderReranker(folder, max_length=20)
    want = converted.score(QUERY, PASSAGES)
    export = tmp_path / "exported"
    export.mkdir()
    shutil.copyfile(converted.onnx_path, export / "model.onnx")
    shutil.copyfile(folder / "tokenizer.json", export / "tokenizer.json")
    (export / "config.json").write_text(json.dumps({"max_length": 20}))
    loaded = load_reranker(str(export), batch_size=3)
    assert isinstance(loaded, CrossEncoderReranker) and loaded.max_length == 20
    assert loaded.name == "cross-encoder:exported"
    np.testing.assert_allclose(loaded.score(QUERY, PASSAGES), want, atol=1e-6)
    (export / "config.json").unlink()  # without config.json: 512 tokens, ample for short pairs
    bare = CrossEncoderReranker(export)
    assert bare.max_length == 512
    np.testing.assert_allclose(bare.score(QUERY, PASSAGES[:3]), want[:3], atol=1e-6)


def test_conversion_is_cached(models: dict[str, Any], cache: Path) -> None:
    folder, _, _ = models["random-2"]
    first = CrossEncoderReranker(folder).onnx_path
    assert first.is_relative_to(cache / "models") and first.parent.name.startswith("random-2-cross-encoder-")
    stamp = first.stat().st_mtime_ns
    again = CrossEncoderReranker(folder).onnx_path
    assert again == first and again.stat().st_mtime_ns == stamp
    meta = json.loads((first.parent / "config.json").read_text())
    assert meta["max_length"] == POSITIONS and meta["quantized"] is False


def test_quantized_conversion(models: dict[str, Any]) -> None:
    folder, _, _ = models["random-1"]
    fp32 = CrossEncoderReranker(folder, max_length=20)
    int8 = CrossEncoderReranker(folder, max_length=20, quantize=True)
    assert int8.onnx_path != fp32.onnx_path
    np.testing.assert_allclose(int8.score(QUERY, PASSAGES), fp32.score(QUERY, PASSAGES), atol=0.05)


def test_concurrent_first_use(models: dict[str, Any]) -> None:
    folder, tensors, _ = models["random-1"]
    reranker = CrossEncoderReranker(folder, max_length=20)
    want = _expected(tensors, QUERY, PASSAGES, 20)
    results: list[list[float]] = []
    threads = [threading.Thread(target=lambda: results.append(reranker.score(QUERY, PASSAGES))) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(results) == 4
    for got in results:
        np.testing.assert_allclose(got, want, atol=1e-4)


def test_score_edge_cases(models: dict[str, Any]) -> None:
    reranker = CrossEncoderReranker(models["random-1"][0])
    assert reranker.score("anything", []) == []
    with pytest.raises(TypeError):
        reranker.score("q", "one string")
    assert "cross-encoder:random-1" in repr(reranker)


def test_folder_errors(models: dict[str, Any], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"does not exist.*model\.onnx"):
        CrossEncoderReranker(tmp_path / "missing")
    source, tensors, cfg = models["random-1"]
    no_tok = tmp_path / "no-tokenizer"
    shutil.copytree(source, no_tok)
    (no_tok / "tokenizer.json").unlink()
    with pytest.raises(ConfigError, match=r"no tokenizer\.json"):
        CrossEncoderReranker(no_tok)
    empty = tmp_path / "empty"
    empty.mkdir()
    _tokenizer_json(empty / "tokenizer.json")
    with pytest.raises(ConfigError, match=r"no model.onnx, nor config.json \+ model.safetensors"):
        CrossEncoderReranker(empty)
    encoder = _hf_folder(tmp_path / "encoder", tensors, {**cfg, "architectures": ["BertModel"]})
    with pytest.raises(ConfigError, match="not a cross-encoder"):
        CrossEncoderReranker(encoder)
    three = _hf_folder(tmp_path / "three", tensors, {**_config(3), "num_labels": 3})
    with pytest.raises(ConfigError, match="3 labels"):
        CrossEncoderReranker(three)
    roberta = _hf_folder(tmp_path / "roberta", tensors, {**cfg, "model_type": "xlm-roberta"})
    with pytest.raises(ConfigError, match="model_type"):
        CrossEncoderReranker(roberta)
    bad_onnx = tmp_path / "bad-onnx"
    bad_onnx.mkdir()
    (bad_onnx / "model.onnx").write_bytes(b"not a model")
    _tokenizer_json(bad_onnx / "tokenizer.json")
    with pytest.raises(ConfigError, match="cannot load"):
        CrossEncoderReranker(bad_onnx).load()


def test_bad_options(models: dict[str, Any]) -> None:
    folder = models["random-1"][0]
    for kwargs in ({"batch_size": 0}, {"threads": True}, {"max_length": 3}, {"max_length": POSITIONS + 1}):
        with pytest.raises(ConfigError):
            CrossEncoderReranker(folder, **kwargs)


def test_conversion_needs_convert_extra(models: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(MissingDependencyError, match=r"ragwright\[convert\]"):
        CrossEncoderReranker(models["random-1"][0])


def test_load_reranker_specs(models: dict[str, Any], tmp_path: Path) -> None:
    assert load_reranker(None) is None
    assert load_reranker("none") is None and load_reranker(" None ") is None
    reranker = load_reranker(models["keyword"][0], threads=2)
    assert isinstance(reranker, CrossEncoderReranker) and reranker.threads == 2
    for bad in ("bge-reranker", str(tmp_path / "nowhere"), "", 42):
        with pytest.raises(ConfigError, match="'none'"):
            load_reranker(bad)  # type: ignore[arg-type]
