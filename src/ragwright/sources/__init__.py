"""Sources: where documents come from. Each yields items with a stable id and a fingerprint."""

from collections.abc import Iterable
from pathlib import Path

from ragwright.sources.base import Source, SourceItem
from ragwright.sources.filesystem import FileListSource, FolderSource
from ragwright.sources.jsonl import JsonlSource
from ragwright.sources.memory import BytesSource
from ragwright.sources.scoped import TenantScopedSource
from ragwright.sources.url import UrlSource

__all__ = [
    "BytesSource",
    "FileListSource",
    "FolderSource",
    "JsonlSource",
    "Source",
    "SourceItem",
    "TenantScopedSource",
    "UrlSource",
    "open_source",
    "open_sources",
]


def open_source(path: str, *, allow_http: bool = False, follow_symlinks: bool = False) -> Source:
    """The source for a CLI path: a folder, a ``.jsonl`` corpus, or a single file; an http(s) URL only
    with *allow_http* (``ragwright ingest --allow-http URL``; in Python, pass a :class:`UrlSource`).
    A folder's links to files outside it are refused unless *follow_symlinks*."""
    from pathlib import Path

    from ragwright.errors import ConfigError
    from ragwright.sources.url import UrlSource, is_url

    if is_url(path):
        if not allow_http:
            raise ConfigError(
                f"{path} is a URL: ragwright fetches URLs only when asked (ragwright ingest --allow-http URL, "
                "or UrlSource([...]) in Python)"
            )
        return UrlSource([path])
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{path}: no such file or folder")
    if p.is_dir():
        return FolderSource(p, follow_symlinks=follow_symlinks)
    if p.suffix.lower() == ".jsonl":
        return JsonlSource(p)
    return FileListSource([p])


def open_sources(sources: Source | str | Path | Iterable[Source | str | Path]) -> list[Source]:
    """What ``Rag.ingest`` and ``enqueue`` accept, as sources: a path (:func:`open_source`), a :class:`Source`,
    or an iterable of either; an empty iterable is refused (nothing to ingest)."""
    from ragwright.errors import ConfigError

    if isinstance(sources, str | Path):
        return [open_source(str(sources))]
    if isinstance(sources, Source):
        return [sources]
    out = [open_source(str(s)) if isinstance(s, str | Path) else s for s in sources]
    if not out:
        raise ConfigError("nothing to ingest: give at least one file, folder or source")
    return out
