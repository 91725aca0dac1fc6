"""The query plan: which texts and vectors each search arm gets, and which filters, for one call.

:func:`build_plan` runs the configured transforms the call's switches allow, in this order:
glossary + rewrite → (multi-query ∥ self-query) → HyDE per branch. Each failure falls back (raw
query, single query, no filters) with a logged event and a note in the :class:`RetrievalTrace`.
The original query is always branch 0, at the highest weight. Without a configured transform the plan
is one branch, the raw query, and retrieval behaves exactly as without transforms.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragwright._sync import to_thread
from ragwright.model.filters import Filter, all_of
from ragwright.model.results import ArmHit, SearchResult
from ragwright.models.embedders.base import Embedder
from ragwright.models.llms.base import ChatModel, Message
from ragwright.retrieve.fusion import rrf
from ragwright.retrieve.options import RetrievalOptions
from ragwright.retrieve.transforms.hyde import hypothesis_vector
from ragwright.retrieve.transforms.multi_query import generate_variants
from ragwright.retrieve.transforms.options import SelfQueryOptions, TransformOptions
from ragwright.retrieve.transforms.rewrite import RewrittenQuery, expand_glossary, rewrite_query
from ragwright.retrieve.transforms.self_query import Clause, SelfQuery, propose_filters, relaxation_steps, soft_boost

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

log = logging.getLogger(__name__)


@dataclass
class Branch:
    """One query text the arms run for, its weight in cross-branch RRF, and (HyDE) its dense vector."""

    text: str
    weight: float
    origin: str
    vector: Vector | None = None
    hyde: bool = False


@dataclass
class RetrievalTrace:
    """What the transforms did on one call: pass one to ``Retriever.retrieve(trace=…)`` to read it.

    ``transforms`` lists what ran (``glossary``, ``rewrite``, ``multi_query``, ``self_query``,
    ``hyde``); ``fallbacks`` the failure events; ``relaxed_filters`` the self-query fields dropped
    because too few results came back (tell the user: "showing results for all years").
    """

    query: str
    transforms: list[str] = field(default_factory=list)
    fallbacks: list[str] = field(default_factory=list)
    queries: list[tuple[str, float, str]] = field(default_factory=list)
    keywords: str | None = None
    intent: str | None = None
    needs_retrieval: bool | None = None
    hypotheses: int = 0
    filters: list[str] = field(default_factory=list)
    dropped_filters: list[str] = field(default_factory=list)
    relaxed_filters: list[str] = field(default_factory=list)
    soft_filters: bool = False
    skipped: bool = False

    def summary(self) -> str:
        parts = [f"transforms={','.join(self.transforms) or 'none'}", f"queries={len(self.queries) or 1}"]
        if self.fallbacks:
            parts.append(f"fallbacks={','.join(self.fallbacks)}")
        if self.hypotheses:
            parts.append(f"hypotheses={self.hypotheses}")
        if self.filters:
            parts.append(f"filters={'; '.join(self.filters)}{' (soft)' if self.soft_filters else ''}")
        if self.relaxed_filters:
            parts.append(f"relaxed={','.join(self.relaxed_filters)}")
        return " ".join(parts)


@dataclass
class QueryPlan:
    branches: list[Branch]
    keyword_queries: list[tuple[str, float]] = field(default_factory=list)
    clauses: tuple[Clause, ...] = ()
    self_query: SelfQueryOptions | None = None
    rerank_query: str = ""
    skip: bool = False

    @property
    def single(self) -> bool:
        """One branch and no keyword-only query: the plain retrieval path."""
        return len(self.branches) == 1 and not self.keyword_queries

    @property
    def soft(self) -> bool:
        return bool(self.clauses) and self.self_query is not None and self.self_query.mode == "soft"

    def filter_steps(self, base: Filter | None) -> Iterator[tuple[Filter | None, tuple[str, ...]]]:
        """The filters to try in turn, with the self-query fields relaxed at each step. The caller's
        *base* filter is in every step; only model-proposed clauses are ever relaxed."""
        if not self.clauses or self.self_query is None or self.soft:
            yield base, ()
            return
        for kept, relaxed in relaxation_steps(self.clauses, self.self_query):
            yield all_of([base, *(c.filter for c in kept)]), relaxed

    def enough(self, count: int) -> bool:
        return self.self_query is None or count >= self.self_query.min_results

    def boost(self, results: list[SearchResult]) -> list[SearchResult]:
        if self.soft and self.self_query is not None:
            return soft_boost(results, self.clauses, self.self_query.soft_boost)
        return results


def fuse_branches(ranked: Sequence[Sequence[SearchResult]], weights: Sequence[float], k: int) -> list[SearchResult]:
    """Weighted RRF across the branches' rankings. Each result keeps per-arm evidence from the first
    branch (in plan order, the original first) where that arm found it."""
    rankings = {f"q{i}": [(r.chunk_id, r.score) for r in lst] for i, lst in enumerate(ranked)}
    fused = rrf(rankings, k=k, weights={f"q{i}": w for i, w in enumerate(weights)})
    first: dict[str, SearchResult] = {}
    evidence: dict[str, dict[str, ArmHit]] = {}
    for lst in ranked:
        for r in lst:
            first.setdefault(r.chunk_id, r)
            arms = evidence.setdefault(r.chunk_id, {})
            for arm, hit in r.arms.items():
                arms.setdefault(arm, hit)
    return [SearchResult(first[f.chunk_id].chunk, f.score, arms=evidence[f.chunk_id], fusion="rrf") for f in fused]


def _add(branches: list[Branch], text: str | None, weight: float, origin: str) -> None:
    if text is None:
        return
    key = " ".join(text.lower().split())
    if key and all(" ".join(b.text.lower().split()) != key for b in branches):
        branches.append(Branch(text, weight, origin))


async def _rewrite(
    llm: ChatModel,
    query: str,
    history: Sequence[Message | Mapping[str, Any]],
    config: TransformOptions,
    trace: RetrievalTrace,
) -> RewrittenQuery | None:
    assert config.rewrite is not None
    try:
        rewritten = await to_thread(rewrite_query, llm, query, history, config.rewrite)
    except Exception as exc:
        log.warning("rewrite_failed: %s; using the raw query", exc)
        trace.fallbacks.append("rewrite_failed")
        return None
    trace.transforms.append("rewrite")
    trace.intent, trace.needs_retrieval = rewritten.intent, rewritten.needs_retrieval
    return rewritten


async def _variants(llm: ChatModel, text: str, config: TransformOptions, trace: RetrievalTrace) -> list[str]:
    assert config.multi_query is not None
    try:
        variants = await to_thread(generate_variants, llm, text, config.multi_query)
    except Exception as exc:
        log.warning("multi_query_failed: %s; searching with the single query", exc)
        trace.fallbacks.append("multi_query_failed")
        return []
    trace.transforms.append("multi_query")
    return variants


async def _self_query(llm: ChatModel, text: str, config: TransformOptions, trace: RetrievalTrace) -> SelfQuery | None:
    assert config.self_query is not None
    try:
        proposal = await to_thread(propose_filters, llm, text, config.self_query)
    except Exception as exc:
        log.warning("self_query_failed: %s; searching without model-proposed filters", exc)
        trace.fallbacks.append("self_query_failed")
        return None
    trace.transforms.append("self_query")
    trace.filters = [c.description for c in proposal.clauses]
    trace.dropped_filters = list(proposal.dropped)
    trace.soft_filters = bool(proposal.clauses) and config.self_query.mode == "soft"
    if proposal.dropped:
        log.info("self_query_dropped: %s", "; ".join(proposal.dropped))
    return proposal


async def _hyde(
    llm: ChatModel, embedder: Embedder, branches: list[Branch], config: TransformOptions, trace: RetrievalTrace
) -> None:
    assert config.hyde is not None
    limiter = asyncio.Semaphore(config.hyde.max_parallel)  # shared: at most N generations in flight
    outcomes = await asyncio.gather(
        *(hypothesis_vector(llm, embedder, b.text, config.hyde, limiter) for b in branches), return_exceptions=True
    )
    for branch, outcome in zip(branches, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome
            log.warning("hyde_failed: %s; the dense arm embeds the query %r itself", outcome, branch.text[:60])
            if "hyde_failed" not in trace.fallbacks:
                trace.fallbacks.append("hyde_failed")
            continue
        branch.vector, branch.hyde = outcome.vector, True
        trace.hypotheses += outcome.survivors
    if any(b.hyde for b in branches):
        trace.transforms.append("hyde")


async def build_plan(
    query: str,
    options: RetrievalOptions,
    *,
    llm: ChatModel | None,
    config: TransformOptions,
    embedder: Embedder,
    history: Sequence[Message | Mapping[str, Any]],
    trace: RetrievalTrace,
) -> QueryPlan:
    """The branches, keyword-only queries and self-query clauses for one call (see the module doc)."""
    original = Branch(query, config.original_weight, "original")
    plan = QueryPlan([original], rerank_query=query)
    base_text = query
    if config.rewrite is not None and options.use_query_rewrite:
        glossary = config.rewrite.glossary_map
        if glossary:
            expanded = expand_glossary(query, glossary)
            if expanded != query:
                trace.transforms.append("glossary")
                _add(plan.branches, expanded, config.rewrite.glossary_weight, "glossary")
        rewritten = await _rewrite(llm, query, history, config, trace) if llm is not None else None
        if rewritten is not None:
            rw = config.rewrite
            standalone = expand_glossary(rewritten.standalone, glossary) if glossary else rewritten.standalone
            _add(plan.branches, standalone, rw.standalone_weight, "standalone")
            for sub in rewritten.sub_questions:
                _add(plan.branches, sub, rw.sub_question_weight, "sub_question")
            _add(plan.branches, rewritten.step_back, rw.step_back_weight, "step_back")
            if rewritten.keywords and "bm25" in options.arms:
                trace.keywords = " ".join(rewritten.keywords)
                plan.keyword_queries.append((trace.keywords, rw.keyword_weight))
            base_text = plan.rerank_query = standalone
            if not rewritten.needs_retrieval and rw.skip_retrieval_when_not_needed:
                plan.skip = trace.skipped = True
                return plan
    if llm is not None:
        want_mq = config.multi_query is not None and options.use_multi_query
        want_sq = config.self_query is not None and options.use_self_query
        variants, proposal = await asyncio.gather(
            _variants(llm, base_text, config, trace) if want_mq else _none_list(),
            _self_query(llm, base_text, config, trace) if want_sq else _none(),
        )
        if config.multi_query is not None:
            for variant in variants:
                _add(plan.branches, variant, config.multi_query.variant_weight, "variant")
        if proposal is not None and config.self_query is not None:
            plan.clauses, plan.self_query = proposal.clauses, config.self_query
            _add(plan.branches, proposal.search_text, config.self_query.search_text_weight, "search_text")
        if config.hyde is not None and options.use_hyde and "dense" in options.arms:
            await _hyde(llm, embedder, plan.branches, config, trace)
    trace.queries = [(b.text, b.weight, b.origin) for b in plan.branches]
    return plan


async def _none_list() -> list[str]:
    return []


async def _none() -> None:
    return None
