"""UrlSource against a local HTTP server on 127.0.0.1: fetch, dead letters, size limit, redirects,
conditional re-ingest (unchanged ETag → skipped without the body), and the explicit opt-in."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from ragwright.errors import ConfigError
from ragwright.options import RetrievalOptions
from ragwright.rag import Rag
from ragwright.sources import UrlSource, open_source
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder

BM25 = RetrievalOptions(use_dense_search=False, use_keyword_search=True, top_k=3)
PAGES: dict[str, tuple[str, bytes]] = {
    "/page": (
        "text/plain",
        b"<html><head><title>Wombats</title></head><body><p>wombatword lives here</p></body></html>",
    ),
    "/notes.md": ("application/octet-stream", b"# Notes\n\nmarkdownword in a note\n"),
    "/big": ("text/plain", b"x" * 5000),
}


class _Handler(BaseHTTPRequestHandler):
    bodies: ClassVar[list[str]] = []

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/page")
            self.end_headers()
            return
        if self.path == "/loop":
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.end_headers()
            return
        if self.path == "/evil":
            self.send_response(302)
            self.send_header("Location", "file:///etc/passwd")
            self.end_headers()
            return
        if self.path == "/chunked-big":  # no Content-Length: the limit applies while streaming
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"y" * 5000)
            return
        if self.path == "/dated":
            body = b"# Dated\n\na page the server says was modified in 2015\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path not in PAGES:
            self.send_error(404, "Not Found")
            return
        content_type, body = PAGES[self.path]
        etag = f'"{hash(body) & 0xFFFFFF:x}"'
        if self.headers.get("If-None-Match") == etag:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
            return
        self.bodies.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", etag)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Handler.bodies = []
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_pages_are_fetched_detected_by_content_and_searchable(tmp_path: Path, server: str) -> None:
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    report = rag.ingest(UrlSource([f"{server}/page", f"{server}/notes.md", f"{server}/moved"]))
    assert report.added == 3 and not report.failed
    hits = rag.search("wombatword", BM25)
    assert hits[0].document_id in (f"{server}/page", f"{server}/moved")  # the URL is the stable id
    assert hits[0].chunk.metadata["url"] == hits[0].document_id
    record = rag.store.get_record(f"{server}/page")
    assert record is not None and record.parser_version.startswith("html")  # by content, not text/plain


def test_http_errors_and_oversized_bodies_are_dead_lettered(tmp_path: Path, server: str) -> None:
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    source = UrlSource(
        [
            f"{server}/page",
            f"{server}/missing",
            f"{server}/big",
            f"{server}/chunked-big",
            f"{server}/loop",
            f"{server}/evil",
        ],
        max_bytes=1000,
        max_redirects=3,
    )
    report = rag.ingest(source)
    assert report.added == 1
    reasons = {f.document.rsplit("/", 1)[-1]: (f.stage, f.reason) for f in report.failed}
    assert reasons["missing"][0] == "read" and "404" in reasons["missing"][1]
    assert "over the limit" in reasons["big"][1] and "over the limit" in reasons["chunked-big"][1]
    assert "redirects" in reasons["loop"][1]
    assert "refused" in reasons["evil"][1]
    failed = {f["document"] for f in rag.status()["failed_documents"]}
    assert f"{server}/missing" in failed


def test_unchanged_etag_is_skipped_without_downloading_the_body(
    tmp_path: Path, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    urls = [f"{server}/page", f"{server}/notes.md"]
    assert rag.ingest(UrlSource(urls)).added == 2
    assert sorted(_Handler.bodies) == ["/notes.md", "/page"]
    _Handler.bodies.clear()
    again = rag.ingest(UrlSource(urls))
    assert again.unchanged == 2 and again.chunks == 0
    assert _Handler.bodies == []  # 304: no body sent
    monkeypatch.setitem(PAGES, "/notes.md", ("text/markdown", b"# Notes\n\nchangedword now\n"))
    third = rag.ingest(UrlSource(urls))
    assert third.updated == 1 and third.unchanged == 1 and _Handler.bodies == ["/notes.md"]
    assert rag.search("changedword", BM25)[0].document_id == f"{server}/notes.md"


def test_urls_are_opt_in_and_checked() -> None:
    with pytest.raises(ConfigError, match="allow-http"):
        open_source("https://example.com/a.pdf")
    assert isinstance(open_source("https://example.com/a.pdf", allow_http=True), UrlSource)
    for bad in ("ftp://example.com/x", "file:///etc/passwd", "example.com", "http://"):
        with pytest.raises(ConfigError):
            UrlSource([bad])
    with pytest.raises(ConfigError):
        UrlSource(["https://example.com"], timeout=0)


def test_cli_ingest_refuses_a_url_without_allow_http(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ragwright.cli import main

    result = CliRunner().invoke(main, ["--store", str(tmp_path / "s.db"), "ingest", "http://127.0.0.1:9/x"])
    assert result.exit_code == 2 and "--allow-http" in result.output
    assert not (tmp_path / "s.db").exists()


def test_the_ingestion_size_limit_caps_downloads_too(tmp_path: Path, server: str) -> None:
    """Issue 21 item 8: a body over ParseOptions.max_file_bytes is never downloaded whole, even when the
    source's own max_bytes is larger (Content-Length refused up front; a chunked body cut off streaming)."""
    from ragwright.options import IngestOptions, ParseOptions

    options = IngestOptions(parse=ParseOptions(max_file_bytes=1000))
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder(), ingest_options=options)
    source = UrlSource([f"{server}/page", f"{server}/big", f"{server}/chunked-big"])  # max_bytes 50 MiB
    report = rag.ingest(source)
    assert report.added == 1
    reasons = {f.document.rsplit("/", 1)[-1]: f.reason for f in report.failed}
    assert "5,000 bytes, over the limit of 1,000" in reasons["big"]  # from Content-Length, body unread
    assert "over the limit of 1,000 bytes (streamed" in reasons["chunked-big"]


def test_last_modified_dates_the_page(tmp_path: Path, server: str) -> None:
    """Issue 22 item 5: HTTP Last-Modified becomes updated_at, recorded as such, for time decay."""
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    assert rag.ingest(UrlSource([f"{server}/dated", f"{server}/page"])).added == 2
    (dated,) = rag.store.document_chunks(f"{server}/dated")
    assert dated.metadata["updated_at"] == "2015-10-21T07:28:00+00:00"
    assert dated.metadata["updated_at_source"] == "http_last_modified"
    (undated,) = rag.store.document_chunks(f"{server}/page")
    assert "updated_at" not in undated.metadata and "created_at" not in undated.metadata  # never made up
