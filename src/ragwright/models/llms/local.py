"""The local LLM: a GGUF model on llama.cpp (``llama-cpp-python``, extra ``llm``), fully offline.

:class:`LlamaCppChat` is a :class:`~ragwright.models.llms.base.ChatModel` (chat with the GGUF's own
chat template, streaming, JSON replies constrained by a grammar built from the JSON schema) and a
:class:`~ragwright.models.llms.base.YesNoScorer` (P(yes) from the next-token logits of one forward
pass, for the pointwise reranker). The weights load on first use, never at construction.

Threads default to **1**: on shared cores llama.cpp with 2 threads collapsed from 31 to 0.8 tok/s
(measured on a shared 2-core machine); prompt processing gets its own count (``n_threads_batch``, default
the same). llama.cpp is not thread-safe, so one lock serialises every call on a model; a stream
holds it until it is consumed or closed. Calls update :attr:`ledger` (calls, tokens, seconds).

Before the weights first load in this process, :func:`~ragwright.models.llms.probe.ensure_model_runs`
generates a few tokens in a child process (once per machine, model and llama.cpp build): a build
that uses CPU instructions the machine does not enable (AMX in a VM, AVX-512) would otherwise kill
the caller with SIGSEGV; the probe turns that into a :class:`GenerationError` saying how to reinstall.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import math
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragwright._deps import require
from ragwright.errors import ConfigError, GenerationError, MissingDependencyError
from ragwright.models.llms.base import ChatLedger, ChatResponse, Message, Usage, chat_messages
from ragwright.models.llms.probe import ensure_model_runs

__all__ = ["LlamaCppChat"]

log = logging.getLogger(__name__)

_EXTRA = "llm"
_YES = ("yes", "Yes", "YES", " yes", " Yes")
_NO = ("no", "No", "NO", " no", " No")
# Used only when a GGUF file carries no chat template (Qwen's ChatML otherwise comes from the file).
_CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


class LlamaCppChat:
    """A GGUF chat model on llama.cpp (see the module docstring)."""

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        n_ctx: int = 4096,
        n_threads: int = 1,
        n_threads_batch: int | None = None,
        n_batch: int = 512,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int = 0,
        name: str | None = None,
        grammar_json: bool = True,
        probe: bool = True,
    ) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            purpose = "the local LLM; llama-cpp-python compiles once: build it portably as docs/llm.md shows"
            raise MissingDependencyError("llama_cpp", _EXTRA, purpose)
        path = Path(model_path).expanduser()
        if not path.is_file():
            raise ConfigError.invalid("model_path", str(model_path), "the path of an existing .gguf file")
        for field, value, low in (("n_ctx", n_ctx, 256), ("n_threads", n_threads, 1), ("n_batch", n_batch, 8)):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ConfigError.invalid(field, value, f"an integer ≥ {low}")
        if n_threads_batch is not None and n_threads_batch < 1:
            raise ConfigError.invalid("n_threads_batch", n_threads_batch, "a positive integer or None (= n_threads)")
        if not 0.0 <= temperature <= 2.0:
            raise ConfigError.invalid("temperature", temperature, "a number in [0, 2]")
        if max_tokens < 1:
            raise ConfigError.invalid("max_tokens", max_tokens, "a positive integer")
        self.model_path = path
        self.n_ctx, self.n_threads, self.n_batch = n_ctx, n_threads, n_batch
        self.n_threads_batch = n_threads_batch or n_threads
        self.temperature, self.max_tokens, self.seed = temperature, max_tokens, seed
        self.grammar_json = grammar_json
        self.probe = probe  # the crash probe at first load (RAGWRIGHT_LLM_PROBE=0 turns it off everywhere)
        self._name = name or f"llama.cpp:{path.stem}"
        self._lock = threading.Lock()  # serialises calls on the (not thread-safe) llama.cpp context
        self._load_lock = threading.Lock()
        self._llama: Any = None
        self._formatter: Any = None
        self._yes_no: tuple[list[int], list[int]] | None = None
        self.ledger = ChatLedger()

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"LlamaCppChat({str(self.model_path)!r}, n_ctx={self.n_ctx}, n_threads={self.n_threads})"

    # -- loading ---------------------------------------------------------------------------------

    def load(self) -> LlamaCppChat:
        """Load the weights now (otherwise the first call does). Returns ``self``."""
        self._model()
        return self

    def _model(self) -> Any:
        with self._load_lock:
            if self._llama is None:
                llama_cpp = require("llama_cpp", _EXTRA, "the local LLM")
                if self.probe:  # a crash in the child is an error here, not the end of this process
                    ensure_model_runs(self.model_path, n_threads=self.n_threads, name=self.name)
                started = time.perf_counter()
                try:
                    self._llama = llama_cpp.Llama(
                        model_path=str(self.model_path),
                        n_ctx=self.n_ctx,
                        n_threads=self.n_threads,
                        n_threads_batch=self.n_threads_batch,
                        n_batch=self.n_batch,
                        seed=self.seed,
                        logits_all=False,
                        verbose=False,
                    )
                except (ValueError, RuntimeError, OSError) as exc:
                    raise ConfigError(
                        f"llama.cpp cannot load {self.model_path}: {exc}. Check that it is a complete GGUF model "
                        "file (the assembled offline models are re-created by deleting them from the cache), "
                        "and that n_ctx fits in memory"
                    ) from exc
                log.info("llm_loaded: %s in %.1f s", self.model_path.name, time.perf_counter() - started)
            return self._llama

    # -- chat ------------------------------------------------------------------------------------

    def _response_format(self, json_schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
        if json_schema is None or not self.grammar_json:
            return None
        return {"type": "json_object", "schema": dict(json_schema)}

    def _messages(self, messages: Sequence[Message], json_schema: Mapping[str, Any] | None) -> list[dict[str, Any]]:
        # the grammar constrains, the prompt explains
        return [m.to_dict() for m in chat_messages(messages, json_schema)]

    def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
        stop: Sequence[str] | None = None,
    ) -> ChatResponse:
        payload = self._messages(messages, json_schema)
        llama = self._model()
        with self._lock:
            started = time.perf_counter()
            try:
                out = llama.create_chat_completion(
                    messages=payload,
                    temperature=self.temperature if temperature is None else temperature,
                    max_tokens=self.max_tokens if max_tokens is None else max_tokens,
                    stop=list(stop) if stop else None,
                    response_format=self._response_format(json_schema),
                    seed=self.seed,
                )
            except (ValueError, RuntimeError) as exc:
                self.ledger.record_failure(time.perf_counter() - started)
                raise GenerationError(f"{self.name} failed: {exc}") from exc
            seconds = time.perf_counter() - started
        choice = out["choices"][0]
        raw_usage = out.get("usage") or {}
        usage = Usage(int(raw_usage.get("prompt_tokens", 0)), int(raw_usage.get("completion_tokens", 0)))
        self.ledger.record(usage, seconds)
        return ChatResponse(
            text=choice["message"].get("content") or "",
            usage=usage,
            model=self.name,
            seconds=seconds,
            finish_reason=choice.get("finish_reason"),
        )

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Sequence[str] | None = None,
    ) -> Iterator[str]:
        payload = self._messages(messages, None)
        return self._stream(payload, temperature, max_tokens, stop)

    def _stream(
        self,
        payload: list[dict[str, Any]],
        temperature: float | None,
        max_tokens: int | None,
        stop: Sequence[str] | None,
    ) -> Iterator[str]:
        llama = self._model()
        with self._lock:
            started = time.perf_counter()
            pieces = 0
            try:
                chunks = llama.create_chat_completion(
                    messages=payload,
                    temperature=self.temperature if temperature is None else temperature,
                    max_tokens=self.max_tokens if max_tokens is None else max_tokens,
                    stop=list(stop) if stop else None,
                    stream=True,
                    seed=self.seed,
                )
                for chunk in chunks:
                    piece = chunk["choices"][0]["delta"].get("content")
                    if piece:
                        pieces += 1
                        yield piece
            except (ValueError, RuntimeError) as exc:
                self.ledger.record_failure(time.perf_counter() - started)
                raise GenerationError(f"{self.name} failed: {exc}") from exc
            self.ledger.record(Usage(0, pieces), time.perf_counter() - started)

    # -- tokens and templates ----------------------------------------------------------------------

    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        """Token ids of *text* in the model's vocabulary (no BOS)."""
        llama = self._model()
        with self._lock:
            return self._tokenize(llama, text, special)

    @staticmethod
    def _tokenize(llama: Any, text: str, special: bool = False) -> list[int]:
        ids: list[int] = llama.tokenize(text.encode("utf-8"), add_bos=False, special=special)
        return ids

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text))

    def truncate(self, text: str, max_tokens: int) -> str:
        """*text* cut to at most *max_tokens* model tokens (unchanged when it fits)."""
        llama = self._model()
        with self._lock:
            ids = self._tokenize(llama, text)
            if len(ids) <= max_tokens:
                return text
            raw: bytes = llama.detokenize(ids[:max_tokens])
        return raw.decode("utf-8", "ignore")

    def format_chat(self, messages: Sequence[Message]) -> str:
        """*messages* rendered with the GGUF's chat template, the assistant turn opened."""
        llama = self._model()
        with self._load_lock:
            if self._formatter is None:
                fmt = require("llama_cpp.llama_chat_format", _EXTRA, "the local LLM")
                template = llama.metadata.get("tokenizer.chat_template") or _CHATML
                vocab = llama._model  # the low-level model: token texts for BOS/EOS
                eos, bos = llama.token_eos(), llama.token_bos()
                self._formatter = fmt.Jinja2ChatFormatter(
                    template=template,
                    eos_token=vocab.token_get_text(eos) if eos != -1 else "",
                    bos_token=vocab.token_get_text(bos) if bos != -1 else "",
                )
            formatter = self._formatter
        result = formatter(messages=[Message.coerce(m).to_dict() for m in messages])
        prompt: str = result.prompt
        return prompt

    # -- yes/no scoring --------------------------------------------------------------------------------

    def _yes_no_ids(self, llama: Any) -> tuple[list[int], list[int]]:
        if self._yes_no is None:

            def single(words: Sequence[str]) -> list[int]:
                ids = {tuple(self._tokenize(llama, w)) for w in words}
                return sorted({t[0] for t in ids if len(t) == 1})

            yes, no = single(_YES), single(_NO)
            if not yes or not no:
                raise GenerationError(f"{self.name}: 'yes'/'no' are not single tokens; pointwise scoring unavailable")
            self._yes_no = (yes, no)
        return self._yes_no

    def yes_probabilities(self, prompts: Sequence[str]) -> list[float]:
        """P(yes) / (P(yes) + P(no)) for the token after each formatted prompt; one forward pass each.

        The evaluated prefix shared with the previous prompt is kept in the KV cache, so prompts that
        start alike (instruction + query) only pay for their differing tail.
        """
        import numpy as np

        out: list[float] = []
        llama = self._model()
        with self._lock:
            yes, no = self._yes_no_ids(llama)
            started = time.perf_counter()
            evaluated = 0
            try:
                for prompt in prompts:
                    tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
                    if not tokens or len(tokens) >= self.n_ctx:
                        raise GenerationError(
                            f"{self.name}: a scoring prompt of {len(tokens)} tokens does not fit n_ctx={self.n_ctx}"
                        )
                    cached = llama.input_ids[: llama.n_tokens].tolist()
                    keep = min(llama.longest_token_prefix(cached, tokens), len(tokens) - 1)
                    llama.n_tokens = keep
                    llama.eval(tokens[keep:])
                    evaluated += len(tokens) - keep
                    logits = np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),))
                    lp_yes = _logsumexp([float(logits[i]) for i in yes])
                    lp_no = _logsumexp([float(logits[i]) for i in no])
                    out.append(1.0 / (1.0 + math.exp(lp_no - lp_yes)))
            except (ValueError, RuntimeError) as exc:
                with contextlib.suppress(Exception):
                    llama.reset()
                self.ledger.record_failure(time.perf_counter() - started)
                raise GenerationError(f"{self.name}: scoring failed: {exc}") from exc
            self.ledger.record(Usage(evaluated, 0), time.perf_counter() - started)
        return out


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))
