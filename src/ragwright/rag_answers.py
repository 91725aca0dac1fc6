"""The answer half of the facade: ``ask``, ``aask``, ``ask_stream``, ``aask_stream`` (a part of
:class:`~ragwright.rag.Rag`).

Every variant runs one body (:meth:`RagAnswers._start_answer`): the ask's retrieval options (the Rag's
retrieval settings with the fields :class:`~ragwright.options.RagOptions` shares taken from the call),
retrieval as the caller through the strategy stack, then the answerer — the chat model's when one is
configured, else the extractive one — with the answer cache and the corrective loop around it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Unpack

from ragwright import rag_telemetry, telemetry
from ragwright._sync import run_sync, to_thread
from ragwright.errors import ConfigError
from ragwright.generate import AnswerStream, AsyncAnswerStream, ExtractiveAnswerer, LlmAnswerer
from ragwright.generate.acronyms import defines_asked, search_text
from ragwright.model.identity import Identity
from ragwright.model.results import RagResponse, SearchResult
from ragwright.options import (
    DEFAULT_WEIGHTS,
    EnsembleOptions,
    FeedbackOptions,
    RagOptions,
    RagOverrides,
    RetrievalOptions,
)
from ragwright.retrieve.request import RetrievalRequest
from ragwright.retrieve.transforms.plan import RetrievalTrace

if TYPE_CHECKING:
    from ragwright.cache import AnswerCache
    from ragwright.models.llms.base import ChatModel
    from ragwright.retrieve import Retriever
    from ragwright.retrieve.request import RetrievalStage
    from ragwright.retrieve.strategies.options import StrategyOptions
    from ragwright.retrieve.strategies.web import WebSearch

log = logging.getLogger("ragwright.rag")  # the facade's logger, as before the split

__all__ = ["RagAnswers"]


class RagAnswers:
    """``ask`` and its variants; the state they read is the :class:`~ragwright.rag.Rag`'s."""

    if TYPE_CHECKING:  # provided by Rag
        identity: Identity
        llm: ChatModel | None
        retriever: Retriever
        strategies: RetrievalStage
        answer_cache: AnswerCache | None
        answerer: ExtractiveAnswerer
        llm_answerer: LlmAnswerer | None
        retrieval_options: RetrievalOptions
        rag_options: RagOptions
        _plan: StrategyOptions
        _web_search: WebSearch | None

    # -- answers ---------------------------------------------------------------------------------------
    async def aask(
        self,
        question: str,
        options: RagOptions | None = None,
        *,
        identity: Identity | None = None,
        **overrides: Unpack[RagOverrides],
    ) -> RagResponse:
        """Answer *question* from the indexed documents with ``[Source N]`` citations, or decline.

        The chat model writes the answer when one is configured (``answer_mode`` ``None``/``"llm"``),
        else the extractive answerer quotes the sources.
        """
        opts, who = self._rag_options(options, overrides), identity or self.identity

        async def compute() -> RagResponse:
            if opts.use_corrective_answer:
                return await self._corrective_answer(question, opts, who)
            stream = await self._start_answer(question, opts, who, {}, streaming=False)
            return await to_thread(stream.collect)

        if self.answer_cache is None:
            return await compute()
        return await self.answer_cache.get_or_create(question, opts, who, compute)  # verified answers only

    async def _corrective_answer(self, question: str, opts: RagOptions, who: Identity) -> RagResponse:
        """The corrective loop (after CRAG: Yan et al. 2024, "Corrective Retrieval Augmented Generation"):
        retrieve → grade → answer, or rewrite and retry (capped), then web search if configured, else an
        honest decline."""
        from ragwright.retrieve.strategies.crag_loop import CorrectiveAnswerLoop
        from ragwright.retrieve.strategies.options import CragOptions

        answerer = self._answerer(opts)

        async def answer(q: str, evidence: list[SearchResult]) -> RagResponse:
            return await to_thread(AnswerStream(answerer.run(q, evidence, opts, streaming=False)).collect)

        loop = CorrectiveAnswerLoop(
            self.strategies, llm=self.llm, web=self._web_search, options=self._plan.crag or CragOptions()
        )
        outcome = await loop.run(RetrievalRequest(question, self._ask_retrieval(opts), who), answer)
        log.info(
            "corrective_answer: attempts=%d queries=%d web=%s", outcome.attempts, len(outcome.queries), outcome.used_web
        )
        return outcome.response

    def ask(
        self,
        question: str,
        options: RagOptions | None = None,
        *,
        identity: Identity | None = None,
        **overrides: Unpack[RagOverrides],
    ) -> RagResponse:
        return run_sync(self.aask(question, options, identity=identity, **overrides))

    def ask_stream(
        self,
        question: str,
        options: RagOptions | None = None,
        *,
        identity: Identity | None = None,
        **overrides: Unpack[RagOverrides],
    ) -> AnswerStream:
        """Like :meth:`ask`, streamed: iterate for ``str`` deltas, then read ``.response`` (whose answer
        is the concatenated deltas). Retrieval runs now; the model is called as the stream is read."""
        return run_sync(self._start_answer(question, options, identity, overrides, streaming=True))

    def aask_stream(
        self,
        question: str,
        options: RagOptions | None = None,
        *,
        identity: Identity | None = None,
        **overrides: Unpack[RagOverrides],
    ) -> AsyncAnswerStream:
        """The async :meth:`ask_stream`: ``async for delta in rag.aask_stream(q)`` then ``.response``.

        Options are checked now; retrieval runs on the first step (or when the stream is awaited).
        """
        opts = self._rag_options(options, overrides)
        self._answerer(opts)  # a missing chat model is a configuration error, raised here

        async def start() -> AnswerStream:
            return await self._start_answer(question, opts, identity, {}, streaming=True)

        return AsyncAnswerStream(start)

    def _rag_options(self, options: RagOptions | None, overrides: Mapping[str, Any]) -> RagOptions:
        opts = options or self.rag_options
        return opts.merged(**overrides) if overrides else opts

    def _answerer(self, opts: RagOptions) -> ExtractiveAnswerer | LlmAnswerer:
        mode = opts.answer_mode or ("llm" if self.llm_answerer is not None else "extractive")
        if mode == "extractive":
            return self.answerer
        if self.llm_answerer is None:
            raise ConfigError(
                "answer_mode='llm' needs a chat model: Rag(..., llm=load_chat('local')) in Python, "
                "or `ragwright --llm local ask …` on the command line"
            )
        return self.llm_answerer

    async def _start_answer(
        self,
        question: str,
        options: RagOptions | None,
        identity: Identity | None,
        overrides: Mapping[str, Any],
        *,
        streaming: bool,
    ) -> AnswerStream:
        """Retrieve, then hand the sources to the answerer: the one body behind every ask variant."""
        opts = self._rag_options(options, overrides)
        answerer = self._answerer(opts)
        start = time.perf_counter()
        retrieval = self._ask_retrieval(opts)
        trace = RetrievalTrace(question)
        span = telemetry.start_span("ragnet.ask", {"rag.streaming": streaming, "rag.top_k": opts.top_k})
        # the history feeds query condensing; the trace records what the transforms did
        who = identity or self.identity
        query = search_text(question)  # differs from the question only for an expansion question
        request = RetrievalRequest.of(query, retrieval, who, history=opts.conversation_history, trace=trace)
        try:
            with telemetry.current(span):  # the retrievals are the answer's child spans
                results = list((await self.strategies.run(request)).results)
                sources = answer_sources(results, retrieval.top_k)
                if len(sources) < len(results):  # contents pages took places: look further down the ranking
                    deeper = replace(retrieval, top_k=retrieval.top_k * CONTENTS_DEPTH)
                    again = RetrievalRequest.of(query, deeper, who, history=opts.conversation_history)
                    sources = answer_sources((await self.strategies.run(again)).results, retrieval.top_k)
                expansion = query != question
                if expansion and not any(defines_asked(question, r.chunk.text) for r in sources):
                    # "What does RCAC stand for?": the line that spells it out is in a long chunk that ranks
                    # below short ones repeating "RCAC"; look deeper for it once (no contents page), put it first
                    deeper = replace(retrieval, top_k=DEFINITION_DEPTH)
                    again = RetrievalRequest.of(query, deeper, who, history=opts.conversation_history)
                    ranked = answer_sources((await self.strategies.run(again)).results, DEFINITION_DEPTH)
                    found = next((r for r in ranked if defines_asked(question, r.chunk.text)), None)
                    if found is not None:
                        others = (r for r in sources if r.chunk.id != found.chunk.id)
                        sources = [found, *others][: retrieval.top_k]
                results = sources or results
        except BaseException as exc:
            rag_telemetry.failed(span, "ask", exc)
            raise
        retrieved = time.perf_counter()
        if trace.transforms or trace.relaxed_filters:
            log.info("ask_transforms: %s", trace.summary())
        path = _retrieval_path(
            results,
            retrieval.arms,
            rerank=self.retriever.reranker is not None,
            ensemble=retrieval.ensemble,
            feedback=retrieval.feedback,
        )

        def finish(response: RagResponse) -> RagResponse:
            timings = {"retrieve_s": retrieved - start, **response.timings, "total_s": time.perf_counter() - start}
            done = replace(response, timings=timings, retrieval_path=path)
            rag_telemetry.answer_finished(span, done)
            return done

        return AnswerStream(answerer.run(question, results, opts, streaming=streaming), finish)

    def _ask_retrieval(self, opts: RagOptions) -> RetrievalOptions:
        """The retrieval options of an ask: the Rag's retrieval settings (rerank, transforms, strategy
        switches …) with the fields RagOptions shares with them taken from *opts*."""
        given = opts.to_retrieval_options()
        return self.retrieval_options.merged(**{n: getattr(given, n) for n in RagOptions.retrieval_fields()})


#: When table-of-contents sources took places among an answer's top_k, it looks this many times deeper.
CONTENTS_DEPTH = 3
#: How deep an expansion question looks for a chunk that spells its acronym out when no source does.
DEFINITION_DEPTH = 50


def answer_sources(results: Sequence[SearchResult], top_k: int) -> list[SearchResult]:
    """The first *top_k* results that can answer: a source that is mostly a table of contents
    (:func:`~ragwright.generate.lines.is_contents_chunk`) gives its place to the next."""
    from ragwright.generate.lines import is_contents_chunk

    return [r for r in results if not is_contents_chunk(r.chunk.text)][:top_k]


def _retrieval_path(
    results: Sequence[SearchResult],
    arms: Sequence[str],
    *,
    rerank: bool,
    ensemble: EnsembleOptions | None = None,
    feedback: FeedbackOptions | None = None,
) -> str:
    """The path retrieval took, from the evidence on the results: ``dense+bm25 → convex (dense 0.7,
    bm25 0.3) → rocchio → rerank`` (the weights of a weighted fusion as used; the feedback that ran)."""
    seen = list(dict.fromkeys(arm for r in results for arm in r.arms if arm not in ("rerank", "phrase"))) or list(arms)
    steps = ["+".join(seen)]
    fusion = next((r.fusion for r in results if r.fusion), None)
    if fusion:
        if fusion in ("convex", "weighted"):
            used = ensemble or EnsembleOptions()
            fusion += (
                " (" + ", ".join(f"{arm} {used.weight(arm):g}" for arm in seen if arm in DEFAULT_WEIGHTS[fusion]) + ")"
            )
        steps.append(fusion)
    if feedback is not None and results:
        steps.append("+".join(name for name, on in (("rm3", feedback.rm3), ("rocchio", feedback.rocchio)) if on))
    if rerank and any("rerank" in r.arms for r in results):
        steps.append("rerank")
    return " → ".join(steps)
