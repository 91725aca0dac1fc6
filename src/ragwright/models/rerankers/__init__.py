"""Rerankers: models that rescore (query, passage) pairs.

:class:`CrossEncoderReranker` runs any local cross-encoder folder (ONNX, or a Hugging Face BERT
folder converted once into the user cache) on onnxruntime; it satisfies
:class:`ragwright.postprocess.rerank.Reranker`.  No PyPI package ships cross-encoder weights, so
there is no default: reranking is off unless a folder is given.

:class:`LlmPointwiseReranker` (yes/no logits of the local LLM, ``"llm"``) and
:class:`LlmListwiseReranker` (a JSON ranking from any chat model) rerank with a language model;
:class:`HostedReranker` calls a Cohere-style ``/rerank`` endpoint (``"hosted:MODEL@URL"``, opt-in).

Importing this package is cheap: numpy, onnxruntime and tokenizers load on first use.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ragwright.errors import ConfigError
from ragwright.models.rerankers.cross_encoder import CrossEncoderReranker, convert_cross_encoder
from ragwright.models.rerankers.hosted import HostedReranker
from ragwright.models.rerankers.llm import LlmListwiseReranker, LlmPointwiseReranker

__all__ = [
    "CrossEncoderReranker",
    "HostedReranker",
    "LlmListwiseReranker",
    "LlmPointwiseReranker",
    "convert_cross_encoder",
    "load_reranker",
]

_OFF = "none"
_LLM = {"llm": "local:1.5b", "llm:1.5b": "local:1.5b", "llm:0.5b": "local:0.5b"}
AnyReranker = CrossEncoderReranker | LlmPointwiseReranker | HostedReranker


def _llm_reranker(model_spec: str, options: dict[str, Any]) -> LlmPointwiseReranker:
    """The pointwise LLM reranker; ``chat=`` reuses a loaded local model, ``threads``/``n_ctx`` configure a new one."""
    chat = options.pop("chat", None)
    chat_options = {"n_threads": options.pop("threads", 1)}
    if "n_ctx" in options:
        chat_options["n_ctx"] = options.pop("n_ctx")
    if chat is None:
        from ragwright.models.llms import load_chat

        chat = load_chat(model_spec, **chat_options)
    return LlmPointwiseReranker(chat, **options)


def load_reranker(spec: str | os.PathLike[str] | None, **options: Any) -> AnyReranker | None:
    """Build a reranker from a short spec.

    ``None`` or ``"none"`` → ``None`` (reranking off); ``"llm"`` / ``"llm:1.5b"`` / ``"llm:0.5b"`` →
    :class:`LlmPointwiseReranker` on the local LLM (extra ``llm`` / ``llm-small``; ``chat=`` reuses
    a loaded :class:`~ragwright.models.llms.local.LlamaCppChat`); ``"hosted:MODEL@URL"`` →
    :class:`HostedReranker`; the path of a folder → :class:`CrossEncoderReranker` (``options`` such
    as ``max_length``, ``batch_size``, ``threads`` and ``quantize`` are passed on).  Anything else
    raises :class:`ConfigError` naming the accepted values.
    """
    if spec is None:
        return None
    if isinstance(spec, str) and spec.strip().lower() == _OFF:
        return None
    if isinstance(spec, str) and spec.strip().lower() in _LLM:
        return _llm_reranker(_LLM[spec.strip().lower()], dict(options))
    if isinstance(spec, str) and spec.strip().lower().startswith("hosted:"):
        model, _, url = spec.strip()[len("hosted:") :].partition("@")
        if not model.strip() or not url.strip():
            raise ConfigError.invalid(
                "reranker", spec, "'hosted:MODEL@URL', e.g. 'hosted:rerank-v3.5@https://api.cohere.com/v2'"
            )
        return HostedReranker(model.strip(), url.strip(), **options)
    if isinstance(spec, str | os.PathLike) and str(spec).strip():
        folder = Path(spec).expanduser()
        if folder.is_dir():
            return CrossEncoderReranker(folder, **options)
    raise ConfigError.invalid(
        "reranker",
        spec,
        f"{_OFF!r} (reranking off), 'llm' / 'llm:0.5b' (the local LLM, pip install 'ragwright[llm]'), "
        "'hosted:MODEL@URL' (a Cohere-style /rerank endpoint), or the path of an existing local cross-encoder folder "
        "(ONNX: model.onnx + tokenizer.json; Hugging Face: config.json + model.safetensors + tokenizer.json)",
    )
