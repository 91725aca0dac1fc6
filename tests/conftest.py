from __future__ import annotations

from pathlib import Path

import pytest

from ragwright.testing.doubles import HashingEmbedder

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():  # pragma: no cover - the checkout always has ../shared here and in CI
        pytest.fail(f"{SHARED} is missing: tests read fixtures from ../shared beside the checkout")
    return SHARED


@pytest.fixture
def hashing() -> HashingEmbedder:
    return HashingEmbedder()
