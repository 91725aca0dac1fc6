"""In-process indexes: analyzers and an incremental BM25 index.

Importing this package is cheap: numpy is imported on first use, inside the functions that need it.
"""

from __future__ import annotations

from ragwright.index.analyzers import (
    ENGLISH_STOP_WORDS,
    Analyzer,
    DefaultAnalyzer,
    EnglishAnalyzer,
    get_analyzer,
)
from ragwright.index.bm25 import Bm25Index

__all__ = [
    "ENGLISH_STOP_WORDS",
    "Analyzer",
    "Bm25Index",
    "DefaultAnalyzer",
    "EnglishAnalyzer",
    "get_analyzer",
]
