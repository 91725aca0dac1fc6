"""Sources: where documents come from. Each yields items with a stable id and a fingerprint."""

from ragwright.sources.base import Source, SourceItem
from ragwright.sources.filesystem import FileListSource, FolderSource
from ragwright.sources.jsonl import JsonlSource
from ragwright.sources.memory import BytesSource

__all__ = ["BytesSource", "FileListSource", "FolderSource", "JsonlSource", "Source", "SourceItem", "open_source"]


def open_source(path: str) -> Source:
    """The source for a CLI path: a folder, a ``.jsonl`` corpus, or a single file."""
    from pathlib import Path

    from ragwright.errors import ConfigError

    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{path}: no such file or folder")
    if p.is_dir():
        return FolderSource(p)
    if p.suffix.lower() == ".jsonl":
        return JsonlSource(p)
    return FileListSource([p])
