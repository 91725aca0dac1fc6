"""Rerankers: local cross-encoders that rescore (query, passage) pairs.

:class:`CrossEncoderReranker` runs any local cross-encoder folder (ONNX, or a Hugging Face BERT
folder converted once into the user cache) on onnxruntime; it satisfies
:class:`ragwright.postprocess.rerank.Reranker`.  No PyPI package ships cross-encoder weights, so
there is no default: reranking is off unless a folder is given.

Importing this package is cheap: numpy, onnxruntime and tokenizers load on first use.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ragwright.errors import ConfigError
from ragwright.models.rerankers.cross_encoder import CrossEncoderReranker, convert_cross_encoder

__all__ = ["CrossEncoderReranker", "convert_cross_encoder", "load_reranker"]

_OFF = "none"


def load_reranker(spec: str | os.PathLike[str] | None, **options: Any) -> CrossEncoderReranker | None:
    """Build a reranker from a short spec.

    ``None`` or ``"none"`` → ``None`` (reranking off); the path of a folder →
    :class:`CrossEncoderReranker` (``options`` such as ``max_length``, ``batch_size``, ``threads``
    and ``quantize`` are passed on).  Anything else raises :class:`ConfigError` naming the accepted
    values.
    """
    if spec is None:
        return None
    if isinstance(spec, str) and spec.strip().lower() == _OFF:
        return None
    if isinstance(spec, str | os.PathLike) and str(spec).strip():
        folder = Path(spec).expanduser()
        if folder.is_dir():
            return CrossEncoderReranker(folder, **options)
    raise ConfigError.invalid(
        "reranker",
        spec,
        f"{_OFF!r} (reranking off) or the path of an existing local cross-encoder folder "
        "(ONNX: model.onnx + tokenizer.json; Hugging Face: config.json + model.safetensors + tokenizer.json)",
    )
