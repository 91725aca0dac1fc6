"""XML and ZIP guards shared by every parser of a zip- or XML-based format.

* :func:`check_zip` reads a zip's central directory — before anything is extracted — and refuses
  archives whose declared decompressed size or compression ratio exceed the limits (zip bombs), or that
  hold absurd numbers of members.
* :func:`parse_xml` parses untrusted XML with entity expansion, external entities and DTDs refused
  (billion laughs, quadratic blowup, XXE).
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

from ragwright._deps import require
from ragwright.errors import LimitExceeded, ParseError
from ragwright.parse.options import ParseOptions

MAX_ZIP_MEMBERS = 20_000


def check_zip(data: bytes, options: ParseOptions) -> zipfile.ZipFile:
    """Open *data* as a zip after checking its declared sizes; raises before any extraction."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ParseError(f"corrupt zip container: {exc}") from exc
    members = archive.infolist()
    if len(members) > MAX_ZIP_MEMBERS:
        raise LimitExceeded(f"zip holds {len(members):,} members, over the limit of {MAX_ZIP_MEMBERS:,}")
    total = sum(m.file_size for m in members)
    packed = sum(m.compress_size for m in members) or 1
    if total > options.max_decompressed_bytes:
        raise LimitExceeded(
            f"zip bomb suspected: {total:,} bytes once decompressed, over max_decompressed_bytes "
            f"({options.max_decompressed_bytes:,})"
        )
    for m in members:
        ratio = m.file_size / max(m.compress_size, 1)
        if m.file_size > 1024 * 1024 and ratio > options.max_compression_ratio:
            raise LimitExceeded(
                f"zip bomb suspected: member {m.filename!r} expands {ratio:,.0f}x, over max_compression_ratio "
                f"({options.max_compression_ratio:,.0f})"
            )
    if total > 1024 * 1024 and total / packed > options.max_compression_ratio:
        raise LimitExceeded(f"zip bomb suspected: the archive expands {total / packed:,.0f}x")
    return archive


def parse_xml(data: bytes | str) -> Any:
    """An ``xml.etree`` element from untrusted XML; DTDs, entities and external references refused."""
    defused = require("defusedxml.ElementTree", "office", "safe XML parsing")
    try:
        return defused.fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except defused.ParseError as exc:
        raise ParseError(f"malformed XML: {exc}") from exc
    except Exception as exc:  # defusedxml's DTDForbidden / EntitiesForbidden / ExternalReferenceForbidden
        if type(exc).__module__.startswith("defusedxml"):
            raise ParseError(f"unsafe XML refused ({type(exc).__name__}): entity or DTD declarations") from exc
        raise
