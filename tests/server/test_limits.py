"""Limits: bodies cut off while they stream in (413), bounded concurrency (503), timeouts (504)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragwright.server.limits import Saturated, WorkLimiter, WorkTimeout
from tests.server.conftest import KEY_A, KEY_B, auth, keyed_config, make_rag


def _limited(make_client: Callable[..., TestClient], tmp_path: Path, **limits: Any) -> TestClient:
    return make_client(keyed_config(tmp_path, **limits))


def test_upload_too_large_is_413_and_nothing_is_kept(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    c = _limited(make_client, tmp_path, max_upload_bytes=4096)
    big = b"# Big\n\n" + b"word " * 2000
    response = c.post("/ingest", headers=auth(KEY_A), files=[("files", ("big.md", big, "text/markdown"))])
    assert response.status_code == 413
    assert "upload too large" in response.json()["error"] and "4096 bytes" in response.json()["error"]
    assert c.get("/documents", headers=auth(KEY_A)).json()["documents"] == []
    staged = tmp_path / "staging"
    assert not staged.exists() or not any(p.is_file() for p in staged.rglob("*"))
    small = c.post("/ingest", headers=auth(KEY_A), files=[("files", ("small.md", b"# S\n\nok", "text/markdown"))])
    assert small.status_code == 200


def test_a_file_over_the_parse_limit_is_413_before_it_is_staged(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    """Issue 21 item 8: the upload fits the request limit, but the file is over ParseOptions.max_file_bytes."""
    from ragwright import Rag
    from ragwright.options import IngestOptions, ParseOptions
    from ragwright.stores.memory import MemoryStore
    from ragwright.testing.doubles import HashingEmbedder

    rag = Rag(MemoryStore(), HashingEmbedder(), ingest_options=IngestOptions(parse=ParseOptions(max_file_bytes=1000)))
    c = make_client(keyed_config(tmp_path, max_upload_bytes=1 << 20), rag=rag)
    big = b"# Big\n\n" + b"word " * 2000
    response = c.post("/ingest", headers=auth(KEY_A), files=[("files", ("big.md", big, "text/markdown"))])
    assert response.status_code == 413 and "over the limit of 1,000" in response.json()["error"]
    staged = tmp_path / "staging"
    assert not any(p.is_file() for p in staged.rglob("*"))  # no partial file is kept
    assert c.get("/documents", headers=auth(KEY_A)).json()["documents"] == []


def test_a_streamed_body_without_length_is_cut_off(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    c = _limited(make_client, tmp_path, max_upload_bytes=4096, max_body_bytes=512)

    def chunks() -> Iterator[bytes]:  # chunked transfer: no Content-Length to refuse up front
        boundary = b"--xyz\r\n"
        yield boundary + b'Content-Disposition: form-data; name="files"; filename="big.md"\r\n\r\n'
        for _ in range(100):
            yield b"word " * 20
        yield b"\r\n--xyz--\r\n"

    headers = {**auth(KEY_A), "content-type": "multipart/form-data; boundary=xyz"}
    response = c.post("/ingest", headers=headers, content=chunks())
    assert response.status_code == 413 and "upload too large" in response.json()["error"]

    def json_chunks() -> Iterator[bytes]:
        yield b'{"query": "'
        for _ in range(100):
            yield b"refund " * 10
        yield b'"}'

    headers = {**auth(KEY_A), "content-type": "application/json"}
    response = c.post("/search", headers=headers, content=json_chunks())
    assert response.status_code == 413 and "request body too large" in response.json()["error"]


def test_json_body_over_the_limit_is_413(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    c = _limited(make_client, tmp_path, max_body_bytes=1000)
    response = c.post("/search", headers=auth(KEY_A), json={"query": "refund " * 500})
    assert response.status_code == 413 and "request body too large" in response.json()["error"]


def test_too_many_files_is_400(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    c = _limited(make_client, tmp_path, max_files=2)
    files = [("files", (f"f{i}.md", b"# F\n\nx", "text/markdown")) for i in range(3)]
    response = c.post("/ingest", headers=auth(KEY_A), files=files)
    assert response.status_code == 400 and "files" in response.json()["error"].lower()


def test_query_too_long_is_refused(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    c = _limited(make_client, tmp_path, max_query_chars=50)
    response = c.post("/search", headers=auth(KEY_A), json={"query": "x" * 51})
    assert response.status_code == 422 and "query" in response.json()["error"]


def test_saturated_server_answers_503(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    rag = make_rag()
    gate = threading.Event()

    async def held_search(*args: Any, **kwargs: Any) -> list[Any]:
        await asyncio.to_thread(gate.wait, 30)
        return []

    rag.asearch = held_search  # type: ignore[method-assign]
    c = make_client(keyed_config(tmp_path, max_concurrency=1, queue_timeout_s=0), rag=rag)
    limiter = c.app.state.service.limiter  # type: ignore[attr-defined]
    first: dict[str, Any] = {}
    worker = threading.Thread(
        target=lambda: first.update(r=c.post("/search", headers=auth(KEY_A), json={"query": "a"}))
    )
    worker.start()
    try:
        for _ in range(3000):  # wait (on state, not time) until the first search holds the only slot
            if limiter.active == 1:
                break
            threading.Event().wait(0.01)
        assert limiter.active == 1
        busy = c.post("/search", headers=auth(KEY_A), json={"query": "b"})
        assert busy.status_code == 503 and "busy" in busy.json()["error"]
        assert busy.headers["retry-after"]
    finally:
        gate.set()
        worker.join(30)
    assert first["r"].status_code == 200
    assert c.get("/status", headers=auth(KEY_A)).json()["ledger"]["busy_rejections"] == 1
    assert c.get("/status", headers=auth(KEY_B)).json()["ledger"]["busy_rejections"] == 0  # acme's, not globex's


def test_slow_work_times_out_with_504(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    rag = make_rag()
    gate = threading.Event()

    async def stuck(*args: Any, **kwargs: Any) -> Any:
        await asyncio.to_thread(gate.wait, 30)

    rag.asearch = stuck  # type: ignore[method-assign]
    rag.aask = stuck  # type: ignore[method-assign]
    c = make_client(keyed_config(tmp_path, request_timeout_s=0.05), rag=rag)
    try:
        response = c.post("/search", headers=auth(KEY_A), json={"query": "a"})
        assert response.status_code == 504 and "longer than" in response.json()["error"]
        asked = c.post("/ask", headers=auth(KEY_A), json={"question": "a"})
        assert asked.status_code == 504
        assert c.app.state.service.limiter.active == 0  # type: ignore[attr-defined]
    finally:
        gate.set()


def test_work_limiter_bounds_concurrency_and_queue() -> None:
    async def scenario() -> tuple[int, list[str]]:
        limiter = WorkLimiter(max_concurrency=2, queue_timeout_s=0.01, request_timeout_s=5)
        peak = 0
        release = asyncio.Event()

        async def work() -> str:
            nonlocal peak
            peak = max(peak, limiter.active)
            await release.wait()
            return "ok"

        tasks = [asyncio.create_task(limiter.run(work)) for _ in range(2)]
        for _ in range(100):  # let both take their slot
            if limiter.active == 2:
                break
            await asyncio.sleep(0)
        outcomes = []
        try:
            await limiter.run(work)
        except Saturated:
            outcomes.append("saturated")
        release.set()
        outcomes += await asyncio.gather(*tasks)
        with pytest.raises(WorkTimeout):
            await limiter.run(lambda: asyncio.sleep(1), timeout_s=0.01)
        return peak, outcomes

    peak, outcomes = asyncio.run(scenario())
    assert peak == 2 and outcomes == ["saturated", "ok", "ok"]


def test_an_abandoned_answer_stream_frees_its_slot(tmp_path: Path) -> None:
    from ragwright.server.auth import ANONYMOUS
    from ragwright.server.config import ServerConfig
    from ragwright.server.service import Service

    rag = make_rag()

    class Endless:
        closed = False

        def __aiter__(self) -> Endless:
            return self

        async def __anext__(self) -> str:
            return "more "

        @property
        def done(self) -> bool:
            return False

        async def aclose(self) -> None:
            Endless.closed = True

    rag.aask_stream = lambda *a, **k: Endless()  # type: ignore[method-assign]
    service = Service(rag, ServerConfig(), tmp_path)

    async def scenario() -> tuple[int, int, str]:
        events = await service.ask_events(ANONYMOUS, "q", None)
        held = service.limiter.active
        iterator = events.__aiter__()
        first = await iterator.__anext__()
        await events.release()  # what the route does when the client goes away
        await events.release()  # idempotent
        return held, service.limiter.active, first[1]

    held, after, first = asyncio.run(scenario())
    assert (held, after, first) == (1, 0, "more ") and Endless.closed
