"""Random BERT weights in the Hugging Face layout (two encoder layers), for tests that build small ONNX
encoders: the embedder tests and late chunking with an encoder unlike MiniLM."""

from __future__ import annotations

from typing import Any

import numpy as np


def random_bert(
    rng: np.random.Generator, hidden: int, inter: int, vocab: int, positions: int, scale: float
) -> dict[str, Any]:
    """The tensors of a 2-layer BERT (names without the ``bert.`` prefix), normal with *scale*."""

    def r(*shape: int) -> Any:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    h = hidden
    tensors = {
        "embeddings.word_embeddings.weight": r(vocab, h),
        "embeddings.position_embeddings.weight": r(positions, h),
        "embeddings.token_type_embeddings.weight": r(2, h),
        "embeddings.LayerNorm.weight": 1 + r(h),
        "embeddings.LayerNorm.bias": r(h),
    }
    for i in range(2):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            tensors[p + f"attention.self.{name}.weight"] = r(h, h)
            tensors[p + f"attention.self.{name}.bias"] = r(h)
        tensors[p + "attention.output.dense.weight"] = r(h, h)
        tensors[p + "attention.output.dense.bias"] = r(h)
        tensors[p + "intermediate.dense.weight"] = r(inter, h)
        tensors[p + "intermediate.dense.bias"] = r(inter)
        tensors[p + "output.dense.weight"] = r(h, inter)
        tensors[p + "output.dense.bias"] = r(h)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[p + ln + ".weight"] = 1 + r(h)
            tensors[p + ln + ".bias"] = r(h)
    return tensors
