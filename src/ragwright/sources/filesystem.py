"""Files and folders. The document id is the file's absolute POSIX path.

A folder's symbolic links to files outside it (directly, or through a linked folder) are refused by
default: ingesting a folder never reads what the folder does not hold (``/etc/passwd`` through a
planted link, say). They are listed in :attr:`FolderSource.skipped` (and the ingest report) with the
reason; ``follow_symlinks=True`` (``ragwright ingest --follow-symlinks``) allows them.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragwright.errors import ConfigError, ParseError
from ragwright.sources.base import SourceItem

log = logging.getLogger(__name__)

DEFAULT_EXCLUDE = (".*", "__pycache__", "node_modules", "*.pyc")


def _item(path: Path, inside: Path | None = None) -> SourceItem:
    """The item of a file, with its size from ``stat`` (ingestion refuses an oversized file unread).

    Loading reads at most that many bytes: a file that grew since is refused rather than read whole.
    With *inside*, loading refuses a file that resolves outside that folder now (a link planted after
    the listing)."""
    resolved = path.resolve()
    metadata: dict[str, Any] = {"file_name": resolved.name}
    try:
        stat = resolved.stat()
        size: int | None = stat.st_size
        # The file's modification time: the date time decay falls back on (ingest.dates, "file_mtime").
        metadata["file_mtime"] = datetime.fromtimestamp(stat.st_mtime, tz=UTC).isoformat()
    except OSError:
        size = None  # loading reports why the file cannot be read

    def load() -> bytes:
        if inside is not None and not path.resolve().is_relative_to(inside):
            raise ConfigError(f"{path} now links outside the folder {inside}; it was not read")
        if size is None:
            return resolved.read_bytes()
        with resolved.open("rb") as fh:
            data = fh.read(size)
            if fh.read(1):
                raise ParseError(f"{path} grew while it was being read; ingest it again once it is written")
        return data

    return SourceItem(
        document_id=resolved.as_posix(),
        uri=resolved.as_uri(),
        load=load,
        name_hint=resolved.name,
        metadata=metadata,
        size=size,
    )


class FolderSource:
    """Every file under a folder (recursive by default), filtered by include/exclude globs."""

    def __init__(
        self,
        folder: str | Path,
        *,
        include: Sequence[str] = ("*",),
        exclude: Sequence[str] = DEFAULT_EXCLUDE,
        recursive: bool = True,
        follow_symlinks: bool = False,
    ) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise ConfigError(f"{folder}: not a folder (give an existing folder to ingest)")
        self.include, self.exclude, self.recursive = tuple(include), tuple(exclude), recursive
        self.follow_symlinks = follow_symlinks
        #: ``(path, reason)`` of the files listed but refused (links to files outside the folder).
        self.skipped: list[tuple[str, str]] = []
        self._paths = self._list()

    @property
    def root(self) -> str:
        return self.folder.resolve().as_posix()

    def _excluded(self, rel: Path) -> bool:
        return any(fnmatch.fnmatch(part, pat) for part in rel.parts for pat in self.exclude)

    def _list(self) -> list[Path]:
        pattern = "**/*" if self.recursive else "*"
        found = []
        seen: set[Path] = set()
        inside = self.folder.resolve()
        for p in sorted(self.folder.glob(pattern)):
            rel = p.relative_to(self.folder)
            if not p.is_file() or self._excluded(rel) or not any(fnmatch.fnmatch(p.name, g) for g in self.include):
                continue
            if self._refused(p, inside):
                continue
            if p.resolve() in seen:  # a link inside the folder to a file listed already: one document
                continue
            seen.add(p.resolve())
            found.append(p)
        return found

    def _refused(self, path: Path, inside: Path) -> bool:
        """Whether *path* resolves outside the folder (and links are not followed); noted in ``skipped``."""
        if self.follow_symlinks or path.resolve().is_relative_to(inside):
            return False
        reason = (
            f"a symbolic link to {path.resolve()}, outside the folder {inside}: not followed "
            "(allow it with --follow-symlinks / FolderSource(follow_symlinks=True))"
        )
        log.warning("symlink_refused: %s: %s", path, reason)
        self.skipped.append((path.as_posix(), reason))
        return True

    def items(self) -> Iterator[SourceItem]:
        inside = self.folder.resolve()
        seen: set[str] = set()
        for p in self._paths:
            if not self._refused(p, inside):  # checked again: a link may have been planted since the listing
                item = _item(p, None if self.follow_symlinks else inside)
                if item.document_id not in seen:  # two paths to one file (a link since the listing): once
                    seen.add(item.document_id)
                    yield item

    def __len__(self) -> int:
        return len(self._paths)


class FileListSource:
    """An explicit list of files. Never deletes anything (it lists no folder)."""

    def __init__(self, files: Sequence[str | Path]) -> None:
        self.files = [Path(f) for f in files]
        for f in self.files:
            if not f.is_file():
                raise ConfigError(f"{f}: no such file")

    @property
    def root(self) -> None:
        return None

    def items(self) -> Iterator[SourceItem]:
        for p in self.files:
            yield _item(p)

    def __len__(self) -> int:
        return len(self.files)
