"""Cross-encoder reranker on onnxruntime + tokenizers (no torch, no network).

A cross-encoder reads the query and a passage together (``[CLS] query [SEP] passage [SEP]``, token
types 0 and 1) and returns a relevance logit.  No PyPI package ships one, so
:class:`CrossEncoderReranker` loads a folder the user has, in one of two layouts:

* **ONNX**: ``model.onnx`` (or ``onnx/model.onnx``; inputs ``input_ids``, ``attention_mask`` and
  optionally ``token_type_ids``; output logits ``[batch, 1]`` or ``[batch, 2]``) + ``tokenizer.json``,
  optionally ``config.json`` with ``max_length``;
* **Hugging Face**: ``config.json`` (a ``BertForSequenceClassification``, 1 or 2 labels) +
  ``model.safetensors`` + ``tokenizer.json``, converted once to ONNX into the user cache
  (``$RAGWRIGHT_CACHE_DIR/models``, keyed by a hash of the files; needs the ``convert`` extra).

Scores are raw logits on the model's own scale: the single logit for one-label models (the
ms-marco cross-encoders), ``logit[1] - logit[0]`` (the log-odds of "relevant") for two labels.
No sigmoid is applied: it would not change the order.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragwright._deps import require
from ragwright.errors import ConfigError, MissingDependencyError
from ragwright.models.conversion import build_folder, content_key, write_config
from ragwright.models.runtime import cpu_session

__all__ = ["CrossEncoderReranker", "convert_cross_encoder"]

logger = logging.getLogger(__name__)

_EXTRA = "onnx"  # onnxruntime, tokenizers and numpy are base dependencies
_CONVERT_EXTRA = "convert"
_CACHE_FORMAT = "1"  # bump when the conversion changes, so caches are rebuilt
_HASHED_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
_ONNX_FILES = ("model.onnx", "onnx/model.onnx")
_DEFAULT_MAX_LENGTH = 512
_MIN_LENGTH = 4  # [CLS] q [SEP] p [SEP] needs at least one token on each side
_LAYOUTS = (
    "an ONNX folder (model.onnx + tokenizer.json [+ config.json with max_length]) or a Hugging Face "
    "BertForSequenceClassification folder (config.json + model.safetensors + tokenizer.json)"
)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object")
    return data


def _find_onnx(folder: Path) -> Path | None:
    return next((folder / name for name in _ONNX_FILES if (folder / name).is_file()), None)


def _check_classifier_config(folder: Path) -> None:
    """Raise :class:`ConfigError` unless *folder* holds a BERT sequence-classification config."""
    from ragwright.models.embedders.bert_onnx import read_bert_config

    read_bert_config(folder)  # model_type, sizes, activation
    raw = _read_json(folder / "config.json")
    archs = raw.get("architectures") or []
    if not isinstance(archs, list) or not any(str(a).endswith("ForSequenceClassification") for a in archs):
        raise ConfigError(
            f"{folder}/config.json describes {archs or 'no architecture'}, not a cross-encoder: "
            "expected architectures ['BertForSequenceClassification'] with 1 or 2 labels"
        )
    labels = raw.get("num_labels", len(raw.get("id2label") or {}) or 2)  # transformers' default is 2
    if labels not in (1, 2):
        raise ConfigError(f"{folder}/config.json has {labels} labels; a cross-encoder has 1 or 2")


def _default_max_length(folder: Path) -> tuple[int, int | None]:
    """(the window the folder asks for, the model's position limit when known)."""
    config = _read_json(folder / "config.json") if (folder / "config.json").is_file() else {}
    limit = config.get("max_position_embeddings")
    limit = int(limit) if isinstance(limit, int) and limit > 0 else None
    window = config.get("max_length")
    tok_cfg = folder / "tokenizer_config.json"
    if not isinstance(window, int) and tok_cfg.is_file():
        window = _read_json(tok_cfg).get("model_max_length")
    if not isinstance(window, int) or not _MIN_LENGTH <= window <= 100_000:  # HF writes 1e30 for "none"
        window = _DEFAULT_MAX_LENGTH
    return (min(window, limit) if limit else window), limit


def _content_key(folder: Path, quantize: bool) -> str:
    return content_key(f"ragwright-cross-encoder:{_CACHE_FORMAT}:int8={quantize}", folder, _HASHED_FILES)


def convert_cross_encoder(folder: str | os.PathLike[str], *, quantize: bool = False) -> Path:
    """Build (once) the ONNX folder for the Hugging Face cross-encoder *folder*; return its path.

    The result is an ONNX-layout folder (``model.onnx``, ``tokenizer.json``, ``config.json``) under
    :func:`ragwright.models.embedders.onnx.model_cache_dir`, keyed by a hash of the source files and
    *quantize* (int8 per-channel; off by default because rerankers lose accuracy to it).
    """
    from ragwright.models.embedders.bert_onnx import build_bert_classifier_onnx, quantize_int8
    from ragwright.models.embedders.onnx import model_cache_dir

    source = Path(folder).expanduser()
    _check_classifier_config(source)
    key = _content_key(source, quantize)
    target = model_cache_dir() / f"{source.name}-cross-encoder-{key[:16]}"
    if (target / "model.onnx").is_file() and (target / "config.json").is_file():
        return target
    logger.info("converting cross-encoder %s to ONNX in %s (once)", source, target)
    with build_folder(target, "model.onnx") as work:
        if quantize:
            fp32 = build_bert_classifier_onnx(source, work / "model-fp32.onnx")
            quantize_int8(fp32, work / "model.onnx")
            fp32.unlink()
        else:
            build_bert_classifier_onnx(source, work / "model.onnx")
        shutil.copyfile(source / "tokenizer.json", work / "tokenizer.json")
        write_config(
            work,
            {
                "name": f"cross-encoder:{source.name}",
                "max_length": _default_max_length(source)[0],
                "quantized": quantize,
                "source": str(source),
            },
        )
    return target


def _positive_int(field: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError.invalid(field, value, "a positive integer")
    return value


class CrossEncoderReranker:
    """Scores (query, passage) pairs with a local cross-encoder; implements the ``Reranker`` protocol.

    *model_dir* is an ONNX or Hugging Face folder (see the module docstring); a Hugging Face folder is
    converted to ONNX on first use (``quantize=True`` makes that int8).  Passages are truncated so
    that the pair fits ``max_length`` tokens (default: the folder's ``max_length`` /
    ``model_max_length``, else 512, never more than the model's positions); the query is kept whole
    unless it alone overflows the window.  Pairs run in length-sorted batches of ``batch_size`` on
    ``threads`` onnxruntime threads.  Nothing loads until :meth:`load` or the first :meth:`score`;
    both are thread-safe.
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        *,
        max_length: int | None = None,
        batch_size: int = 16,
        threads: int = 1,
        quantize: bool = False,
    ) -> None:
        self.batch_size = _positive_int("batch_size", batch_size)
        self.threads = _positive_int("threads", threads)
        self.quantize = bool(quantize)
        folder = Path(model_dir).expanduser()
        if not folder.is_dir():
            raise ConfigError(f"cross-encoder folder {folder} does not exist; expected {_LAYOUTS}")
        if not (folder / "tokenizer.json").is_file():
            raise ConfigError(
                f"{folder} has no tokenizer.json (a fast-tokenizer file, saved by tokenizer.save_pretrained); "
                f"expected {_LAYOUTS}"
            )
        self.model_dir = folder
        self._onnx_path = _find_onnx(folder)
        if self._onnx_path is None:
            if not (folder / "config.json").is_file() or not (folder / "model.safetensors").is_file():
                found = ", ".join(sorted(p.name for p in folder.iterdir())) or "nothing"
                raise ConfigError(
                    f"{folder} has no model.onnx, nor config.json + model.safetensors (found {found}); "
                    f"expected {_LAYOUTS}"
                )
            _check_classifier_config(folder)
            for module in ("onnx", "safetensors"):
                if importlib.util.find_spec(module) is None:
                    raise MissingDependencyError(module, _CONVERT_EXTRA, "converting a cross-encoder to ONNX")
        default, limit = _default_max_length(folder)
        if max_length is None:
            max_length = default
        elif _positive_int("max_length", max_length) < _MIN_LENGTH or (limit and max_length > limit):
            accepted = f"an integer from {_MIN_LENGTH} to {limit or 'the model limit'}"
            raise ConfigError.invalid("max_length", max_length, accepted)
        self.max_length = max_length
        self._name = f"cross-encoder:{folder.name}"
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None  # truncates only the passage
        self._fallback: Any = None  # truncates the longer side, for queries that fill the window
        self._pad_id = 0
        self._inputs: dict[str, Any] = {}  # input name → numpy dtype
        self._output = ""

    @property
    def name(self) -> str:
        """``cross-encoder:<folder name>``."""
        return self._name

    @property
    def onnx_path(self) -> Path:
        """The ONNX file that runs (the converted cache copy for a Hugging Face folder); loads it."""
        self.load()
        assert self._onnx_path is not None
        return self._onnx_path

    def load(self) -> CrossEncoderReranker:
        """Convert (once), load the tokenizer and the onnxruntime session now; return ``self``."""
        if self._session is not None:
            return self
        with self._lock:
            if self._session is None:
                self._load_locked()
        return self

    def _load_locked(self) -> None:
        if self._onnx_path is None:
            self._onnx_path = convert_cross_encoder(self.model_dir, quantize=self.quantize) / "model.onnx"
        tokenizers = require("tokenizers", _EXTRA, "the cross-encoder reranker")
        np = require("numpy", _EXTRA)
        path = str(self.model_dir / "tokenizer.json")
        tokenizer, fallback = tokenizers.Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(path)
        padding = tokenizer.padding
        pad = padding["pad_id"] if padding and "pad_id" in padding else tokenizer.token_to_id("[PAD]")
        for tok, strategy in ((tokenizer, "only_second"), (fallback, "longest_first")):
            tok.no_padding()
            tok.enable_truncation(max_length=self.max_length, strategy=strategy)
        try:
            session = cpu_session(
                self._onnx_path, self.threads, "the cross-encoder reranker", disabled_optimizers=["SkipLayerNormFusion"]
            )
        except Exception as exc:  # onnxruntime raises its own exception types for bad files
            raise ConfigError(f"cannot load {self._onnx_path} with onnxruntime: {exc}") from exc
        dtypes = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}
        inputs = {i.name: dtypes.get(i.type) for i in session.get_inputs()}
        known = {"input_ids", "attention_mask", "token_type_ids"}
        if not {"input_ids", "attention_mask"} <= inputs.keys() or not inputs.keys() <= known:
            raise ConfigError(
                f"{self._onnx_path} takes inputs {sorted(inputs)}; a cross-encoder takes input_ids, "
                "attention_mask and optionally token_type_ids"
            )
        if None in inputs.values():
            raise ConfigError(f"{self._onnx_path}: inputs must be int64 or int32 tensors")
        outputs = session.get_outputs()
        output = next((o for o in outputs if o.name == "logits"), outputs[0])
        width = output.shape[-1] if len(output.shape) == 2 else 1
        if len(output.shape) not in (1, 2) or (isinstance(width, int) and width not in (1, 2)):
            raise ConfigError(
                f"{self._onnx_path}: output {output.name} has shape {output.shape}; expected [batch, 1|2]"
            )
        self._pad_id = int(pad) if pad is not None else 0
        self._inputs, self._output = inputs, output.name
        self._tokenizer, self._fallback = tokenizer, fallback
        self._session = session
        logger.debug("loaded cross-encoder %s from %s", self._name, self._onnx_path)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One relevance score per passage, in the given order (higher is more relevant)."""
        if isinstance(passages, str):
            raise TypeError("score takes a sequence of passages, not one string")
        items = list(passages)
        if not items:
            return []
        self.load()
        np = require("numpy", _EXTRA)
        encodings = [self._encode(query, p) for p in items]
        lengths = [len(e.ids) for e in encodings]
        order = sorted(range(len(items)), key=lengths.__getitem__)
        scores = np.empty(len(items), dtype=np.float64)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            width = max(lengths[i] for i in batch)
            arrays = {
                "input_ids": np.full((len(batch), width), self._pad_id, dtype=np.int64),
                "attention_mask": np.zeros((len(batch), width), dtype=np.int64),
                "token_type_ids": np.zeros((len(batch), width), dtype=np.int64),
            }
            for row, i in enumerate(batch):
                n, enc = lengths[i], encodings[i]
                arrays["input_ids"][row, :n] = enc.ids
                arrays["attention_mask"][row, :n] = 1
                arrays["token_type_ids"][row, :n] = enc.type_ids
            feed = {name: arrays[name].astype(dtype, copy=False) for name, dtype in self._inputs.items()}
            (logits,) = self._session.run([self._output], feed)
            scores[batch] = self._reduce(np.asarray(logits, dtype=np.float64), len(batch))
        return [float(s) for s in scores]

    def _encode(self, query: str, passage: str) -> Any:
        try:
            return self._tokenizer.encode(query, passage)
        except Exception:  # tokenizers raises a bare Exception when the query alone fills the window
            return self._fallback.encode(query, passage)

    @staticmethod
    def _reduce(logits: Any, rows: int) -> Any:
        if logits.shape == (rows,) or logits.shape == (rows, 1):
            return logits.reshape(rows)
        if logits.shape == (rows, 2):
            return logits[:, 1] - logits[:, 0]
        raise ValueError(f"cross-encoder returned logits of shape {logits.shape}; expected [{rows}, 1|2]")

    def __repr__(self) -> str:
        return f"CrossEncoderReranker(name={self._name!r}, max_length={self.max_length}, threads={self.threads})"
