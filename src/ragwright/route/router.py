"""The router: one decision per question — which route, and why — from the rules or the LLM classifier.

:meth:`Router.decide` takes what the caller can run: *unavailable* maps a route to why it cannot run
now (no entity graph, no chat model, module not installed, a per-call filter only hybrid applies).
A wanted route that is not allowed (:attr:`RouterOptions.routes`) or not available gives way to the
next route the rule prefers, and in the end to ``hybrid``; the reason says each step. Every decision
is logged (``route_decided``) and returned as a :class:`Decision`.

Modes: ``off`` → ``hybrid``; ``auto`` → the rules (:mod:`ragwright.route.rules`); ``llm`` → the chat
model chooses among the allowed, available routes (:mod:`ragwright.route.llm`), the rules deciding
when there is no model or its reply is unusable (``route_classifier_failed`` logged). The model's
``none`` (no retrieval) stands only for a message the rules also read as chit-chat: the local 1.5B model
sent factual questions there ("What was invented by Savery?"), and a skipped retrieval cannot be
recovered downstream (``route_classifier_overruled`` logged, the rules decide).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ragwright._sync import to_thread
from ragwright.errors import GenerationError
from ragwright.models.llms.base import ChatModel
from ragwright.route import llm as llm_classifier
from ragwright.route.features import Features, extract
from ragwright.route.options import RouterOptions
from ragwright.route.rules import classify

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Decision:
    """*route*: the route to run (allowed and available). *wanted*: what the classifier asked for first.
    *source*: ``rules``, ``llm`` or ``off``. *reason*: why, in words (returned on the answer).
    *features*: what the rules read (``None`` for ``off``). *llm_calls*: chat calls the decision made."""

    route: str
    reason: str
    source: str
    wanted: str
    features: Features | None = None
    llm_calls: int = 0


class Router:
    """Routes questions as :class:`RouterOptions` say; *llm* is the classifier's chat model (mode ``llm``)."""

    def __init__(self, options: RouterOptions | None = None, llm: ChatModel | None = None) -> None:
        self.options, self.llm = options or RouterOptions(), llm

    def _why_not(self, route: str, unavailable: Mapping[str, str]) -> str | None:
        if route not in self.options.routes:
            return "not in route.routes"
        return unavailable.get(route)

    def _resolve(self, wanted: tuple[str, ...], unavailable: Mapping[str, str]) -> tuple[str, list[str]]:
        notes: list[str] = []
        for route in wanted:
            why = self._why_not(route, unavailable)
            if why is None:
                return route, notes
            notes.append(f"{route} unavailable ({why})")
        return "hybrid", notes

    def _decision(
        self, wanted: tuple[str, ...], why: str, source: str, features: Features | None, unavailable: Mapping[str, str]
    ) -> Decision:
        route, notes = self._resolve(wanted, unavailable)
        steps = [f"{source}: {why} → {wanted[0]}", *notes]
        if route != wanted[0]:
            steps.append(f"→ {route}")
        return Decision(route, "; ".join(steps), source, wanted[0], features)

    def usable(self, unavailable: Mapping[str, str] | None = None) -> tuple[str, ...]:
        """The allowed routes that can run now."""
        return tuple(r for r in self.options.routes if self._why_not(r, unavailable or {}) is None)

    def decide(self, question: str, unavailable: Mapping[str, str] | None = None) -> Decision:
        """The route for *question* (blocking: mode ``llm`` makes one chat call); logged as ``route_decided``."""
        decision = self._decide(question, unavailable)
        log.info("route_decided: %s (%s)", decision.route, decision.reason)
        return decision

    def _decide(self, question: str, unavailable: Mapping[str, str] | None) -> Decision:
        gone = dict(unavailable or {})
        if self.options.mode == "off":
            return self._decision(("hybrid",), "routing off", "off", None, gone)
        features = extract(question)
        verdict = classify(features)
        prefix, calls = "", 0
        if self.options.mode == "llm":
            usable = self.usable(gone)
            if self.llm is None:
                prefix = "no chat model for the LLM classifier; "
            elif len(usable) > 1:
                calls = 1
                try:
                    route, why = llm_classifier.classify(
                        self.llm, question, usable, max_tokens=self.options.llm_max_tokens
                    )
                except GenerationError as exc:
                    log.warning("route_classifier_failed: %s; using the rules", exc)
                    prefix = f"LLM classifier failed ({str(exc)[:120]}); "
                else:
                    if route != "none" or features.chitchat is not None:
                        decision = self._decision((route,), why or "the model's choice", "llm", features, gone)
                        return replace(decision, llm_calls=calls)
                    # no retrieval at all is the one choice that cannot be recovered from: a small model
                    # sends factual questions there, so "none" needs the rules' chit-chat reading too
                    log.info("route_classifier_overruled: none for a message the rules do not read as chit-chat")
                    prefix = "LLM chose none but the rules see no chit-chat; "
        decision = self._decision(verdict.routes, verdict.describe(), "rules", features, gone)
        return replace(decision, reason=prefix + decision.reason, llm_calls=calls)

    async def adecide(self, question: str, unavailable: Mapping[str, str] | None = None) -> Decision:
        """:meth:`decide` off the event loop."""
        return await to_thread(self.decide, question, unavailable)
