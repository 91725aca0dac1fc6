"""Files and folders. The document id is the file's absolute POSIX path."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Sequence
from pathlib import Path

from ragwright.errors import ConfigError
from ragwright.sources.base import SourceItem

DEFAULT_EXCLUDE = (".*", "__pycache__", "node_modules", "*.pyc")


def _item(path: Path) -> SourceItem:
    resolved = path.resolve()
    return SourceItem(
        document_id=resolved.as_posix(),
        uri=resolved.as_uri(),
        load=resolved.read_bytes,
        name_hint=resolved.name,
        metadata={"file_name": resolved.name},
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
    ) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise ConfigError(f"{folder}: not a folder (give an existing folder to ingest)")
        self.include, self.exclude, self.recursive = tuple(include), tuple(exclude), recursive
        self._paths = self._list()

    @property
    def root(self) -> str:
        return self.folder.resolve().as_posix()

    def _excluded(self, rel: Path) -> bool:
        return any(fnmatch.fnmatch(part, pat) for part in rel.parts for pat in self.exclude)

    def _list(self) -> list[Path]:
        pattern = "**/*" if self.recursive else "*"
        found = []
        for p in sorted(self.folder.glob(pattern)):
            rel = p.relative_to(self.folder)
            if p.is_file() and not self._excluded(rel) and any(fnmatch.fnmatch(p.name, g) for g in self.include):
                found.append(p)
        return found

    def items(self) -> Iterator[SourceItem]:
        for p in self._paths:
            yield _item(p)

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
