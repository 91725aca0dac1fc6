from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.models.fake_http import FakeServer, serve


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    """A scripted HTTP server on 127.0.0.1 (see tests/models/fake_http.py)."""
    yield from serve()
