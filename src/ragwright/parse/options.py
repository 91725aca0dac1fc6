"""The parsers' options, beside the parsers (re-exported by :mod:`ragwright.options`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ragwright._validate import OptionsBase, check_bool, check_float, check_int
from ragwright.errors import ConfigError


@dataclass(frozen=True)
class ParseOptions(OptionsBase):
    """Safety limits and format switches for parsing. Every limit has a default and can be raised.

    * ``max_file_bytes``: refuse larger inputs before parsing;
    * ``max_pages`` / ``max_sheets`` / ``max_rows`` / ``max_slides``: stop with ``LimitExceeded``;
    * ``max_decompressed_bytes`` / ``max_compression_ratio``: checked from a zip's central directory
      before anything is extracted (zip bombs);
    * ``timeout_s`` / ``max_memory_mb``: per-document budget of the isolated parser worker;
    * ``pdf_password``: tried on encrypted PDFs (otherwise they are refused as "encrypted");
    * ``pdf_passwords``: per-file passwords, ``{pattern: password}`` (a mapping or pairs): a pattern is a
      file name, a path or a glob over either (``"reports/*.pdf"``); the first match wins, then
      ``pdf_password``;
    * ``ocr``: route image-only pages to OCR; ``ocr_min_confidence``: pages below are flagged, not indexed;
    * ``ocr_images``: OCR the pictures inside documents too (figures and scans on PDF pages that have a
      text layer, pictures in DOCX/PPTX/XLSX; at most 20 a document and 3 megapixels of OCR); needs ``ocr``;
    * ``include_comments`` / ``include_deleted``: DOCX comments and tracked deletions (off by default);
    * ``isolate``: parse binary formats in a worker process (on by default).
    """

    max_file_bytes: int = 100 * 1024 * 1024
    max_pages: int = 2000
    max_sheets: int = 100
    max_rows: int = 200_000
    max_slides: int = 1000
    max_decompressed_bytes: int = 500 * 1024 * 1024
    max_compression_ratio: float = 200.0
    timeout_s: float = 120.0
    max_memory_mb: int = 2048
    pdf_password: str | None = field(default=None, repr=False)
    pdf_passwords: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    ocr: bool = True
    ocr_min_confidence: float = 0.6
    ocr_images: bool = True
    include_comments: bool = False
    include_deleted: bool = False
    isolate: bool = True

    def __post_init__(self) -> None:
        for name in (
            "max_file_bytes",
            "max_pages",
            "max_sheets",
            "max_rows",
            "max_slides",
            "max_decompressed_bytes",
            "max_memory_mb",
        ):
            check_int(name, getattr(self, name), minimum=1)
        check_float("max_compression_ratio", self.max_compression_ratio, lo=1.0)
        check_float("timeout_s", self.timeout_s, lo=0.0, lo_open=True)
        check_float("ocr_min_confidence", self.ocr_min_confidence, lo=0.0, hi=1.0)
        if self.pdf_password is not None and not isinstance(self.pdf_password, str):
            raise ConfigError.invalid("pdf_password", "…", "a string or None")
        raw = self.pdf_passwords
        try:
            pairs = [tuple(p) for p in (raw.items() if isinstance(raw, Mapping) else raw)]
        except TypeError:
            pairs = [()]
        checked = tuple((p[0], p[1]) for p in pairs if len(p) == 2 and all(isinstance(x, str) and x for x in p))
        if isinstance(raw, str) or len(checked) != len(pairs):
            raise ConfigError.invalid(
                "pdf_passwords", "…", "a mapping (or pairs) of non-empty file patterns to non-empty passwords"
            )
        object.__setattr__(self, "pdf_passwords", checked)
        for name in ("ocr", "ocr_images", "include_comments", "include_deleted", "isolate"):
            check_bool(name, getattr(self, name))

    def password_for(self, path: str, name: str = "") -> str | None:
        """The password to try on the PDF at *path* (a path or ``file://`` URI) named *name*: the first
        ``pdf_passwords`` pattern matching the path or the name, else ``pdf_password``."""
        import fnmatch
        from urllib.parse import unquote, urlparse

        if path.startswith("file://"):
            path = unquote(urlparse(path).path)
        name = name or path.rsplit("/", 1)[-1]
        for pattern, password in self.pdf_passwords:
            if pattern in (path, name) or path.endswith("/" + pattern.lstrip("/")):
                return password
            if fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(name, pattern):
                return password
            if fnmatch.fnmatchcase(path, "*/" + pattern.lstrip("/")):
                return password
        return self.pdf_password
