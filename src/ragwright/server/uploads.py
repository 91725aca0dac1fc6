"""Housekeeping of a tenant's upload folder: failed uploads are kept within a quota and an age.

An upload that fails to parse stays on disk beside its dead letter, so it can be retried — but not
without bounds. After each upload (and for every tenant folder when the app starts), the folder is swept:

* failed uploads (a dead letter with no chunks) older than ``failed_upload_ttl_s`` go;
* the rest are kept newest first up to ``failed_upload_quota_bytes`` a tenant; older ones go;
* files no registry record refers to (an upload whose ingestion never ran: a crash) and partial
  copies (``.name.….part``) go once they are an hour old.

A removed failed upload's dead letter is removed with it (the record becomes a tombstone), so the
registry never lists a failure whose file is gone. Indexed uploads are never touched here.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path

from ragwright.errors import ConfigError
from ragwright.model.records import DocumentStatus
from ragwright.stores.base import Store

log = logging.getLogger(__name__)

#: How old a partial copy or an unrecorded upload must be before it counts as a leftover.
LEFTOVER_AGE_S = 3600.0


@dataclass(frozen=True)
class SweepResult:
    """What a sweep removed: failed uploads (document ids) and leftover files."""

    failed_removed: tuple[str, ...] = ()
    leftovers_removed: int = 0


def sweep_uploads(
    store: Store, folder: Path, *, quota_bytes: int, ttl_s: float, now: float | None = None
) -> SweepResult:
    """Sweep one tenant's upload folder (see the module docstring)."""
    now = time.time() if now is None else now
    failed: list[tuple[float, int, Path, str]] = []
    leftovers = 0
    try:
        entries = list(folder.iterdir())
    except OSError:
        return SweepResult()
    for path in entries:
        try:
            info = path.lstat()
        except OSError:
            continue
        if not path.is_file() or path.is_symlink():
            continue
        old = now - info.st_mtime > LEFTOVER_AGE_S
        if path.name.startswith(".") and path.name.endswith(".part"):
            leftovers += _unlink(path) if old else 0
            continue
        doc_id = path.resolve().as_posix()
        record = store.get_record(doc_id)
        if record is None or record.status is DocumentStatus.DELETED:
            leftovers += _unlink(path) if old or record is not None else 0
        elif record.status is DocumentStatus.FAILED and record.chunk_count == 0:
            failed.append((info.st_mtime, info.st_size, path, doc_id))
    removed: list[str] = []
    kept_bytes = 0
    for mtime, size, path, doc_id in sorted(failed, reverse=True):  # newest first
        if now - mtime <= ttl_s and kept_bytes + size <= quota_bytes:
            kept_bytes += size
            continue
        if _unlink(path):
            store.remove_document(doc_id)
            removed.append(doc_id)
    if removed or leftovers:
        log.info("uploads_swept: %s: %d failed upload(s) and %d leftover(s) removed", folder, len(removed), leftovers)
    return SweepResult(tuple(removed), leftovers)


def safe_file_name(name: str | None) -> str:
    """A file name safe to create in the staging folder (no folders, no hidden files, no odd characters)."""
    base = re.split(r"[\\/]", name or "")[-1].strip()
    base = re.sub(r"[^\w.\- ]+", "_", base).lstrip(". ")[:150]
    if not base or not re.search(r"\w", base):
        raise ConfigError(f"upload file name {name!r} is not usable: give the file a name such as notes.md")
    return base


def tenant_folders(staging_dir: Path) -> list[Path]:
    """The tenants' upload folders under *staging_dir* (none when it does not exist yet)."""
    try:
        return sorted(p for p in staging_dir.iterdir() if p.is_dir())
    except OSError:
        return []


def _unlink(path: Path) -> int:
    with contextlib.suppress(FileNotFoundError):
        try:
            path.unlink()
        except OSError as exc:
            log.warning("upload_sweep_failed: %s: %s", path, exc)
            return 0
        return 1
    return 0
