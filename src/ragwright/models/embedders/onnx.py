"""Dense embedder on onnxruntime + tokenizers (no torch): the ragwright default.

:class:`OnnxEmbedder` runs a BERT-style encoder exported to ONNX, mean-pools the last hidden
state over the attention mask and L2-normalises the result.  :meth:`OnnxEmbedder.default` is
all-MiniLM-L6-v2 (384-d, int8) shipped inside ragwright; :meth:`OnnxEmbedder.from_directory`
takes any ONNX model folder, or a Hugging Face / sentence-transformers BERT folder with
``model.safetensors``, which it converts once into the user cache.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragwright._deps import require
from ragwright._paths import cache_root
from ragwright.errors import ConfigError
from ragwright.models.conversion import build_folder, content_key, write_config
from ragwright.models.runtime import cpu_session

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatMatrix = npt.NDArray[np.float32]
    FloatVector = npt.NDArray[np.float32]

__all__ = ["OnnxEmbedder", "default_model_dir", "model_cache_dir"]

logger = logging.getLogger(__name__)

_DATA_DIR = Path(__file__).resolve().parent / "data"
_DEFAULT_MODEL = "all-MiniLM-L6-v2"
_EXTRA = "onnx"  # onnxruntime, tokenizers and numpy are base dependencies; the extra repeats them
_CACHE_FORMAT = "1"  # bump when the conversion changes, so caches are rebuilt
_HASHED_FILES = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
)


def default_model_dir() -> Path:
    """The folder of the shipped default model (all-MiniLM-L6-v2, int8 ONNX)."""
    return _DATA_DIR / _DEFAULT_MODEL


def model_cache_dir() -> Path:
    """Where converted models go: ``$RAGWRIGHT_CACHE_DIR/models``, else the user cache.

    The user cache is ``$XDG_CACHE_HOME/ragwright/models`` or ``~/.cache/ragwright/models``.
    """
    return cache_root() / "models"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object")
    return data


def _pick_onnx_file(folder: Path, config: dict[str, Any]) -> Path:
    if "model_file" in config:
        path = folder / str(config["model_file"])
        if not path.is_file():
            raise ConfigError(f"{folder}/config.json names model_file {path.name!r}, which is missing")
        return path
    found = sorted(p for p in folder.glob("model*.onnx") if p.is_file())
    if len(found) == 1:
        return found[0]
    if (folder / "model.onnx") in found:
        return folder / "model.onnx"
    if not found:
        raise ConfigError(f"{folder} has no model*.onnx file")
    names = ", ".join(p.name for p in found)
    raise ConfigError(f"{folder} has several ONNX files ({names}); set model_file in config.json")


def _pooling_of(folder: Path) -> str:
    pooling = folder / "1_Pooling" / "config.json"
    if not pooling.is_file():
        return "mean"
    cfg = _read_json(pooling)
    if cfg.get("pooling_mode_mean_tokens"):
        return "mean"
    if cfg.get("pooling_mode_cls_token"):
        return "cls"
    raise ConfigError(f"{pooling}: only mean or CLS pooling is supported")


def _content_key(folder: Path) -> str:
    return content_key(f"ragwright-onnx-cache:{_CACHE_FORMAT}", folder, _HASHED_FILES)


def _convert_hf_folder(folder: Path) -> Path:
    """Build (once) the int8 ONNX folder for the BERT checkpoint *folder*; return its path."""
    from ragwright.models.embedders.bert_onnx import (
        build_bert_onnx,
        quantize_int8,
        read_bert_config,
    )

    bert = read_bert_config(folder)
    if not (folder / "tokenizer.json").is_file():
        raise ConfigError(
            f"{folder} has no tokenizer.json; save the model with a fast tokenizer "
            "(tokenizer.save_pretrained) and try again"
        )
    key = _content_key(folder)
    target = model_cache_dir() / f"{folder.name}-{key[:16]}"
    if (target / "config.json").is_file():
        return target
    pooling = _pooling_of(folder)
    window = bert.max_positions
    st_cfg = folder / "sentence_bert_config.json"
    if st_cfg.is_file():
        window = min(window, int(_read_json(st_cfg).get("max_seq_length", window)))
    logger.info("converting %s to int8 ONNX in %s (once)", folder, target)
    with build_folder(target, "config.json") as work:
        fp32 = build_bert_onnx(folder, work / "model-fp32.onnx")
        quantize_int8(fp32, work / "model-int8.onnx")
        fp32.unlink()
        shutil.copyfile(folder / "tokenizer.json", work / "tokenizer.json")
        write_config(
            work,
            {
                "name": f"{folder.name}/onnx-int8@{key[:12]}",
                "dimension": bert.hidden,
                "max_seq_length": window,
                "pooling": pooling,
                "model_file": "model-int8.onnx",
                "source": str(folder),
            },
        )
    return target


class OnnxEmbedder:
    """A sentence embedder on onnxruntime: tokenize, encode, pool over the mask, L2-normalise.

    *model_dir* holds an ONNX encoder (``model*.onnx``), ``tokenizer.json`` and ``config.json``
    with ``name``, ``dimension``, ``max_seq_length`` (the window in tokens, special tokens
    included) and ``pooling`` (``mean`` or ``cls``).  Nothing loads until first use or
    :meth:`load`.  ``threads`` is onnxruntime's intra-op thread count (keep it low on shared
    machines).  Text beyond the window is truncated; ``max_tokens`` is the window less the
    special tokens, so chunks within it are never cut.

    Batching: by default each text runs alone (``batch_size=1``).  On one thread that is as fast
    as padded batches for passages (within ~15 % for short queries), and with an int8 model it
    keeps every vector independent of the other texts in the call: dynamic quantization picks
    one activation scale per run, so batched texts shift by up to ~0.02 in cosine.  With
    ``batch_size > 1`` inputs are sorted by length and grouped under ``max_batch_tokens``
    padded tokens per run to limit padding; results always come back in the caller's order.
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        *,
        threads: int = 1,
        batch_size: int = 1,
        max_batch_tokens: int = 512,
    ) -> None:
        for field, value in (
            ("threads", threads),
            ("batch_size", batch_size),
            ("max_batch_tokens", max_batch_tokens),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError.invalid(field, value, "a positive integer")
        self.model_dir = Path(model_dir)
        config_path = self.model_dir / "config.json"
        if not config_path.is_file() or not (self.model_dir / "tokenizer.json").is_file():
            raise ConfigError(
                f"{self.model_dir} is not an ONNX embedder folder: it needs config.json, tokenizer.json and model*.onnx"
            )
        config = _read_json(config_path)
        self._model_path = _pick_onnx_file(self.model_dir, config)
        try:
            self._dimension = int(config.get("dimension", config.get("hidden_size", 0)))
            self._window = int(config.get("max_seq_length", min(512, config.get("max_position_embeddings", 512))))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{config_path}: bad dimension or max_seq_length ({exc})") from exc
        if self._dimension < 1 or self._window < 3:
            raise ConfigError(f"{config_path} must give dimension and max_seq_length")
        self._pooling = str(config.get("pooling", "mean"))
        if self._pooling not in ("mean", "cls"):
            raise ConfigError.invalid("pooling", self._pooling, "'mean' or 'cls'")
        self._name = str(config.get("name") or f"{self.model_dir.name}/{self._model_path.stem}")
        self.threads = threads
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self._lock = threading.Lock()
        self._encoder: Any = None  # tokenizer truncating to the window, special tokens added
        self._counter: Any = None  # tokenizer without truncation, for count_tokens
        self._specials = 2
        self._around: tuple[list[int], list[int]] = ([], [])  # special ids before and after the text
        self._pad_id = 0
        self._session: Any = None
        self._inputs: tuple[str, ...] = ()

    @classmethod
    def default(cls, threads: int = 1, **kwargs: Any) -> OnnxEmbedder:
        """The shipped all-MiniLM-L6-v2 (int8 ONNX, 384-d, 256-token window)."""
        folder = default_model_dir()
        if not (folder / "config.json").is_file():
            raise ConfigError(
                f"the bundled embedder is missing from {folder}; reinstall ragwright "
                "(a source checkout builds it with: python tools/build_minilm_onnx.py)"
            )
        return cls(folder, threads=threads, **kwargs)

    @classmethod
    def from_directory(cls, path: str | os.PathLike[str], **kwargs: Any) -> OnnxEmbedder:
        """Load an ONNX embedder folder, or convert a HF/sentence-transformers BERT folder.

        A folder with ``model.safetensors`` and a BERT ``config.json`` is built once into
        :func:`model_cache_dir` (int8, keyed by a hash of its files) and loaded from there.
        """
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise ConfigError(f"embedding model folder {folder} does not exist")
        if any(folder.glob("model*.onnx")):
            return cls(folder, **kwargs)
        if (folder / "model.safetensors").is_file():
            return cls(_convert_hf_folder(folder), **kwargs)
        hint = ""
        if any(folder.glob("*.bin")):
            hint = " (it has PyTorch *.bin weights: re-save them as model.safetensors)"
        raise ConfigError(
            f"{folder} holds neither model*.onnx nor model.safetensors{hint}; point at an ONNX "
            "embedder folder or a Hugging Face BERT model folder"
        )

    @property
    def name(self) -> str:
        return self._name

    @property
    def spec(self) -> str:
        """``"default"`` for the shipped MiniLM, else the model folder (what ``load_embedder`` takes)."""
        folder = self.model_dir.resolve()
        return "default" if folder == default_model_dir().resolve() else str(folder)

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def max_tokens(self) -> int:
        """The window less the special tokens the tokenizer adds (254 for MiniLM)."""
        self._load_tokenizers()
        return self._window - self._specials

    def count_tokens(self, text: str) -> int:
        """Word pieces in *text*, special tokens excluded (never truncated)."""
        self._load_tokenizers()
        return len(self._counter.encode(text, add_special_tokens=False).ids)

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        np = require("numpy", _EXTRA)
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a sequence of strings; use embed_query for one")
        items = list(texts)
        if not items:
            empty: FloatMatrix = np.zeros((0, self._dimension), dtype=np.float32)
            return empty
        self.load()
        encodings = [self._encoder.encode(t) for t in items]
        lengths = [len(e.ids) for e in encodings]
        order = sorted(range(len(items)), key=lengths.__getitem__)
        out: FloatMatrix = np.empty((len(items), self._dimension), dtype=np.float32)
        for batch in self._batches(order, lengths):
            width = lengths[batch[-1]]
            ids = np.full((len(batch), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                ids[row, : lengths[i]] = encodings[i].ids
                mask[row, : lengths[i]] = 1
            out[batch] = self._encode(ids, mask)
        return out

    def embed_query(self, text: str) -> FloatVector:
        vector: FloatVector = self.embed_documents([text])[0]
        return vector

    def load(self) -> OnnxEmbedder:
        """Load tokenizer and onnxruntime session now (otherwise done on first use)."""
        self._load_tokenizers()
        if self._session is not None:
            return self
        with self._lock:
            if self._session is None:
                session = cpu_session(
                    self._model_path,
                    self.threads,
                    "the ONNX embedder",
                    # onnxruntime's fused SkipLayerNormalization is slower on CPU than the
                    # LayerNormalization + Add it replaces (measured ~12 % of the whole run).
                    disabled_optimizers=["SkipLayerNormFusion"],
                )
                self._inputs = tuple(i.name for i in session.get_inputs())
                self._session = session
                logger.debug("loaded ONNX embedder %s from %s", self._name, self._model_path)
        return self

    def _load_tokenizers(self) -> None:
        if self._counter is not None:
            return
        with self._lock:
            if self._counter is not None:
                return
            tokenizers = require("tokenizers", _EXTRA, "the ONNX embedder")
            path = str(self.model_dir / "tokenizer.json")
            encoder = tokenizers.Tokenizer.from_file(path)
            padding = encoder.padding
            if padding and "pad_id" in padding:
                self._pad_id = int(padding["pad_id"])
            encoder.no_padding()
            encoder.enable_truncation(max_length=self._window)
            counter = tokenizers.Tokenizer.from_file(path)
            counter.no_padding()
            counter.no_truncation()
            self._specials = int(encoder.num_special_tokens_to_add(False))
            full, plain = encoder.encode("a").ids, counter.encode("a", add_special_tokens=False).ids
            at = next((i for i in range(len(full)) if full[i : i + len(plain)] == plain), len(full))
            self._around = (list(full[:at]), list(full[at + len(plain) :]))
            self._encoder = encoder
            self._counter = counter

    def _batches(self, order: list[int], lengths: list[int]) -> list[list[int]]:
        """Consecutive runs of *order* (sorted by length) within the size and token budgets."""
        batches: list[list[int]] = []
        current: list[int] = []
        for i in order:
            rows = len(current) + 1
            if current and (rows > self.batch_size or rows * lengths[i] > self.max_batch_tokens):
                batches.append(current)
                current = []
            current.append(i)
        if current:
            batches.append(current)
        return batches

    # -- token level (late chunking: ragwright.chunk.late) ------------------------------------------
    def tokenize(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """*text*'s token ids (no special tokens, never truncated) and each token's character span."""
        self._load_tokenizers()
        encoding = self._counter.encode(text, add_special_tokens=False)
        return list(encoding.ids), [(int(a), int(b)) for a, b in encoding.offsets]

    def token_outputs(self) -> bool:
        """Whether the graph returns one row per token (a rank-3 first output), as late chunking needs;
        ``False`` for a graph that pools its own output. Loads the model."""
        self.load()
        return len(self._session.get_outputs()[0].shape) == 3

    def token_embeddings(self, ids: Sequence[int]) -> FloatMatrix:
        """The encoder's output for each of *ids* (at most :attr:`max_tokens`, special tokens added
        around them and left out of the result): a ``(len(ids), dimension)`` float32 array."""
        np = require("numpy", _EXTRA)
        self.load()
        if len(ids) > self.max_tokens:
            raise ValueError(f"{len(ids)} tokens exceed the window of {self.max_tokens}")
        before, after = self._around
        row = np.asarray([[*before, *ids, *after]], dtype=np.int64)
        hidden = self._run(row, np.ones_like(row))
        if hidden.ndim != 3:
            raise ConfigError(
                f"{self._name}'s ONNX graph pools its output; late chunking needs an encoder that returns "
                "token embeddings (a BERT-style export with last_hidden_state)"
            )
        out: FloatMatrix = hidden[0, len(before) : len(before) + len(ids)].astype(np.float32, copy=False)
        return out

    def _run(self, ids: Any, mask: Any) -> Any:
        np = require("numpy", _EXTRA)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        return self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]

    def _encode(self, ids: Any, mask: Any) -> FloatMatrix:
        np = require("numpy", _EXTRA)
        hidden = self._run(ids, mask)
        if hidden.ndim == 2:  # the graph already pools
            pooled = hidden
        elif self._pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: FloatMatrix = (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
        return result

    def __repr__(self) -> str:
        return f"OnnxEmbedder(name={self._name!r}, threads={self.threads})"
