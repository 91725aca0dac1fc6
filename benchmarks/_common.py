"""Helpers the benchmark scripts share (run as ``python benchmarks/<script>.py``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def load_corpus(path: Path) -> list[tuple[str, str]]:
    """``(id, title + " " + text)`` for every record of a BEIR ``corpus.jsonl``."""
    docs: list[tuple[str, str]] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                docs.append((str(rec["_id"]), f"{rec.get('title', '')} {rec.get('text', '')}"))
    return docs


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[Any, float]:
    """Run *fn* *repeat* times; its last result and the best wall time."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return result, best
