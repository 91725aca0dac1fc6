"""The parser contract every format module follows.

A parser is a plain function ``parse_<format>(document_id, data, *, source, options) -> Document``:

* it returns the unified :class:`~ragwright.model.document.Document` — typed elements in reading
  order (``HEADING`` with ``level``, ``PARAGRAPH``, ``LIST_ITEM``, ``TABLE`` as Markdown, ``CODE``,
  ``TITLE`` …) with ``page`` where the format has pages and ``attributes`` for format facts, and
  document metadata (``title``, ``author``, ``created_at``/``updated_at`` as ISO-8601 strings,
  ``language``) in ``Document.metadata``;
* it raises :class:`~ragwright.errors.ParseError` with a specific reason for corrupt input, a reason
  starting with ``"encrypted"`` for password-protected input, and
  :class:`~ragwright.errors.LimitExceeded` when a :class:`~ragwright.options.ParseOptions` limit is hit;
* it imports its third-party library lazily through :func:`ragwright._deps.require` (naming the extra);
* it never reads the network and never trusts XML entity declarations (see :mod:`ragwright.parse.safexml`).

Each module also exposes ``VERSION = "<format>/<n>"`` (bump it when output changes: documents are
re-parsed exactly when their parser version changed).
"""

from __future__ import annotations

from typing import Protocol

from ragwright.model.document import Document
from ragwright.parse.options import ParseOptions


class Parser(Protocol):
    def __call__(self, document_id: str, data: bytes, *, source: str | None, options: ParseOptions) -> Document: ...
