"""onnxruntime sessions on CPU, configured one way for every local model (embedder, SPLADE, reranker)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragwright._deps import require

__all__ = ["cpu_session"]


def cpu_session(path: Path | str, threads: int, purpose: str, *, disabled_optimizers: Sequence[str] = ()) -> Any:
    """An ``InferenceSession`` for *path* on the CPU provider: *threads* intra-op threads, sequential
    execution, all graph optimizations (less *disabled_optimizers*), warnings silenced.

    *purpose* names the caller in the message when onnxruntime is missing.
    """
    ort = require("onnxruntime", "onnx", purpose)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(
        str(path), options, providers=["CPUExecutionProvider"], disabled_optimizers=list(disabled_optimizers) or None
    )
