"""The dates time decay reads: ``created_at`` and ``updated_at`` of each chunk, with where each came from.

Time-weighted retrieval (:mod:`ragwright.retrieve.strategies.time_weighted`) discounts a result by the
age of its ``updated_at``, else its ``created_at``; a chunk with neither keeps its score. So a date is
only ever *found*, never made up: each comes from the strongest origin that has it, and the origin is
recorded beside it (``created_at_source`` / ``updated_at_source``):

==========================  ===========================================================================
origin                      what
==========================  ===========================================================================
``metadata``                given by the caller: ``ingest(metadata={"created_at": …})``, ``--meta``
``front_matter``            a Markdown file's YAML front matter (``date``, ``lastmod`` … quoted or not)
``document_properties``     PDF info dictionary, DOCX/XLSX/PPTX core properties (created, modified)
``email_date``              an e-mail's ``Date`` header (``created_at``)
``html_meta``               an HTML page's meta tags or JSON-LD (published, modified)
``record``                  a JSONL corpus record's metadata
``http_last_modified``      a URL's ``Last-Modified`` header (``updated_at``)
``file_mtime``              a file's modification time (``updated_at``)
==========================  ===========================================================================

Values are stored as ISO-8601 strings (UTC when the origin has no zone). A date that does not parse
is dropped from what a document says, and refused (``ConfigError``) from what the caller says.
"""

from __future__ import annotations

import email.utils
import math
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any, Final

from ragwright.errors import ConfigError

DATE_KEYS: Final = ("created_at", "updated_at")
SOURCE_KEYS: Final = {"created_at": "created_at_source", "updated_at": "updated_at_source"}
#: Where a parser's dates come from, by the document's MIME type.
_DOCUMENT_ORIGIN: Final = {
    "text/markdown": "front_matter",
    "message/rfc822": "email_date",  # EML and Outlook MSG alike
    "text/html": "html_meta",
}
#: Item metadata a source sets, and which date it gives: (key, date, origin).
_SOURCE_DATES: Final = (
    ("last_modified", "updated_at", "http_last_modified"),
    ("file_mtime", "updated_at", "file_mtime"),
)


def parse_date(value: Any) -> datetime | None:
    """An aware datetime from ISO 8601 (``2024-05-01``, ``2024-05-01T10:00:00Z``), RFC 2822 (``Wed, 01
    May 2024 10:00:00 GMT``: HTTP and e-mail), epoch seconds, or a date/datetime; ``None`` otherwise.
    A time without a zone is taken as UTC."""
    try:
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, datetime):
            parsed = value
        elif isinstance(value, date):
            parsed = datetime(value.year, value.month, value.day)
        elif isinstance(value, int | float):
            if not math.isfinite(value):
                return None
            parsed = datetime.fromtimestamp(float(value), tz=UTC)
        elif isinstance(value, str) and value.strip():
            text = value.strip()
            try:
                parsed = datetime.fromisoformat(text)
            except ValueError:
                parsed = email.utils.parsedate_to_datetime(text)
        else:
            return None
    except (ValueError, TypeError, OverflowError, OSError, IndexError):
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def iso(value: Any) -> str | None:
    """*value* as an ISO-8601 string, or ``None`` when it is no date."""
    parsed = parse_date(value)
    return parsed.isoformat() if parsed is not None else None


def caller_dates(metadata: Mapping[str, Any] | None) -> dict[str, str]:
    """``created_at`` / ``updated_at`` the caller gave, as ISO strings; a value that is no date is refused."""
    out: dict[str, str] = {}
    for key in DATE_KEYS:
        if metadata is None or metadata.get(key) is None:
            continue
        value = iso(metadata[key])
        if value is None:
            accepted = "a date: ISO 8601 (2024-05-01, 2024-05-01T10:00:00Z) or epoch seconds"
            raise ConfigError.invalid(f"metadata[{key!r}]", metadata[key], accepted)
        out[key] = value
    return out


def resolve_dates(
    given: Mapping[str, Any], document_meta: Mapping[str, Any], mime_type: str | None, item_meta: Mapping[str, Any]
) -> dict[str, str]:
    """The chunk metadata of the dates: each of ``created_at`` / ``updated_at`` from the strongest origin
    that has one (the caller's *given*, the document's own, then the source's), with its ``…_source``."""
    document_origin = _DOCUMENT_ORIGIN.get(mime_type or "", "document_properties" if mime_type else "record")
    candidates: dict[str, list[tuple[Any, str]]] = {key: [] for key in DATE_KEYS}
    for key in DATE_KEYS:
        candidates[key].append((given.get(key), "metadata"))
        candidates[key].append((document_meta.get(key), document_origin))
    for source_key, key, origin in _SOURCE_DATES:
        candidates[key].append((item_meta.get(source_key), origin))
    out: dict[str, str] = {}
    for key, options in candidates.items():
        for value, origin in options:
            stamp = iso(value)
            if stamp is not None:
                out[key], out[SOURCE_KEYS[key]] = stamp, origin
                break
    return out
