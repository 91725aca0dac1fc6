"""Deterministic identities and canonical hashing.

Identity is never text or position alone: a chunk id derives from its document id, the hash of its
content and its position, so the same input always yields the same index state (idempotent ingest).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ragwright.errors import ConfigError


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace: equal data, equal text."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of raw bytes (the content hash of a source document)."""
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """Hex SHA-256 of text encoded as UTF-8."""
    return sha256_bytes(text.encode("utf-8"))


def content_hash(text: str) -> str:
    """Hash of a chunk's content, as used in its id."""
    return sha256_text(text)


def chunk_id(document_id: str, chunk_content_hash: str, position: int) -> str:
    """The id of the chunk at *position* in *document_id* whose content hashes to *chunk_content_hash*."""
    if position < 0:
        raise ConfigError(f"position must be >= 0, got {position}", field="position", value=position)
    key = f"{document_id}\x1f{chunk_content_hash}\x1f{position}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def metadata_hash(metadata: dict[str, Any]) -> str:
    """Hash of a metadata mapping, independent of key order."""
    return sha256_text(canonical_json(metadata))
