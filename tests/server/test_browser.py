"""The web page in a real browser: Playwright driving Debian's Chromium against a live server.

Ingest a document through the panel, ask a question, watch the streamed answer, click its
``[Source N]`` citation and see the source; a screenshot is kept in ``test-artifacts/``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragwright import Rag, RagOptions
from ragwright.server import create_app
from ragwright.server.live import serve_in_thread
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
DOC = (
    "# Refunds\n\n## Policy\n\nCustomers may request a refund within 30 days of delivery.\n\n"
    "## Gift cards\n\nGift cards cannot be refunded.\n"
)


def _chromium() -> str:
    for candidate in (os.environ.get("RAGWRIGHT_CHROMIUM"), "chromium", "chromium-browser"):
        found = candidate and shutil.which(candidate)
        if found:
            return found
    pytest.fail("Debian's chromium is not installed: apt-get install chromium (.ci/run does it)")


@pytest.fixture
def live_url(tmp_path: Path) -> Iterator[str]:
    rag = Rag(
        SqliteStore(tmp_path / "store.db"),
        HashingEmbedder(),
        rag_options=RagOptions(use_hybrid_search=True, extractive_min_similarity=0.3),
    )
    with rag, serve_in_thread(create_app(rag)) as url:
        yield url


@pytest.mark.slow
def test_page_ingests_asks_streams_and_shows_the_cited_source(live_url: str, tmp_path: Path) -> None:
    from playwright import sync_api  # the test extra installs it

    chromium = _chromium()
    doc = tmp_path / "refunds.md"
    doc.write_text(DOC)
    shot = tmp_path / "server-page.png"
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.set_default_timeout(30_000)
            console_errors: list[str] = []
            page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
            page.goto(live_url + "/")
            sync_api.expect(page.locator("#status-line")).to_contain_text("0 documents")

            page.set_input_files("#ingest-files", str(doc))
            page.click("#ingest-button")
            page.wait_for_selector("#ingest-result[data-done='true']")
            sync_api.expect(page.locator("#ingest-result")).to_contain_text("added 1")
            sync_api.expect(page.locator("#status-line")).to_contain_text("1 documents")

            page.fill("#ask-input", "Can customers request a refund within 30 days of delivery?")
            page.click("#ask-button")
            page.wait_for_selector("#answer[data-done='true']")
            answer = page.locator("#answer")
            assert int(answer.get_attribute("data-tokens") or 0) >= 1  # arrived as streamed token events
            sync_api.expect(answer).to_contain_text("Customers may request a refund")
            citation = page.locator("#answer a.cite").first
            sync_api.expect(citation).to_have_text("[Source 1]")

            citation.click()
            view = page.locator("#source-view")
            sync_api.expect(view).to_be_visible()
            sync_api.expect(view.locator(".source-text")).to_contain_text("request a refund within 30 days")
            sync_api.expect(view.locator(".title")).to_contain_text("Refunds")
            sync_api.expect(view.locator(".where")).to_contain_text("Policy")
            view.locator("details.scores summary").click()
            sync_api.expect(view.locator("table.arms")).to_contain_text("bm25")

            page.fill("#search-input", "gift cards")
            page.click("#search-button")
            sync_api.expect(page.locator("#results li").first).to_contain_text("Gift cards cannot be refunded")
            page.screenshot(path=str(shot), full_page=True)
            assert console_errors == []
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(shot, ARTIFACTS / shot.name)
