"""Parsers: bytes in, a :class:`~ragwright.model.document.Document` of typed elements out."""

from ragwright.parse.registry import parse_bytes, parser_version_for

__all__ = ["parse_bytes", "parser_version_for"]
