"""Late chunking with a local BERT-style ONNX embedder other than the shipped MiniLM (issue 26 item 2:
"for any local BERT-style ONNX embedder").

The encoder here shares nothing with MiniLM but the architecture: a random 2-layer BERT (hidden 24), its
own word-level vocabulary, RoBERTa-style special tokens (``<s>`` id 1 and ``</s>`` id 2, not ``[CLS]`` 101
and ``[SEP]`` 102), no ``token_type_ids`` input and a 24-token window, built with ragwright's BERT→ONNX
builder and loaded from its folder as a user's ``--embedder PATH`` would be. Token outputs are checked
against onnxruntime run directly on the model file, not through the embedder."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from ragwright.chunk import make_chunker
from ragwright.chunk.late import LateChunkEmbedder
from ragwright.model.chunk import Chunk
from ragwright.model.records import DocumentStatus
from ragwright.models.embedders import OnnxEmbedder
from ragwright.options import ChunkingOptions
from ragwright.stores.sqlite import SqliteStore
from tests.bert_weights import random_bert

WINDOW = 24  # max_seq_length, special tokens included: 22 tokens of text a window
HIDDEN = 24
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]
SENTENCES = [
    "The harbour crane lifts containers from the ship",
    "Its operator works a night shift twice a week",
    "Cargo waits in the yard until the trucks arrive",
    "Customs officers inspect one box in twenty",
    "Each inspection takes about forty minutes",
    "Rejected boxes return to the ship for repacking",
    "The port closes when the wind is above sixty knots",
    "A storm last winter kept it closed for three days",
]
_WORD = re.compile(r"\w+")


def _vocabulary() -> list[str]:
    words = sorted({w.lower() for s in SENTENCES for w in _WORD.findall(s)} | {"crane", "storm", "pump"})
    return [*SPECIALS, *words]


def _tokenizer(path: Path) -> None:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {w: i for i, w in enumerate(_vocabulary())}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", vocab["<s>"]), ("</s>", vocab["</s>"])]
    )
    tok.save(str(path))


def _bert_checkpoint(folder: Path) -> Path:
    """A random BERT in the Hugging Face layout, mean pooling (sentence-transformers' 1_Pooling)."""
    st = pytest.importorskip("safetensors.numpy")
    folder.mkdir(parents=True)
    h, inter, vocab = HIDDEN, 48, len(_vocabulary())
    tensors = random_bert(np.random.default_rng(7), h, inter, vocab, positions=64, scale=0.2)
    st.save_file(tensors, str(folder / "model.safetensors"))
    config = {
        "model_type": "bert",
        "hidden_size": h,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "intermediate_size": inter,
        "hidden_act": "gelu",
        "max_position_embeddings": 64,
        "vocab_size": vocab,
    }
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": WINDOW}))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_mean_tokens": True}))
    _tokenizer(folder / "tokenizer.json")
    return folder


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _bert_checkpoint(tmp_path_factory.mktemp("harbour") / "harbour-bert")


@pytest.fixture(scope="module")
def onnx_folder(checkpoint: Path) -> Path:
    """The checkpoint as a ready ONNX embedder folder (float32, standard operators only)."""
    from ragwright.models.embedders.bert_onnx import build_bert_onnx

    folder = checkpoint.parent / "harbour-onnx"
    folder.mkdir()
    build_bert_onnx(checkpoint, folder / "model.onnx", fused=False)
    (folder / "tokenizer.json").write_bytes((checkpoint / "tokenizer.json").read_bytes())
    config = {"name": "test/harbour-bert", "dimension": HIDDEN, "max_seq_length": WINDOW, "pooling": "mean"}
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def hidden_states(folder: Path, ids: list[int]) -> Any:
    """The encoder's last hidden state for ``<s> ids </s>``, straight from onnxruntime (rows 1..n: the text)."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    row = np.asarray([[1, *ids, 2]], dtype=np.int64)
    return session.run(None, {"input_ids": row, "attention_mask": np.ones_like(row)})[0][0]


def word_ids(text: str) -> list[int]:
    index = {w: i for i, w in enumerate(_vocabulary())}
    return [index.get(w.lower(), 3) for w in _WORD.findall(text)]


def unit(v: Any) -> Any:
    return v / np.linalg.norm(v)


def test_the_window_and_the_special_tokens_come_from_the_model_folder(onnx_folder: Path) -> None:
    embedder = OnnxEmbedder.from_directory(onnx_folder)
    assert embedder.max_tokens == WINDOW - 2 and embedder.dimension == HIDDEN
    ids, offsets = embedder.tokenize("The crane lifts")
    assert ids == word_ids("The crane lifts") and offsets == [(0, 3), (4, 9), (10, 15)]  # no <s>, </s>
    late = LateChunkEmbedder(embedder)
    assert late.window == WINDOW - 2 and late.overlap == (WINDOW - 2) // 4
    assert "+late/1:22/5" in make_chunker(embedder, ChunkingOptions(late_chunking=True)).fingerprint


def test_within_one_window_each_chunk_is_the_mean_of_its_rows_in_the_whole_document(onnx_folder: Path) -> None:
    embedder = OnnxEmbedder.from_directory(onnx_folder)
    texts = SENTENCES[:2]  # 8 + 9 tokens: one window
    chunks = [Chunk.create("d", t, i) for i, t in enumerate(texts)]
    vectors = LateChunkEmbedder(embedder).embed(chunks)
    first, second = word_ids(texts[0]), word_ids(texts[1])
    rows = hidden_states(onnx_folder, first + second)[1:-1]
    np.testing.assert_allclose(vectors[0], unit(rows[: len(first)].mean(axis=0)), atol=1e-5)
    np.testing.assert_allclose(vectors[1], unit(rows[len(first) :].mean(axis=0)), atol=1e-5)
    # the second chunk's vector carries the first's context: not what the chunk alone encodes to
    alone = hidden_states(onnx_folder, second)[1:-1]
    assert float(vectors[1] @ unit(alone.mean(axis=0))) < 0.999


def test_a_document_longer_than_the_window_is_read_in_overlapping_windows(onnx_folder: Path) -> None:
    embedder = OnnxEmbedder.from_directory(onnx_folder)
    seen: list[int] = []
    encode = embedder.token_embeddings

    def recording(ids: Any) -> Any:
        seen.append(len(ids))
        return encode(ids)

    embedder.token_embeddings = recording  # type: ignore[method-assign]
    chunks = [Chunk.create("d", t, i) for i, t in enumerate(SENTENCES)]
    total = sum(len(word_ids(t)) for t in SENTENCES)
    assert total > 3 * (WINDOW - 2)
    vectors = LateChunkEmbedder(embedder).embed(chunks)
    assert len(seen) >= 4 and max(seen) == WINDOW - 2  # never more than the model's window
    assert sum(seen) > total  # neighbouring windows share tokens
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # the first chunk lies inside the part of the first window that window contributes
    ids = [i for t in SENTENCES for i in word_ids(t)]
    rows = hidden_states(onnx_folder, ids[: WINDOW - 2])[1:-1]
    n = len(word_ids(SENTENCES[0]))
    np.testing.assert_allclose(vectors[0], unit(rows[:n].mean(axis=0)), atol=1e-5)


@pytest.mark.slow
def test_a_hugging_face_folder_ingests_with_late_chunking_through_the_cli(
    checkpoint: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--embedder PATH`` to a BERT checkpoint (converted to int8 ONNX once) and ``--late-chunking``."""
    from ragwright.cli import main

    monkeypatch.setenv("RAGWRIGHT_CACHE_DIR", str(tmp_path / "cache"))
    docs = tmp_path / "docs"
    docs.mkdir()
    body = "\n\n".join(f"## Part {i}\n\n{s}." for i, s in enumerate(SENTENCES))
    (docs / "port.md").write_text(f"# Port\n\n{body}\n")
    flags = ["--json", "--store", str(tmp_path / "s.db"), "--embedder", str(checkpoint)]
    result = CliRunner().invoke(main, [*flags, "ingest", str(docs), "--late-chunking"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["added"] == 1 and report["failed"] == [] and report["chunks"] >= 2

    embedder = OnnxEmbedder.from_directory(checkpoint)  # the cached conversion
    assert embedder.max_tokens == WINDOW - 2
    store = SqliteStore(tmp_path / "s.db")
    (record,) = store.list_records(DocumentStatus.INDEXED)
    stored = store.document_chunks(record.document_id)
    assert len(stored) == report["chunks"]
    expected = LateChunkEmbedder(embedder).embed(stored)  # the vectors the CLI must have stored
    vectors = store.get_vectors([c.id for c in stored])
    for chunk, vector in zip(stored, expected, strict=True):
        np.testing.assert_allclose(vectors[chunk.id], vector, atol=1e-6)
    plain = embedder.embed_documents([c.text_for_embedding for c in stored])
    assert any(float(a @ b) < 0.999 for a, b in zip(expected, plain, strict=True))  # not the plain vectors
    store.close()
    out = CliRunner().invoke(main, [*flags, "search", "customs inspection", "--top-k", "3"], catch_exceptions=False)
    assert out.exit_code == 0 and json.loads(out.stdout)["results"]
