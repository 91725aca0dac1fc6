"""``/docs`` and ``/redoc`` render in headless Chromium with the network off: Swagger UI and ReDoc come
from assets installed with the server, not from a CDN."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ragwright import Rag
from ragwright.server import create_app
from ragwright.server.docs import FILES, assets_dir
from ragwright.server.live import serve_in_thread
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder

from .test_browser import _chromium


def make_app(tmp_path: Path) -> object:
    return create_app(Rag(MemoryStore(), HashingEmbedder()), {"staging_dir": str(tmp_path / "staging")})


def test_the_pages_name_only_local_assets(tmp_path: Path) -> None:
    with TestClient(make_app(tmp_path)) as client:  # type: ignore[arg-type]
        for page in ("/docs", "/redoc"):
            html = client.get(page).text
            urls = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html)
            assert urls and all(u.startswith("/docs-assets/") for u in urls), urls
            assert "http://" not in html and "https://" not in html  # no CDN, no Google Fonts
            assert "script-src 'self'" in client.get(page).headers["Content-Security-Policy"]
        for name in FILES:
            assert client.get(f"/docs-assets/{name}").status_code == 200
        assert client.get("/docs/oauth2-redirect").status_code == 200
    assert (assets_dir() / "swagger-ui-bundle.js").stat().st_size > 100_000


@pytest.fixture
def live_url(tmp_path: Path) -> Iterator[str]:
    with serve_in_thread(make_app(tmp_path)) as url:
        yield url


@pytest.mark.slow
def test_swagger_ui_and_redoc_render_with_the_network_off(live_url: str, tmp_path: Path) -> None:
    from playwright import sync_api

    outside: list[str] = []
    host = live_url.split("//", 1)[1]
    with sync_api.sync_playwright() as pw:
        # every name but the server's loopback address is unresolvable: the network is off
        browser = pw.chromium.launch(
            executable_path=_chromium(),
            args=["--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
        )
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.set_default_timeout(30_000)

            def gate(route: sync_api.Route) -> None:
                if route.request.url.split("//", 1)[-1].startswith(host):
                    route.continue_()
                else:
                    outside.append(route.request.url)
                    route.abort()

            page.route("**/*", gate)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))

            page.goto(live_url + "/docs")
            sync_api.expect(page.locator(".swagger-ui .info .title")).to_contain_text("ragwright")
            paths = page.locator(".opblock-summary-path")
            sync_api.expect(paths.first).to_be_visible()
            shown = set(paths.all_inner_texts())
            assert {"/search", "/ask", "/v1/chat/completions"} <= {p.replace("\u200b", "") for p in shown}
            page.screenshot(path=str(tmp_path / "docs.png"))

            page.goto(live_url + "/redoc")
            sync_api.expect(page.locator("h1").first).to_contain_text("ragwright")
            sync_api.expect(page.get_by_text("/v1/chat/completions").first).to_be_attached()
            page.screenshot(path=str(tmp_path / "redoc.png"))
            assert errors == []
        finally:
            browser.close()
    assert outside == []  # nothing was fetched from anywhere but the server
