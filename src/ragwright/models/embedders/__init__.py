"""Dense embedders: the :class:`Embedder` protocol and the offline implementations.

* :class:`OnnxEmbedder` — all-MiniLM-L6-v2 int8 on onnxruntime (the default), or any BERT-style
  model folder (ONNX, or Hugging Face safetensors converted once into the user cache);
* :class:`WordLlamaEmbedder` — a static 256-d embedder, very fast, for tests and huge corpora.

Importing this package is cheap: numpy, onnxruntime, tokenizers and wordllama load on first use.
"""

from __future__ import annotations

import os
from pathlib import Path

from ragwright.errors import ConfigError
from ragwright.models.embedders.base import Embedder
from ragwright.models.embedders.onnx import OnnxEmbedder
from ragwright.models.embedders.static import WordLlamaEmbedder

__all__ = ["Embedder", "OnnxEmbedder", "WordLlamaEmbedder", "default_embedder", "load_embedder"]

_DEFAULT_SPECS = ("default", "minilm", "all-minilm-l6-v2")
_STATIC_SPECS = ("wordllama", "static")


def default_embedder(threads: int = 1) -> OnnxEmbedder:
    """The shipped default: all-MiniLM-L6-v2, int8 ONNX, 384-d (``OnnxEmbedder.default()``)."""
    return OnnxEmbedder.default(threads=threads)


def load_embedder(spec: str, *, threads: int = 1) -> Embedder:
    """Build an embedder from a short spec.

    ``"default"`` / ``"minilm"`` → the shipped MiniLM; ``"wordllama"`` → the static embedder;
    a path to a folder → :meth:`OnnxEmbedder.from_directory` (ONNX folder or HF BERT folder).
    Anything else raises :class:`ConfigError` naming the accepted values.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError.invalid("embedder", spec, _accepted())
    key = spec.strip()
    if key.lower() in _DEFAULT_SPECS:
        return OnnxEmbedder.default(threads=threads)
    if key.lower() in _STATIC_SPECS:
        return WordLlamaEmbedder()
    path = Path(os.path.expanduser(key))
    if path.is_dir():
        return OnnxEmbedder.from_directory(path, threads=threads)
    if path.exists() or os.sep in key or key.startswith((".", "~")):
        raise ConfigError.invalid("embedder", spec, f"no model folder there; {_accepted()}")
    raise ConfigError.invalid("embedder", spec, _accepted())


def _accepted() -> str:
    return (
        "use 'default' (or 'minilm'), 'wordllama', or the path of a model folder "
        "(ONNX with tokenizer.json and config.json, or a Hugging Face BERT folder with "
        "model.safetensors)"
    )
