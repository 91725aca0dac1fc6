"""Multi-query expansion: paraphrases of the query, their results fused with RRF (Cormack, Clarke &
Büttcher 2009).

One chat call turns the question into ``variant_count`` alternative phrasings, one per line. Each
variant then runs the search arms and the planner fuses every ranking with RRF, the original query at
the highest weight. Numbering, bullets, quotes and preamble lines are stripped; blank, over-long and
repeated variants (the original included) are dropped. No usable variant, or a failed call, raises
:class:`~ragwright.errors.GenerationError`: the planner falls back to the single query
(``multi_query_failed``).
"""

from __future__ import annotations

import re

from ragwright.errors import GenerationError
from ragwright.models.llms.base import ChatModel, Message
from ragwright.retrieve.transforms.options import MultiQueryOptions, fill_template

_LEAD = re.compile(r"^\s*(?:[-*•·]+|\(?\d{1,2}\s*[.):\]]|\d{1,2}\s+-|#+)\s*")
_QUOTES = "\"'“”‘’`"


def build_prompt(query: str, opts: MultiQueryOptions) -> str:
    return fill_template(opts.prompt_template, count=opts.variant_count, query=query)


def parse_variants(text: str, original: str, opts: MultiQueryOptions) -> list[str]:
    """The usable phrasings in a reply, at most ``variant_count``, in the order given."""
    seen = {" ".join(original.lower().split())}
    out: list[str] = []
    for line in text.splitlines():
        variant = _LEAD.sub("", line).strip().strip(_QUOTES).strip()
        variant = re.sub(r"^(?:question|variant|phrasing)\s*\d*\s*:\s*", "", variant, flags=re.IGNORECASE)
        if not variant or variant.endswith(":") or len(variant) > opts.max_variant_chars:
            continue  # blank, a preamble ("Here are three phrasings:"), or runaway text
        key = " ".join(variant.lower().split())
        if key in seen:
            continue
        seen.add(key)
        out.append(variant)
        if len(out) == opts.variant_count:
            break
    return out


def generate_variants(llm: ChatModel, query: str, opts: MultiQueryOptions) -> list[str]:
    """Alternative phrasings of *query* (never including it); raises :class:`GenerationError`."""
    try:
        reply = llm.chat(
            [Message("user", build_prompt(query, opts))], temperature=opts.temperature, max_tokens=opts.max_tokens
        )
    except GenerationError:
        raise
    except Exception as exc:
        raise GenerationError(f"the multi-query expander failed: {exc}") from exc
    variants = parse_variants(reply.text, query, opts)
    if not variants:
        raise GenerationError(f"the multi-query expander gave no usable variant: {reply.text.strip()[:120]!r}")
    return variants
