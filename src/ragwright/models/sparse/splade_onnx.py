"""Build a SPLADE ONNX graph from a ``BertForMaskedLM`` safetensors checkpoint, without torch.

The encoder is the graph of :mod:`ragwright.models.embedders.bert_onnx`; on top of it sits the MLM
head (``transform.dense`` → exact GELU → LayerNorm → decoder tied to the word embeddings + bias),
then the SPLADE pooling. Since ``log1p`` and ``relu`` are monotone, ``max_t log1p(relu(logit_t))``
equals ``log1p(relu(max_t logit_t))``: the graph returns the per-term maximum of the logits over the
attended tokens (``max_logits``, ``[batch, vocab]``, padding excluded) and the caller applies
``log1p(relu(·))`` in float64, exactly, on a vector 30k wide instead of a ``[seq, vocab]`` tensor.
Needs the ``convert`` extra (``onnx`` and ``safetensors``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from ragwright.errors import ConfigError
from ragwright.models.embedders.bert_onnx import (  # the shared BERT graph pieces
    _OPSET,
    _additive_mask,
    _embeddings,
    _encoder_layer,
    _GraphBuilder,
    _load_tensors,
    _save_model,
    read_bert_config,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["build_splade_onnx", "normalise_tensor_names"]

_PRODUCER = "ragwright.splade_onnx"


def normalise_tensor_names(tensors: dict[str, npt.NDArray[np.float32]]) -> dict[str, npt.NDArray[np.float32]]:
    """Older checkpoints name LayerNorm parameters ``gamma``/``beta``; the builder reads ``weight``/``bias``."""
    out = {}
    for key, value in tensors.items():
        if key.endswith(".gamma"):
            key = key[: -len("gamma")] + "weight"
        elif key.endswith(".beta"):
            key = key[: -len("beta")] + "bias"
        out[key] = value
    return out


def build_splade_onnx(model_dir: Path, out: Path) -> Path:
    """Write the float32 SPLADE graph of the ``BertForMaskedLM`` checkpoint in *model_dir* to *out*.

    Inputs ``input_ids`` and ``attention_mask`` (int64, ``[batch, seq]``); output ``max_logits``
    (float32, ``[batch, vocab]``). Standard ONNX operators only (portable attention).
    """
    model_dir = Path(model_dir)
    cfg = read_bert_config(model_dir)
    tensors = normalise_tensor_names(_load_tensors(model_dir))
    if "cls.predictions.transform.dense.weight" not in tensors:
        raise ConfigError(f"{model_dir} has no MLM head (cls.predictions.*); expected a BertForMaskedLM checkpoint")
    gb = _GraphBuilder(tensors)
    onnx, np = gb.onnx, gb.np
    helper, tp = onnx.helper, onnx.TensorProto
    word_table = gb.weight("embeddings.word_embeddings.weight")
    vocab = int(word_table.shape[0])

    x = _embeddings(gb, cfg)
    maskf = gb.node("Cast", ["attention_mask"], "mask/Cast", to=tp.FLOAT)
    mask = _additive_mask(gb, maskf)
    for i in range(cfg.layers):
        x = _encoder_layer(gb, x, mask, i, cfg, False)

    # MLM head: dense → GELU (exact) → LayerNorm → decoder (word embeddings transposed) + bias.
    h = gb.linear(x, "cls.predictions.transform.dense", "head.transform")
    erf = gb.node(
        "Erf",
        [gb.node("Div", [h, gb.init("head.sqrt2", np.array(math.sqrt(2.0), dtype=np.float32))], "head.gelu/Div")],
        "head.gelu/Erf",
    )
    g = gb.node("Mul", [h, gb.node("Add", [erf, "const.one"], "head.gelu/Add")], "head.gelu/Mul")
    g = gb.node("Mul", [g, gb.init("head.half", np.array(0.5, dtype=np.float32))], "head.gelu/Mul_half")
    g = gb.layer_norm(g, "cls.predictions.transform.LayerNorm", "head.norm", cfg.eps)
    decoder = gb.weight("cls.predictions.decoder.weight") if "cls.predictions.decoder.weight" in tensors else word_table
    bias_key = "cls.predictions.decoder.bias" if "cls.predictions.decoder.bias" in tensors else "cls.predictions.bias"
    # Padding never wins the max: a padded position takes the hidden state of its row's first token
    # (on [batch, seq, hidden], cheap), so its logits repeat ones already in the max. The decoder bias
    # is the same for every token, so it is added after the max, on [batch, vocab].
    keep = gb.node("Unsqueeze", [maskf, gb.init("const.last_axis", np.array([2], dtype=np.int64))], "pool/Unsqueeze")
    first = gb.node("Gather", [g, "const.zero_1d"], "pool/first_token", axis=1)
    g = gb.node(
        "Add",
        [
            gb.node("Mul", [g, keep], "pool/keep"),
            gb.node("Mul", [first, gb.node("Sub", ["const.one", keep], "pool/Sub")], "pool/fill"),
        ],
        "pool/Add",
    )
    logits = gb.node("MatMul", [g, gb.init("head.decoder", np.ascontiguousarray(decoder.T))], "head.decoder/MatMul")
    pooled = gb.node("ReduceMax", [logits, "const.one_1d"], "pool/ReduceMax", keepdims=0)
    pooled = gb.node("Add", [pooled, gb.init("head.bias", gb.weight(bias_key))], "head.decoder/Add")
    gb.nodes.append(helper.make_node("Identity", [pooled], ["max_logits"], name="output/Identity"))

    graph = helper.make_graph(
        gb.nodes,
        "splade",
        [
            helper.make_tensor_value_info("input_ids", tp.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", tp.INT64, ["batch", "sequence"]),
        ],
        [helper.make_tensor_value_info("max_logits", tp.FLOAT, ["batch", vocab])],
        initializer=gb.inits,
    )
    # ReduceMax takes its axes as an input from opset 18 on.
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", max(_OPSET, 18))], producer_name=_PRODUCER, producer_version="1"
    )
    return _save_model(gb, model, out)
