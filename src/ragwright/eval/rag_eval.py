"""End-to-end RAG evaluation over a benchmark set: answers, citations and declines.

Metrics per item (no LLM judge needed; a judge plugs in with the LLM layer):

* ``decline_accuracy``: 1 when the system declines an unanswerable item or answers an answerable one;
* ``key_fact_recall``: the fraction of key facts found (case-insensitively) in the answer;
* ``citation_precision`` / ``citation_recall``: cited documents that are relevant / relevant documents cited;
* ``retrieval_hit``: a relevant document is among the sources;
* ``leak``: a source or citation the caller's identity must not see (must always be 0);
* ``faithfulness``: the fraction of answer sentences supported by the sources they cite (lexical:
  at least 80 % of the sentence's words occur in the cited source; an LLM judge can replace it).

Error analysis per answerable item: ``retrieval_miss`` (no relevant source), ``generation_miss``
(relevant source retrieved but the answer lacks the facts or declined), or ``ok``.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ragwright.eval.items import BenchmarkItem, RagBenchmark
from ragwright.eval.stats import Interval, bootstrap_ci
from ragwright.sources import BytesSource


def ingest_benchmark(rag: Any, bench: RagBenchmark) -> None:
    """Ingest every corpus document under its logical id, tenant and ACL."""
    for doc in bench.documents:
        rag.ingest(
            BytesSource({doc.id: doc.path.read_bytes()}, names={doc.id: doc.path.name}),
            tenant=doc.tenant,
            acl=list(doc.acl),
            metadata=doc.metadata,
        )


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


@dataclass
class ItemResult:
    item: BenchmarkItem
    declined: bool
    answer: str
    scores: dict[str, float]
    category: str
    seconds: float


@dataclass
class RagEvalResult:
    results: list[ItemResult] = field(default_factory=list)

    def metric(self, name: str, *, tag: str | None = None, seed: int = 0) -> Interval | None:
        values = [r.scores[name] for r in self.results if name in r.scores and (tag is None or tag in r.item.tags)]
        return bootstrap_ci(values, seed=seed) if values else None

    def categories(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for r in self.results:
            counts[r.category] += 1
        return dict(counts)

    def tags(self) -> list[str]:
        return sorted({t for r in self.results for t in r.item.tags})

    def to_dict(self) -> dict[str, Any]:
        names = sorted({n for r in self.results for n in r.scores})
        by_tag = {
            tag: {n: iv.to_dict() for n in names if (iv := self.metric(n, tag=tag)) is not None} for tag in self.tags()
        }
        return {
            "items": len(self.results),
            "metrics": {n: iv.to_dict() for n in names if (iv := self.metric(n)) is not None},
            "categories": self.categories(),
            "by_tag": by_tag,
            "failures": [
                {"id": r.item.id, "category": r.category, "declined": r.declined, "answer": r.answer[:300]}
                for r in self.results
                if r.category != "ok"
            ],
        }


_CITE = re.compile(r"\[Source (\d+)\]")
_WORDS = re.compile(r"\w+", re.UNICODE)


def faithfulness(response: Any, *, coverage: float = 0.8) -> float | None:
    """Fraction of cited answer segments whose words occur (≥ *coverage*) in the sources they cite."""
    segments = [seg for seg in re.split(r"(?<=\])\s+", response.answer) if _CITE.search(seg)]
    if not segments:
        return None
    supported = 0
    for seg in segments:
        words = _WORDS.findall(_CITE.sub("", seg).casefold())
        cited = [int(n) for n in _CITE.findall(seg) if 0 < int(n) <= len(response.sources)]
        source_words = {w for n in cited for w in _WORDS.findall(response.sources[n - 1].chunk.text.casefold())}
        if words and sum(w in source_words for w in words) / len(words) >= coverage:
            supported += 1
    return supported / len(segments)


def score_item(item: BenchmarkItem, response: Any) -> tuple[dict[str, float], str]:
    """Per-item scores and error category for one ``RagResponse``."""
    relevant = {d for d, g in item.relevant.items() if g > 0}
    cited = {c.document_id for c in response.citations}
    sources = {s.document_id for s in response.sources}
    visible = all(item.identity.can_see(s.chunk.tenant, s.chunk.acl) for s in response.sources)
    scores: dict[str, float] = {
        "decline_accuracy": float(response.declined == item.unanswerable),
        "leak": float(not visible),
    }
    if not response.declined and (faithful := faithfulness(response)) is not None:
        scores["faithfulness"] = faithful
    if item.unanswerable:
        return scores, ("ok" if response.declined else "answered_unanswerable")
    answer = _norm(response.answer)
    if item.key_facts:
        scores["key_fact_recall"] = sum(_norm(f) in answer for f in item.key_facts) / len(item.key_facts)
    if relevant:
        scores["retrieval_hit"] = float(bool(sources & relevant))
        scores["citation_recall"] = len(cited & relevant) / len(relevant)
        if cited:
            scores["citation_precision"] = len(cited & relevant) / len(cited)
    if relevant and not sources & relevant:
        category = "retrieval_miss"
    elif response.declined or scores.get("key_fact_recall", 1.0) < 1.0:
        category = "generation_miss"
    else:
        category = "ok"
    return scores, category


def evaluate_rag(rag: Any, bench: RagBenchmark, **ask_options: Any) -> RagEvalResult:
    """Ask every item under its own identity and score the responses."""
    out = RagEvalResult()
    for item in bench.items:
        start = time.perf_counter()
        response = rag.ask(item.question, identity=item.identity, **ask_options)
        seconds = time.perf_counter() - start
        scores, category = score_item(item, response)
        out.results.append(ItemResult(item, response.declined, response.answer, scores, category, seconds))
    return out
