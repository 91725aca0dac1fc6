"""The package surface: a light import, a pinned public API, every module importable."""

import importlib
import json
import pkgutil
import subprocess
import sys

import ragwright

HEAVY = ("numpy", "onnxruntime", "tokenizers", "markdown_it", "yaml", "rich", "click", "sqlite3", "wordllama", "torch")

PUBLIC_API = [
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


def test_import_is_light() -> None:
    code = (
        "import sys, json, time; t=time.perf_counter(); import ragwright; "
        "print(json.dumps({'mods': sorted(sys.modules), 't': time.perf_counter()-t}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(json.loads(out)["mods"])
    assert not [m for m in HEAVY if m in loaded]


def test_public_api_is_pinned() -> None:
    assert sorted(ragwright.__all__) == sorted(PUBLIC_API)
    for name in ragwright.__all__:
        assert getattr(ragwright, name) is not None


def test_every_module_imports() -> None:
    for info in pkgutil.walk_packages(ragwright.__path__, "ragwright."):
        importlib.import_module(info.name)


def test_error_tree() -> None:
    from ragwright.errors import ConfigError, MissingDependencyError, RagwrightError

    assert issubclass(ConfigError, ValueError) and issubclass(ConfigError, RagwrightError)
    err = MissingDependencyError("pypdfium2", "pdf", "PDF parsing")
    assert isinstance(err, ImportError) and "pip install 'ragwright[pdf]'" in str(err)
