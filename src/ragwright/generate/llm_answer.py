"""Answers written by a chat model from the retrieved sources, checked, or an honest decline.

One generator body (:meth:`LlmAnswerer.run`) serves ``ask`` and ``ask_stream``:

* **no sources** → decline (``no_sources``) without calling the model;
* **nothing relevant enough** (``RagOptions.min_relevance``) → decline (``below_relevance_threshold``)
  without calling the model;
* **the evidence does not answer the question** (the answerability model of
  :mod:`ragwright.generate.answerability`, on by default with ``RagOptions.answerability="model"``
  when an embedder is given) → decline (``answerability_<signal>``) before spending generation;
* otherwise the prompt contract (:mod:`ragwright.generate.prompt`) goes to the observer, then to the
  model; the reply's ``[Source N]`` markers are checked (:mod:`ragwright.generate.citations`);
* the model saying the context is insufficient → decline (``model_insufficient_context``), keeping the
  model's own words as the answer;
* with ``verify_answer``: a groundedness check; if unsupported, one regeneration with stricter
  instructions, checked again; still unsupported → decline (``unsupported_after_verification``).

When streaming without verification the model's deltas are passed through as they come; with
verification the answer is only known after the check, so it is sent as one delta at the end.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ragwright.errors import GenerationError
from ragwright.generate.answerability import Verdict, applies_to, judge
from ragwright.generate.citations import check_citations, citation_suffix, is_refusal, without_citations
from ragwright.generate.evidence import EmbeddingCache, Evidence, gather
from ragwright.generate.extractive import NO_SOURCES
from ragwright.generate.options import RagOptions
from ragwright.generate.pair import pair_model, pair_probability, stacked_features
from ragwright.generate.prompt import DECLINE_SENTENCE, PromptObserver, build_messages, notify
from ragwright.generate.question import analyze
from ragwright.generate.stream import AnswerRun, AnswerStream, drain
from ragwright.generate.verify import verify_groundedness
from ragwright.model.results import RagResponse, SearchResult
from ragwright.models.embedders.base import Embedder
from ragwright.models.llms.base import ChatModel, Message, Usage, YesNoScorer

log = logging.getLogger(__name__)
_WORD: Final = re.compile(r"\w")

BELOW_THRESHOLD: Final = (
    "I could not find an answer to this in the indexed documents: no passage was relevant enough. "
    "The closest passages are listed as sources."
)
NOT_ANSWERED: Final = (
    "I could not find an answer to this in the indexed documents. The closest passages are listed as sources."
)
UNSUPPORTED: Final = (
    "I could not find an answer to this that the indexed documents support. The closest passages are listed as sources."
)


@dataclass
class _Ledger:
    """Token usage and seconds of one answer."""

    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    def add_time(self, stage: str, seconds: float) -> None:
        self.timings[stage] = self.timings.get(stage, 0.0) + seconds

    def usage_dict(self) -> dict[str, int]:
        u = self.usage
        return {
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "total_tokens": u.total_tokens,
            "llm_calls": self.calls,
        }


class LlmAnswerer:
    """Answers with a :class:`ChatModel`; see the module docstring for the outcomes."""

    mode = "llm"

    def __init__(
        self,
        llm: ChatModel,
        *,
        observer: PromptObserver | Any | None = None,
        embedder: Embedder | None = None,
        pair_gate: bool = False,
    ) -> None:
        self.llm, self.observer, self.embedder = llm, observer, embedder
        # the chat model's yes/no joins the gate where weights exist for it: a switch, off by default
        # (on 94 held-out SQuAD questions +0.064 [0.000, +0.138] balanced accuracy, for a 1.5 s forward pass
        # per question; benchmarks/RESULTS.md, issue 20)
        self.pair_gate = pair_gate
        self.cache = EmbeddingCache()

    def answer(self, question: str, results: Sequence[SearchResult], options: RagOptions) -> RagResponse:
        return drain(self.run(question, results, options))

    def stream(self, question: str, results: Sequence[SearchResult], options: RagOptions) -> AnswerStream:
        return AnswerStream(self.run(question, results, options, streaming=True))

    def run(
        self, question: str, results: Sequence[SearchResult], options: RagOptions, *, streaming: bool = False
    ) -> AnswerRun:
        """Yield answer deltas; return the :class:`RagResponse`."""
        sources = tuple(results)
        ledger = _Ledger()
        probability: float | None = None

        def respond(answer: str, **fields: Any) -> RagResponse:
            fields.setdefault("answerability", probability)
            return RagResponse(
                answer,
                sources,
                mode=self.mode,
                model=self.llm.name,
                usage=ledger.usage_dict(),
                timings=dict(ledger.timings),
                **fields,
            )

        if not sources:
            log.info("answer_declined: no_sources")
            yield NO_SOURCES
            return respond(NO_SOURCES, declined=True, decline_reason="no_sources")
        if options.min_relevance is not None and not self._any_relevant(question, sources, options.min_relevance):
            log.info("answer_declined: below_relevance_threshold (min_relevance=%s)", options.min_relevance)
            yield BELOW_THRESHOLD
            return respond(BELOW_THRESHOLD, declined=True, decline_reason="below_relevance_threshold")
        if options.answerability == "model" and self.embedder is not None and not applies_to(self.embedder.name):
            log.info("answerability_skipped: the model was trained on another embedder than %s", self.embedder.name)
        elif options.answerability == "model" and self.embedder is not None:
            start = time.perf_counter()
            ev = gather(analyze(question), sources, self.embedder, self.cache)
            verdict = judge(ev, sources, threshold=options.answerability_threshold)
            answerable, reason = verdict.answerable, verdict.decline_reason
            probability = verdict.probability
            ledger.add_time("answerability_s", time.perf_counter() - start)
            pair = self.pair_gate or options.pair_gate
            if ev.best is not None and pair and options.answerability_threshold is None and verdict.conclusive is None:
                start = time.perf_counter()
                stacked = self._pair_verdict(ev, verdict)
                ledger.add_time("answerability_pair_s", time.perf_counter() - start)
                if stacked is not None:
                    probability, answerable, reason = stacked
            if ev.best is None or not answerable:
                reason = reason if ev.best is not None else "no_supporting_sentence"
                log.info("answer_declined: %s (p=%.3f)", reason, verdict.probability)
                yield NOT_ANSWERED
                return respond(NOT_ANSWERED, declined=True, decline_reason=reason, answerability=probability)

        passthrough = streaming and not options.verify_answer
        messages = self._messages(question, sources, options, strict=False)
        parts: list[str] = []
        for delta in self._generate(messages, options, ledger, stream=passthrough):
            parts.append(delta)
            if passthrough:
                yield delta
        text = "".join(parts)
        if not _WORD.search(without_citations(text)):
            # No text, or only [Source N] labels: say so honestly (the sentence is part of the streamed text).
            log.warning("answer_empty: the model returned no answer text (%r); declining", text[:80])
            sep = "" if not text.strip() or text[-1].isspace() else " "
            text += sep + DECLINE_SENTENCE
            if passthrough:
                yield sep + DECLINE_SENTENCE
        verified: bool | None = None
        if options.verify_answer and not is_refusal(text, sources):
            text, verified = self._verify_loop(question, sources, options, text, ledger)
        suffix = ""
        if verified is not False and not is_refusal(text, sources) and check_citations(text, sources).uncited:
            # the model stated something without [Source N]: cite the sources that hold its words
            suffix = citation_suffix(text.rstrip(), sources)
            if suffix:
                log.info("citations_attached:%s (the model cited nothing)", suffix)
                text = text + suffix if passthrough else text.rstrip() + suffix
        if not passthrough:
            yield text
        elif suffix:
            yield suffix
        if verified is False:
            return respond(text, declined=True, decline_reason="unsupported_after_verification", verified=False)
        if is_refusal(text, sources):
            log.info("answer_declined: model_insufficient_context")
            return respond(text, declined=True, decline_reason="model_insufficient_context", verified=verified)
        report = check_citations(text, sources)
        if report.invalid:
            log.warning("citations_invalid: %s (only %d sources were given)", list(report.invalid), len(sources))
        if report.uncited:
            log.warning("answer_uncited: the answer makes claims without a valid [Source N] citation")
        return respond(
            text,
            citations=report.citations,
            invalid_citations=report.invalid,
            uncited=report.uncited,
            verified=verified,
        )

    # -- steps ---------------------------------------------------------------------------------------------
    def _pair_verdict(self, ev: Evidence, verdict: Verdict) -> tuple[float, bool, str] | None:
        """(probability, answerable, reason) of the stacked gate: the lexical probability with the chat
        model's P(yes) that the best unit and its neighbours answer (:mod:`ragwright.generate.pair`);
        ``None`` when the model cannot score yes/no, has no trained weights, or the scoring failed."""
        model = pair_model(self.llm.name) if isinstance(self.llm, YesNoScorer) else None
        if model is None:
            log.debug("answerability_pair_skipped: no pair weights for %s", self.llm.name)
            return None
        try:
            yes = pair_probability(self.llm, ev)  # type: ignore[arg-type]
        except GenerationError as exc:
            log.warning("answerability_pair_failed: %s; the lexical gate decides", exc)
            return None
        if yes is None:
            return None
        x = stacked_features(verdict.probability, yes)
        p = model.probability(x)
        parts = model.contributions(x)
        # the chat model's reading declined: alone (a model over pair_logit only), or pulling harder
        pair_worse = "lex_logit" not in parts or parts.get("pair_logit", 0.0) < parts["lex_logit"]
        reason = "answerability_pair" if pair_worse else verdict.decline_reason
        return p, p >= model.threshold, reason

    def _messages(
        self, question: str, sources: Sequence[SearchResult], options: RagOptions, *, strict: bool
    ) -> list[Message]:
        messages = build_messages(
            question,
            sources,
            system_prompt=options.system_prompt,
            history=options.conversation_history,
            tool_result=options.send_sources_as_tool_result,
            strict=strict,
        )
        notify(self.observer, messages)
        return messages

    def _generate(
        self, messages: list[Message], options: RagOptions, ledger: _Ledger, *, stream: bool
    ) -> Iterator[str]:
        """The model's reply as deltas (one delta when not streaming); usage and time go to the ledger."""
        start = time.perf_counter()
        ledger.calls += 1
        try:
            if stream:
                for delta in self.llm.stream(
                    messages, temperature=options.temperature, max_tokens=options.max_answer_tokens
                ):
                    if delta:
                        yield delta
            else:
                reply = self.llm.chat(messages, temperature=options.temperature, max_tokens=options.max_answer_tokens)
                ledger.usage += reply.usage
                if reply.finish_reason == "length":
                    log.warning("answer_truncated: the reply hit max_answer_tokens=%d", options.max_answer_tokens)
                yield reply.text
        finally:
            ledger.add_time("generate_s", time.perf_counter() - start)

    def _verify_loop(
        self, question: str, sources: Sequence[SearchResult], options: RagOptions, text: str, ledger: _Ledger
    ) -> tuple[str, bool | None]:
        """(answer, verified): the answer itself when supported; one stricter retry; else a decline."""
        verdict = self._verify(question, text, sources, ledger)
        if verdict is None or verdict:
            return text, verdict
        log.warning("verify_unsupported: regenerating once with stricter instructions")
        strict = self._messages(question, sources, options, strict=True)
        retry = "".join(self._generate(strict, options.merged(temperature=0.0), ledger, stream=False))
        if not retry.strip() or is_refusal(retry, sources):
            return retry if retry.strip() else DECLINE_SENTENCE, None
        verdict = self._verify(question, retry, sources, ledger)
        if verdict is False:
            log.warning("verify_declined: the regenerated answer is still unsupported; declining")
            return UNSUPPORTED, False
        return retry, verdict

    def _verify(self, question: str, text: str, sources: Sequence[SearchResult], ledger: _Ledger) -> bool | None:
        start = time.perf_counter()
        ledger.calls += 1
        verdict = verify_groundedness(self.llm, question, text, sources)
        ledger.add_time("verify_s", time.perf_counter() - start)
        if verdict is None:
            return None
        ledger.usage += verdict.usage
        return verdict.supported

    def _any_relevant(self, question: str, sources: Sequence[SearchResult], floor: float) -> bool:
        """Whether any source reaches *floor*: the reranker's score, else the dense cosine, else (for
        keyword-only hits) a cosine computed with the embedder; unknown relevance counts as relevant."""
        unknown: list[SearchResult] = []
        for r in sources:
            hit = r.arms.get("rerank") or r.arms.get("dense")
            if hit is None:
                unknown.append(r)
            elif hit.score >= floor:
                return True
        if not unknown:
            return False
        if self.embedder is None:
            return True
        query = self.embedder.embed_query(question)
        matrix = self.embedder.embed_documents([r.chunk.text for r in unknown])
        return bool(float((matrix @ query).max()) >= floor)
