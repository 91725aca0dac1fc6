"""Hypothetical document embeddings with multi-hypothesis averaging (HyDE: Gao et al. 2022, "Precise
Zero-Shot Dense Retrieval without Relevance Labels").

``hypothesis_count`` short passages answering the question are written at ``hypothesis_temperature``
(at most ``max_parallel`` generations at a time, shared by every branch of one retrieval), embedded
as documents in **one** batch, and the dense arm searches with their L2-normalised mean. Generations
that fail are dropped and the survivors are averaged (``hyde_partial``, info); if none survives,
:class:`~ragwright.errors.GenerationError` is raised and the planner searches with the raw query
(``hyde_failed``). The hypothetical text is never shown or cited, and the keyword and sparse arms
always use the raw query. The vector goes straight to dense search, so no embedding cache is keyed
on it (there is no stable text to key on).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragwright._sync import to_thread
from ragwright.errors import GenerationError
from ragwright.models.embedders.base import Embedder
from ragwright.models.llms.base import ChatModel, Message
from ragwright.retrieve.transforms.options import HydeOptions, fill_template

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Hypotheses:
    """The averaged hypothesis vector and how many generations survived."""

    vector: Vector
    survivors: int
    requested: int


def _generate(llm: ChatModel, prompt: str, opts: HydeOptions) -> str:
    reply = llm.chat([Message("user", prompt)], temperature=opts.hypothesis_temperature, max_tokens=opts.max_tokens)
    text = reply.text.strip()
    if not text:
        raise GenerationError("empty hypothesis")
    return text


def mean_vector(matrix: Vector) -> Vector:
    """The L2-normalised mean of the rows; raises :class:`GenerationError` when it is zero."""
    import numpy as np

    mean = np.asarray(matrix, dtype=np.float32).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    if not np.isfinite(norm) or norm == 0.0:
        raise GenerationError("the hypothesis embeddings cancel out (zero mean)")
    out: Vector = (mean / norm).astype(np.float32)
    return out


async def hypothesis_vector(
    llm: ChatModel, embedder: Embedder, query: str, opts: HydeOptions, limiter: asyncio.Semaphore
) -> Hypotheses:
    """Generate, embed in one batch, average. *limiter* bounds concurrent generations."""
    prompt = fill_template(opts.prompt_template, query=query)

    async def one() -> str:
        async with limiter:
            return await to_thread(_generate, llm, prompt, opts)

    outcomes = await asyncio.gather(*(one() for _ in range(opts.hypothesis_count)), return_exceptions=True)
    texts: list[str] = []
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome  # cancellation and the like are not "a generation failed"
            log.debug("hyde_hypothesis_failed: %s", outcome)
        else:
            texts.append(outcome)
    if not texts:
        raise GenerationError(f"all {opts.hypothesis_count} hypothesis generations failed")
    if len(texts) < opts.hypothesis_count:
        log.info(
            "hyde_partial: %d of %d hypotheses survived; averaging the survivors", len(texts), opts.hypothesis_count
        )
    try:
        matrix = await to_thread(embedder.embed_documents, texts)
    except Exception as exc:
        raise GenerationError(f"embedding the hypotheses failed: {exc}") from exc
    return Hypotheses(mean_vector(matrix), len(texts), opts.hypothesis_count)
