"""Late chunking with an ONNX embedder folder whose graph pools its own output (2-D `sentence_embedding`, no
token rows) is refused when the chunker is made, with a message that says what to change — not
dead-lettered document by document at the embed stage."""

import json
import shutil
from pathlib import Path

import pytest

from ragwright.chunk import make_chunker
from ragwright.errors import ConfigError
from ragwright.models.embedders import OnnxEmbedder
from ragwright.options import ChunkingOptions
from tests.chunk.test_late_other_encoders import HIDDEN, _bert_checkpoint


def test_a_graph_that_pools_its_output_is_refused_for_late_chunking(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    from ragwright.models.embedders.bert_onnx import build_bert_onnx

    checkpoint = _bert_checkpoint(tmp_path / "ck")
    folder = tmp_path / "pooled"
    folder.mkdir()
    model = onnx.load(str(build_bert_onnx(checkpoint, tmp_path / "enc.onnx", fused=False)))
    model.graph.node.append(
        helper.make_node("ReduceMean", ["last_hidden_state"], ["sentence_embedding"], axes=[1], keepdims=0)
    )
    del model.graph.output[:]
    model.graph.output.append(helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["b", HIDDEN]))
    onnx.save(model, str(folder / "model.onnx"))
    shutil.copy(checkpoint / "tokenizer.json", folder / "tokenizer.json")
    (folder / "config.json").write_text(json.dumps({"name": "pooled", "dimension": HIDDEN, "max_seq_length": 24}))
    embedder = OnnxEmbedder(folder)
    assert embedder.embed_documents(["the crane"]).shape == (1, HIDDEN)  # fine as a plain embedder
    with pytest.raises(ConfigError, match="late chunking"):
        make_chunker(embedder, ChunkingOptions(late_chunking=True))
