"""The agent loop: the model chooses a tool, the tool runs as the caller, until an answer or a cap.

A ReAct-style loop (after Yao et al. 2023, "ReAct: Synergizing Reasoning and Acting in Language
Models") over read-only tools (:mod:`ragwright.agent.tools`), bounded by hard caps
(:class:`~ragwright.agent.options.AgentOptions`):

1. each turn the model gets the question and what its tools returned so far, and replies with one JSON
   action (:mod:`ragwright.agent.actions`; the local model decodes under the schema's grammar) or,
   with an OpenAI-compatible server, native tool calls;
2. before a turn the caps are checked: rounds, tool calls, and cl100k tokens (the whole prompt of the
   turn plus the most it may write); a turn that would pass a cap is not made;
3. a search whose normalised query was already run is not run again: the model is told so, and after
   ``max_repeats`` such repeats the loop stops (``agent_repeated_search``);
4. the final answer is checked by the answer contract (:mod:`ragwright.generate.citations`): every
   ``[Source N]`` must name a passage gathered in this run; an answer that cites nothing gets the
   sources holding its words, else is flagged ``uncited``; the model declining is a decline; with
   ``RagOptions.verify_answer`` the groundedness judge runs (:mod:`ragwright.generate.verify`);
5. at a cap the loop stops honestly: with evidence, one last turn answers from it under the plain
   answer prompt (when the token budget allows), else the extractive answerer quotes it, and the
   answer says it is partial; with no evidence, or an answer the evidence does not support, it declines
   with ``decline_reason`` ``agent_cap_rounds`` / ``agent_cap_tool_calls`` / ``agent_cap_tokens`` /
   ``agent_repeated_search`` / ``agent_model_error``.

Every step goes to the trajectory returned on the response: the tool, its arguments, the ids of the
chunks it returned, the tokens of the turn and of the result, and a note when it did not simply run.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol, runtime_checkable

from ragwright._sync import to_thread
from ragwright.agent.actions import (
    Action,
    action_schema,
    native_system_prompt,
    parse_action,
    parse_tool_calls,
    system_prompt,
    tool_specs,
)
from ragwright.agent.options import AgentOptions
from ragwright.agent.tools import AgentTools, Evidence, Observation, cut, normalise_query
from ragwright.chunk.tokens import count_tokens
from ragwright.errors import ConfigError, GenerationError
from ragwright.generate.citations import check_citations, citation_suffix, is_refusal
from ragwright.generate.extractive import ExtractiveAnswerer
from ragwright.generate.options import RagOptions
from ragwright.generate.prompt import DECLINE_SENTENCE, build_messages
from ragwright.generate.verify import verify_groundedness
from ragwright.model.results import RagResponse
from ragwright.models.embedders.base import Embedder
from ragwright.models.llms.base import ChatModel, ChatResponse, Message, Usage

log = logging.getLogger(__name__)

#: Why the loop stopped, as the answer says it.
STOPS: Final = {
    "agent_cap_rounds": "it reached its limit of {max_rounds} tool turns",
    "agent_cap_tool_calls": "it reached its limit of {max_tool_calls} tool calls",
    "agent_cap_tokens": "it reached its budget of {max_tokens} tokens",
    "agent_repeated_search": "the model kept repeating searches it had already made",
    "agent_model_error": "the chat model failed",
}
NEXT: Final = (
    "If the sources answer the question, reply with the answer action; otherwise reply with the next JSON action."
)
NO_EVIDENCE: Final = "I could not find an answer: no passage was found before the search stopped ({why})."
_ARG_CHARS: Final = 300


@runtime_checkable
class ToolChatModel(Protocol):
    """A chat model with native (OpenAI-style) tool calling, e.g.
    :class:`~ragwright.models.llms.openai_compat.OpenAICompatChat`."""

    @property
    def name(self) -> str: ...

    def chat_with_tools(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]],
        *,
        tool_choice: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> tuple[ChatResponse, tuple[dict[str, Any], ...]]: ...


class _Stop(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _Run:
    """The state of one run."""

    question: str
    messages: list[Message]
    evidence: Evidence = field(default_factory=Evidence)
    steps: list[dict[str, Any]] = field(default_factory=list)
    searched: dict[str, list[str]] = field(default_factory=dict)
    observations: list[int] = field(default_factory=list)  # messages holding passages, oldest first
    tokens: int = 0  # cl100k, every prompt and reply
    rounds: int = 0
    tool_calls: int = 0
    repeats: int = 0
    nudged: bool = False
    llm_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    timings: dict[str, float] = field(default_factory=dict)

    def add_time(self, stage: str, seconds: float) -> None:
        self.timings[stage] = self.timings.get(stage, 0.0) + seconds


def prompt_tokens(messages: Sequence[Message]) -> int:
    """cl100k tokens of a message list (contents and tool calls)."""
    parts = [m.content for m in messages] + [json.dumps(dict(c)) for m in messages for c in m.tool_calls]
    return count_tokens("\n".join(parts))


def _answer_text(text: str) -> str | None:
    """The answer in a last-turn reply: the text itself, the answer of a JSON answer action, or ``None``
    when the reply is another tool request (an adversarial or confused model)."""
    if not text.lstrip().startswith(("{", "```")):
        return text
    try:
        action = parse_action(text)
    except GenerationError:
        return text
    return action.answer if action.tool == "answer" else None


def _shown(arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v[:_ARG_CHARS] if isinstance(v, str) else v) for k, v in arguments.items()}


class AgentLoop:
    """One agent: a chat model, the tools of one caller and the caps (see the module docstring).

    *embedder* (the Rag's) lets the loop quote the evidence extractively when a cap stops it with no
    turn left; *rag_options* supply the answer contract's settings (``verify_answer`` …).
    """

    def __init__(
        self,
        llm: ChatModel,
        tools: AgentTools,
        options: AgentOptions | None = None,
        *,
        embedder: Embedder | None = None,
        rag_options: RagOptions | None = None,
    ) -> None:
        self.llm, self.tools = llm, tools
        self.options = options or AgentOptions()
        self.embedder, self.rag_options = embedder, rag_options or RagOptions()
        mode = self.options.tool_mode
        if mode == "native" and not isinstance(llm, ToolChatModel):
            raise ConfigError(
                f"agent.tool_mode='native' needs a chat model with tool calling ({llm.name} has none): use an "
                "OpenAI-compatible server (--llm openai:MODEL@URL), or tool_mode 'json' / 'auto'",
                field="agent.tool_mode",
            )
        self.native = mode == "native" or (mode == "auto" and isinstance(llm, ToolChatModel))

    # -- the loop ------------------------------------------------------------------------------------------
    async def run(self, question: str) -> RagResponse:
        """Answer *question* (see the module docstring); never raises for what the model does."""
        started = time.perf_counter()
        names, o = self.tools.names, self.options
        system = native_system_prompt(o.max_rounds) if self.native else system_prompt(names, o.max_rounds)
        run = _Run(question, [Message("system", system), Message("user", f"Question: {question}")])
        try:
            if o.first_search and "search" in names:
                await self._first_search(run)
            while True:
                response = await self._turn(run)
                if response is not None:
                    break
        except _Stop as stop:
            response = await self._stopped(run, stop.reason)
        run.add_time("agent_s", time.perf_counter() - started)
        path = " → ".join(s["tool"] for s in run.steps if s["tool"] != "stop") or "answer"
        stop_step = next((s for s in run.steps if s["tool"] == "stop"), None)
        if stop_step is not None:
            path += f" (stopped: {stop_step['reason']})"
        usage = {
            "prompt_tokens": run.usage.prompt_tokens,
            "completion_tokens": run.usage.completion_tokens,
            "total_tokens": run.usage.total_tokens,
            "llm_calls": run.llm_calls,
            "tool_calls": run.tool_calls,
            "rounds": run.rounds,
            "agent_tokens": run.tokens,
        }
        return replace(
            response,
            mode="agent",
            model=self.llm.name,
            usage=usage,
            timings=dict(run.timings),
            retrieval_path=f"agent: {path}",
            trajectory=tuple(run.steps),
        )

    async def _first_search(self, run: _Run) -> None:
        """Search for the question itself before the first turn (``AgentOptions.first_search``): the model
        starts from what single-shot retrieval finds, and spends its turns on what is missing."""
        obs = await self._run_tool(run, Action("search", {"query": run.question}))
        run.steps.append(
            {
                "round": 0,
                "tool": "search",
                "arguments": {"query": run.question[:_ARG_CHARS]},
                "result_ids": obs.result_ids,
                "tokens": {"prompt": 0, "completion": 0, "result": count_tokens(obs.text)},
                "note": "first_search" if obs.note is None else obs.note,
            }
        )
        run.messages[-1] = Message(
            "user", f"Question: {run.question}\n\nA first search for the question found:\n{obs.text}\n\n{NEXT}"
        )
        run.observations.append(len(run.messages) - 1)

    def _check_caps(self, run: _Run, turn_prompt: int) -> None:
        o = self.options
        if run.rounds >= o.max_rounds:
            raise _Stop("agent_cap_rounds")
        if run.tool_calls >= o.max_tool_calls:
            raise _Stop("agent_cap_tool_calls")
        if run.tokens + turn_prompt + o.step_tokens > o.max_tokens:
            raise _Stop("agent_cap_tokens")

    async def _turn(self, run: _Run) -> RagResponse | None:
        """One model turn and the tools it asks for; a response when it answered."""
        o = self.options
        prompt = prompt_tokens(run.messages)
        while prompt > o.context_tokens and run.observations:
            i = run.observations.pop(0)  # the oldest tool result: its source labels only
            labels = [line for line in run.messages[i].content.splitlines() if line.startswith("[Source ")]
            short = "(shortened to save room; fetch a source by number to read it again)"
            run.messages[i] = replace(run.messages[i], content="\n".join([*labels, short]))
            prompt = prompt_tokens(run.messages)
        self._check_caps(run, prompt)
        run.rounds += 1
        start = time.perf_counter()
        try:
            if self.native:
                assert isinstance(self.llm, ToolChatModel)
                reply, calls = await to_thread(
                    self.llm.chat_with_tools,
                    run.messages,
                    tool_specs(self.tools.names),
                    tool_choice="auto",
                    temperature=o.temperature,
                    max_tokens=o.step_tokens,
                )
            else:
                schema = action_schema(self.tools.names)
                reply = await to_thread(
                    self.llm.chat, run.messages, temperature=o.temperature, max_tokens=o.step_tokens, json_schema=schema
                )
                calls = ()
        except GenerationError as exc:
            log.warning("agent_model_error: %s", exc)
            run.steps.append({"round": run.rounds, "tool": "error", "note": str(exc)[:200]})
            raise _Stop("agent_model_error") from None
        finally:
            run.add_time("generate_s", time.perf_counter() - start)
        run.llm_calls += 1
        run.usage += reply.usage
        written = count_tokens(reply.text) + (count_tokens(json.dumps(list(calls))) if calls else 0)
        run.tokens += prompt + written
        tokens = {"prompt": prompt, "completion": written}
        text = reply.text if written <= o.step_tokens else cut(reply.text, o.step_tokens)
        if self.native:
            actions = parse_tool_calls(calls) if calls else [Action("answer", {"answer": text})]
            if calls:
                run.messages.append(Message("assistant", text, tool_calls=calls))
        else:
            try:
                actions = [parse_action(text)]
            except GenerationError as exc:
                run.steps.append({"round": run.rounds, "tool": "invalid", "tokens": tokens, "note": str(exc)[:200]})
                self._over_budget(run)
                run.messages += [
                    Message("assistant", text),
                    Message(
                        "user", 'That was not a valid action. Reply with one JSON object: {"action": ..., "input": ...}'
                    ),
                ]
                return None
            echo = json.dumps(dict(actions[0].arguments, action=actions[0].tool))  # as benchmarked
            run.messages.append(Message("assistant", echo))
        for i, action in enumerate(actions):
            step_tokens = tokens if i == 0 else {"prompt": 0, "completion": 0}
            if action.tool == "answer":
                if not run.evidence and not run.nudged:  # answers cite sources: search first
                    run.nudged = True
                    run.steps.append(
                        {"round": run.rounds, "tool": "answer", "tokens": step_tokens, "note": "no_evidence"}
                    )
                    self._over_budget(run)
                    nudge = "You have not found any source yet. Search first."
                    if self.native:  # a text reply: no tool call to answer
                        run.messages += [Message("assistant", text), Message("user", nudge)]
                    else:
                        run.messages.append(self._observe(action, nudge))
                    return None
                self._over_budget(run)
                return await self._final(run, action.answer, partial=None)
            if run.tool_calls >= o.max_tool_calls:
                raise _Stop("agent_cap_tool_calls")
            obs = await self._run_tool(run, action)
            step: dict[str, Any] = {
                "round": run.rounds,
                "tool": action.tool,
                "arguments": _shown(action.arguments),
                "result_ids": obs.result_ids,
                "tokens": {**step_tokens, "result": count_tokens(obs.text)},
            }
            if obs.note:
                step["note"] = obs.note
            if obs.ignored:
                step["ignored_arguments"] = obs.ignored
            run.steps.append(step)
            left = o.max_rounds - run.rounds
            run.messages.append(self._observe(action, obs.text + f"\n\n(Tool turns left: {left}.)"))
            if obs.result_ids:
                run.observations.append(len(run.messages) - 1)
            if obs.note == "repeated" and run.repeats >= o.max_repeats:
                raise _Stop("agent_repeated_search")
        self._over_budget(run)
        return None

    def _over_budget(self, run: _Run) -> None:
        """A reply longer than asked (a backend ignoring ``max_tokens``) can pass the budget: stop there."""
        if run.tokens > self.options.max_tokens:
            raise _Stop("agent_cap_tokens")

    def _observe(self, action: Action, text: str) -> Message:
        if self.native:
            return Message("tool", text, name=action.tool, tool_call_id=action.call_id)
        return Message("user", f"Result of {action.tool}:\n{text}\n\n{NEXT}")

    async def _run_tool(self, run: _Run, action: Action) -> Observation:
        if action.tool == "search":
            query = next((v for k, v in action.arguments.items() if k in ("query", "input") and isinstance(v, str)), "")
            key = normalise_query(query)
            if key and key in run.searched:
                run.repeats += 1
                numbers = [str(run.evidence.number(i)) for i in run.searched[key]]
                shown = f"Sources {', '.join(numbers)}" if numbers else "nothing"
                text = (
                    f"You already searched for this (it found {shown}); it was not run again. Search with "
                    "different words, fetch a source, or answer."
                )
                return Observation("search", text, list(run.searched[key]), note="repeated")
        start = time.perf_counter()
        obs = await self.tools.run(action.tool, action.arguments, run.evidence)
        run.add_time("tools_s", time.perf_counter() - start)
        if obs.note != "error" or action.tool == "calculate":
            run.tool_calls += 1
            run.repeats = 0
        if action.tool == "search" and obs.note != "error":
            run.searched[key] = obs.result_ids
        return obs

    # -- endings -------------------------------------------------------------------------------------------
    async def _final(self, run: _Run, text: str, *, partial: str | None) -> RagResponse:
        """The answer under the answer contract (see the module docstring, step 4)."""
        sources = run.evidence.results
        text = text.strip() or DECLINE_SENTENCE
        if not sources:
            why = STOPS.get(partial or "", "the model answered without searching").format(**vars(self.options))
            return RagResponse(
                NO_EVIDENCE.format(why=why), (), declined=True, decline_reason=partial or "agent_no_evidence"
            )
        if is_refusal(text, sources):
            return RagResponse(
                text, tuple(sources), declined=True, decline_reason=partial or "model_insufficient_context"
            )
        report = check_citations(text, sources)
        if report.uncited:
            suffix = citation_suffix(text, sources)
            if suffix:
                text = text.rstrip() + suffix
                report = check_citations(text, sources)
        if report.invalid:
            log.warning("citations_invalid: %s (%d passages were gathered)", list(report.invalid), len(sources))
        verified = await self._verify(run, text) if self.rag_options.verify_answer else None
        if verified is False:
            return RagResponse(text, tuple(sources), declined=True, decline_reason="unsupported_after_verification")
        if partial is not None:
            text += f"\n\n(Partial answer: the search stopped because {STOPS[partial].format(**vars(self.options))}.)"
        return RagResponse(
            text,
            tuple(sources),
            citations=report.citations,
            invalid_citations=report.invalid,
            uncited=report.uncited,
            verified=verified,
        )

    async def _verify(self, run: _Run, text: str) -> bool | None:
        start = time.perf_counter()
        verdict = await to_thread(verify_groundedness, self.llm, run.question, text, run.evidence.results)
        run.add_time("verify_s", time.perf_counter() - start)
        run.llm_calls += 1
        if verdict is None:
            return None
        run.usage += verdict.usage
        return verdict.supported

    async def _stopped(self, run: _Run, reason: str) -> RagResponse:
        """A cap (or a failing model) stopped the loop: answer from the evidence, or decline."""
        log.info(
            "agent_stopped: %s after %d rounds, %d tool calls, %d tokens",
            reason,
            run.rounds,
            run.tool_calls,
            run.tokens,
        )
        run.steps.append(
            {"tool": "stop", "reason": reason, "rounds": run.rounds, "tool_calls": run.tool_calls, "tokens": run.tokens}
        )
        sources = run.evidence.results
        if not sources:
            return await self._final(run, "", partial=reason)
        if reason not in ("agent_cap_tokens", "agent_model_error"):
            messages = build_messages(run.question, sources)
            prompt = prompt_tokens(messages)
            if run.tokens + prompt + self.options.step_tokens <= self.options.max_tokens:
                start = time.perf_counter()
                try:
                    reply = await to_thread(
                        self.llm.chat,
                        messages,
                        temperature=self.options.temperature,
                        max_tokens=self.options.step_tokens,
                    )
                except GenerationError as exc:
                    log.warning("agent_model_error: %s (final answer)", exc)
                else:
                    run.llm_calls += 1
                    run.usage += reply.usage
                    written = count_tokens(reply.text)
                    run.tokens += prompt + written
                    run.steps.append(
                        {"tool": "answer", "note": "final_turn", "tokens": {"prompt": prompt, "completion": written}}
                    )
                    text = (
                        reply.text if written <= self.options.step_tokens else cut(reply.text, self.options.step_tokens)
                    )
                    answer = _answer_text(text)
                    if answer is not None:
                        return await self._final(run, answer, partial=reason)
                finally:
                    run.add_time("generate_s", time.perf_counter() - start)
        if self.embedder is not None:
            start = time.perf_counter()
            quoted = await to_thread(
                ExtractiveAnswerer(self.embedder).answer, run.question, list(sources), self.rag_options
            )
            run.add_time("extractive_s", time.perf_counter() - start)
            run.steps.append({"tool": "answer", "note": "extractive", "tokens": {"prompt": 0, "completion": 0}})
            if not quoted.declined:
                return await self._final(run, quoted.answer, partial=reason)
        return RagResponse(
            f"I could not find an answer that the passages found support: the search stopped because "
            f"{STOPS[reason].format(**vars(self.options))}. The passages found are listed as sources.",
            tuple(sources),
            declined=True,
            decline_reason=reason,
        )
