"""Web pages and files by URL (opt-in HTTP): contacted only for the URLs the caller passes.

The document id is the URL itself (stable across runs). Each fetch is bounded: http/https only, a
timeout per request, at most ``max_redirects`` redirects (each checked again for its scheme), and at
most ``max_bytes`` read (streamed; a larger body is refused, never truncated). The Content-Type is
only a hint: formats are detected from the bytes. Ingestion binds the store's registry and staging
(:meth:`UrlSource.bind_registry`): a URL indexed before is asked with ``If-None-Match`` /
``If-Modified-Since``, and on ``304`` (or the same ETag) its staged bytes are used without downloading
the body — so an unchanged page is skipped like an unchanged file.
"""

from __future__ import annotations

import functools
import logging
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

from ragwright.errors import ConfigError, LimitExceeded, ParseError
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.sources.base import SourceItem

log = logging.getLogger(__name__)


def is_url(text: str) -> bool:
    return text.lower().startswith(("http://", "https://"))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # redirects are followed (and bounded) by UrlSource itself


class UrlSource:
    """Documents fetched from *urls*. Nothing is contacted until :meth:`items` is iterated."""

    def __init__(
        self,
        urls: Sequence[str],
        *,
        timeout: float = 20.0,
        max_bytes: int = 50 * 1024 * 1024,
        max_redirects: int = 5,
        user_agent: str = "ragwright",
    ) -> None:
        if isinstance(urls, str):
            urls = [urls]
        for url in urls:
            if not isinstance(url, str) or not is_url(url) or not urlsplit(url).hostname:
                raise ConfigError(f"{url!r} is not an http(s) URL (UrlSource fetches http:// and https:// only)")
        if not isinstance(timeout, int | float) or timeout <= 0:
            raise ConfigError.invalid("timeout", timeout, "a positive number of seconds")
        if not isinstance(max_bytes, int) or max_bytes < 1:
            raise ConfigError.invalid("max_bytes", max_bytes, "a positive number of bytes")
        if not isinstance(max_redirects, int) or max_redirects < 0:
            raise ConfigError.invalid("max_redirects", max_redirects, "0 or more")
        self.urls = list(dict.fromkeys(urls))
        self.timeout, self.max_bytes, self.max_redirects = float(timeout), max_bytes, max_redirects
        self._limit = max_bytes  # the smaller of max_bytes and the ingestion's file size limit
        self.user_agent = user_agent
        self._get_record: Callable[[str], DocumentRecord | None] | None = None
        self._staged: Callable[[str], bytes | None] | None = None
        self._opener = urllib.request.build_opener(_NoRedirect())

    @property
    def root(self) -> None:
        return None  # a list of URLs: nothing is deleted for being absent

    def __len__(self) -> int:
        return len(self.urls)

    def bind_registry(
        self, get_record: Callable[[str], DocumentRecord | None], staged: Callable[[str], bytes | None]
    ) -> None:
        """Called by ingestion: what the store knows of each URL, for conditional requests."""
        self._get_record, self._staged = get_record, staged

    def bind_limit(self, max_bytes: int) -> None:
        """Called by ingestion with its file size limit: no body larger than it is downloaded."""
        self._limit = min(self.max_bytes, max_bytes)

    def items(self) -> Iterator[SourceItem]:
        for url in self.urls:
            metadata: dict[str, Any] = {"url": url}
            yield SourceItem(
                document_id=url,
                uri=url,
                load=functools.partial(self._load, url, metadata),
                name_hint=_name_hint(url),
                metadata=metadata,
            )

    def _load(self, url: str, metadata: dict[str, Any]) -> bytes:
        """Fetch (conditionally when indexed before); the validators go into the item's metadata."""
        known = self._known(url)
        try:
            data, validators = self.fetch(url, known)
        except Unchanged:
            staged = self._staged(known[0]) if known is not None and self._staged is not None else None
            if staged is not None:
                log.debug("url_unchanged: %s", url)
                return staged
            data, validators = self.fetch(url, None)
        metadata.update({k: v for k, v in validators.items() if k in ("etag", "last_modified")})
        return data

    def _known(self, url: str) -> tuple[str, dict[str, str]] | None:
        record = self._get_record(url) if self._get_record is not None else None
        if record is None or record.status is not DocumentStatus.INDEXED:
            return None
        meta = record.source_meta
        return record.content_hash, {k: str(v) for k, v in meta.items() if k in ("etag", "last_modified")}

    def fetch(self, url: str, known: tuple[str, dict[str, str]] | None = None) -> tuple[bytes, dict[str, str]]:
        """The body of *url* (bounded) and its validators (``etag``, ``last_modified``, ``content_type``).

        With *known* (content hash, validators of the copy held), raises :class:`Unchanged` when the
        server confirms that copy is current (304, or the same ETag) instead of reading the body.
        """
        current = url
        for _ in range(self.max_redirects + 1):
            request = urllib.request.Request(current, headers={"User-Agent": self.user_agent})
            if known is not None:
                if known[1].get("etag"):
                    request.add_header("If-None-Match", known[1]["etag"])
                if known[1].get("last_modified"):
                    request.add_header("If-Modified-Since", known[1]["last_modified"])
            try:
                response = self._opener.open(request, timeout=self.timeout)
            except urllib.error.HTTPError as exc:
                if exc.code in (301, 302, 303, 307, 308):
                    current = self._redirect(current, exc.headers.get("Location"))
                    continue
                if exc.code == 304 and known is not None:
                    raise Unchanged(known[0]) from None
                raise ParseError(f"HTTP {exc.code} {exc.reason} for {current}") from None
            except (urllib.error.URLError, TimeoutError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                raise ParseError(f"cannot fetch {current}: {reason}") from None
            with response:
                validators = {
                    k: v
                    for k, v in (
                        ("etag", response.headers.get("ETag")),
                        ("last_modified", response.headers.get("Last-Modified")),
                        ("content_type", response.headers.get("Content-Type")),
                    )
                    if v
                }
                if known is not None and validators.get("etag") and validators["etag"] == known[1].get("etag"):
                    raise Unchanged(known[0])
                length = response.headers.get("Content-Length")
                if length is not None and length.isdigit() and int(length) > self._limit:
                    raise LimitExceeded(f"{url} is {int(length):,} bytes, over the limit of {self._limit:,}")
                return self._read(url, response), validators
        raise ParseError(f"{url}: more than {self.max_redirects} redirects")

    def _redirect(self, current: str, location: str | None) -> str:
        from urllib.parse import urljoin

        if not location:
            raise ParseError(f"{current}: redirect without a Location")
        target = urljoin(current, location)
        if not is_url(target):
            raise ParseError(f"{current}: redirect to {target!r} refused (http and https only)")
        return target

    def _read(self, url: str, response: Any) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            block = response.read(64 * 1024)
            if not block:
                return b"".join(chunks)
            size += len(block)
            if size > self._limit:
                raise LimitExceeded(f"{url} is over the limit of {self._limit:,} bytes (streamed; not truncated)")
            chunks.append(block)


class Unchanged(ParseError):
    """The server confirmed the registry's copy of a URL is current (carries its content hash)."""

    def __init__(self, content_hash: str) -> None:
        super().__init__("unchanged")
        self.content_hash = content_hash


def _name_hint(url: str) -> str:
    path = urlsplit(url).path
    return unquote(path.rsplit("/", 1)[-1]) if path and not path.endswith("/") else ""
