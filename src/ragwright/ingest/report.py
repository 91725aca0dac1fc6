"""What an ingestion run did: counts, dead letters, and a ledger of time and work per stage."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class IngestFailure:
    """A dead-lettered document: which one, at which stage, and why."""

    document: str
    stage: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"document": self.document, "stage": self.stage, "reason": self.reason}


@dataclass
class IngestReport:
    """Counts of one run. ``to_dict`` is the CLI's ``ingest --json`` contract."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    #: Unchanged documents whose tenant or ACL changed: updated in place, not parsed or embedded again.
    access_updated: int = 0
    deleted: int = 0
    failed: list[IngestFailure] = field(default_factory=list)
    #: Files a source listed but refused (stage ``list``: a link outside the folder …); nothing recorded.
    skipped: list[IngestFailure] = field(default_factory=list)
    chunks: int = 0
    tokens_embedded: int = 0
    parse_cache_hits: int = 0
    ocr_pages: int = 0
    #: Hidden content stripped at parse time, in every format (a prompt-injection vector): HTML elements,
    #: DOCX/PPTX runs and shapes, hidden slides and sheets, unreadable cells, PDF text objects.
    hidden_elements: int = 0
    #: Chunks whose vector was kept from the document's previous version (same embedded text and model).
    embeddings_reused: int = 0
    #: Chat-model work of the chunking stages (contextual enrichment, propositions): calls, failed calls,
    #: prompt and completion tokens, seconds.
    llm_calls: int = 0
    llm_failures: int = 0
    llm_prompt_tokens: int = 0
    llm_completion_tokens: int = 0
    llm_seconds: float = 0.0
    seconds: float = 0.0
    #: The run was stopped early (Ctrl-C, ``cancel``): the documents counted were written, the rest not read.
    interrupted: bool = False
    stage_seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.stage_seconds[stage] += time.perf_counter() - start

    def add_llm(self, before: dict[str, float | int], after: dict[str, float | int]) -> None:
        """Count the chat calls between two :meth:`ChatLedger.snapshot` readings."""
        self.llm_calls += int(after["llm_calls"]) - int(before["llm_calls"])
        self.llm_failures += int(after["llm_failures"]) - int(before["llm_failures"])
        self.llm_prompt_tokens += int(after["prompt_tokens"]) - int(before["prompt_tokens"])
        self.llm_completion_tokens += int(after["completion_tokens"]) - int(before["completion_tokens"])
        self.llm_seconds += float(after["llm_seconds"]) - float(before["llm_seconds"])

    def add(self, other: IngestReport) -> None:
        """Fold the counts, failures and times of *other* (a later run) into this report."""
        self.added += other.added
        self.updated += other.updated
        self.unchanged += other.unchanged
        self.access_updated += other.access_updated
        self.deleted += other.deleted
        self.failed.extend(other.failed)
        self.skipped.extend(other.skipped)
        self.chunks += other.chunks
        self.tokens_embedded += other.tokens_embedded
        self.parse_cache_hits += other.parse_cache_hits
        self.ocr_pages += other.ocr_pages
        self.hidden_elements += other.hidden_elements
        self.embeddings_reused += other.embeddings_reused
        self.llm_calls += other.llm_calls
        self.llm_failures += other.llm_failures
        self.llm_prompt_tokens += other.llm_prompt_tokens
        self.llm_completion_tokens += other.llm_completion_tokens
        self.llm_seconds += other.llm_seconds
        self.seconds += other.seconds
        self.interrupted = self.interrupted or other.interrupted
        for stage, secs in other.stage_seconds.items():
            self.stage_seconds[stage] += secs

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "access_updated": self.access_updated,
            "deleted": self.deleted,
            "failed": [f.to_dict() for f in self.failed],
            "skipped": [f.to_dict() for f in self.skipped],
            "chunks": self.chunks,
            "seconds": round(self.seconds, 3),
            "tokens_embedded": self.tokens_embedded,
            "parse_cache_hits": self.parse_cache_hits,
            "ocr_pages": self.ocr_pages,
            "hidden_elements": self.hidden_elements,
            "embeddings_reused": self.embeddings_reused,
            "llm_calls": self.llm_calls,
            "llm_failures": self.llm_failures,
            "llm_prompt_tokens": self.llm_prompt_tokens,
            "llm_completion_tokens": self.llm_completion_tokens,
            "llm_seconds": round(self.llm_seconds, 3),
            "stage_seconds": {k: round(v, 3) for k, v in sorted(self.stage_seconds.items())},
            "interrupted": self.interrupted,
        }
