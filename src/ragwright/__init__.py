"""ragwright: production-grade retrieval-augmented generation, offline by default.

The public API is listed in ``__all__``; heavy parts (models, stores, parsers) are imported lazily
on first attribute access, so ``import ragwright`` stays cheap and side-effect free.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from ragwright.errors import (
    ConfigError,
    GenerationError,
    LimitExceeded,
    MissingDependencyError,
    ParseError,
    RagwrightError,
    RetrievalError,
    StoreBusyError,
    StoreError,
)

__version__ = "0.1.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())

_LAZY: dict[str, str] = {
    "Rag": "ragwright.rag",
    "RetrievalOptions": "ragwright.options",
    "RagOptions": "ragwright.options",
    "ChunkingOptions": "ragwright.options",
    "IngestOptions": "ragwright.options",
    "Identity": "ragwright.model.identity",
    "Document": "ragwright.model.document",
    "Element": "ragwright.model.document",
    "ElementKind": "ragwright.model.document",
    "Chunk": "ragwright.model.chunk",
    "SearchResult": "ragwright.model.results",
    "RagResponse": "ragwright.model.results",
    "Citation": "ragwright.model.results",
    "ArmHit": "ragwright.model.results",
    "DocumentRecord": "ragwright.model.records",
    "DocumentStatus": "ragwright.model.records",
    "Eq": "ragwright.model.filters",
    "In": "ragwright.model.filters",
    "Compare": "ragwright.model.filters",
    "Exists": "ragwright.model.filters",
    "And": "ragwright.model.filters",
    "Or": "ragwright.model.filters",
    "Not": "ragwright.model.filters",
    "MinScoreSpec": "ragwright.model.specs",
    "HasTagSpec": "ragwright.model.specs",
    "DocumentIdSpec": "ragwright.model.specs",
    "PredicateSpec": "ragwright.model.specs",
    "Spec": "ragwright.model.specs",
    "IngestReport": "ragwright.ingest.report",
    "IngestFailure": "ragwright.ingest.report",
    "MemoryStore": "ragwright.stores.memory",
    "SqliteStore": "ragwright.stores.sqlite",
    "Embedder": "ragwright.models.embedders.base",
    "OnnxEmbedder": "ragwright.models.embedders.onnx",
    "WordLlamaEmbedder": "ragwright.models.embedders.static",
    "load_embedder": "ragwright.models.embedders",
    "FolderSource": "ragwright.sources",
    "FileListSource": "ragwright.sources",
    "JsonlSource": "ragwright.sources",
    "BytesSource": "ragwright.sources",
}

__all__ = [
    "And",
    "ArmHit",
    "BytesSource",
    "Chunk",
    "ChunkingOptions",
    "Citation",
    "Compare",
    "ConfigError",
    "Document",
    "DocumentIdSpec",
    "DocumentRecord",
    "DocumentStatus",
    "Element",
    "ElementKind",
    "Embedder",
    "Eq",
    "Exists",
    "FileListSource",
    "FolderSource",
    "GenerationError",
    "HasTagSpec",
    "Identity",
    "In",
    "IngestFailure",
    "IngestOptions",
    "IngestReport",
    "JsonlSource",
    "LimitExceeded",
    "MemoryStore",
    "MinScoreSpec",
    "MissingDependencyError",
    "Not",
    "OnnxEmbedder",
    "Or",
    "ParseError",
    "PredicateSpec",
    "Rag",
    "RagOptions",
    "RagResponse",
    "RagwrightError",
    "RetrievalError",
    "RetrievalOptions",
    "SearchResult",
    "Spec",
    "SqliteStore",
    "StoreBusyError",
    "StoreError",
    "WordLlamaEmbedder",
    "__version__",
    "load_embedder",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragwright' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ragwright.ingest.report import IngestFailure, IngestReport
    from ragwright.model.chunk import Chunk
    from ragwright.model.document import Document, Element, ElementKind
    from ragwright.model.filters import And, Compare, Eq, Exists, In, Not, Or
    from ragwright.model.identity import Identity
    from ragwright.model.records import DocumentRecord, DocumentStatus
    from ragwright.model.results import ArmHit, Citation, RagResponse, SearchResult
    from ragwright.model.specs import DocumentIdSpec, HasTagSpec, MinScoreSpec, PredicateSpec, Spec
    from ragwright.models.embedders import load_embedder
    from ragwright.models.embedders.base import Embedder
    from ragwright.models.embedders.onnx import OnnxEmbedder
    from ragwright.models.embedders.static import WordLlamaEmbedder
    from ragwright.options import ChunkingOptions, IngestOptions, RagOptions, RetrievalOptions
    from ragwright.rag import Rag
    from ragwright.sources import BytesSource, FileListSource, FolderSource, JsonlSource
    from ragwright.stores.memory import MemoryStore
    from ragwright.stores.sqlite import SqliteStore
