"""Command-line switches as changes to the configuration tables, so a flag and a file line mean the same.

Each :class:`Switch` is one flag of ``search`` / ``ask`` / ``ingest`` / ``config show`` (``--hyde``,
``--no-hyde``, ``--time-decay``, ``--fusion rrf`` …) and what it writes into the tables of
``ragwright.toml`` before they are built (:meth:`~ragwright.config.settings.Settings.with_overrides`):
``--hyde`` configures HyDE (keeping a ``[transforms.hyde]`` table the file has) and turns ``use_hyde`` on;
``--no-hyde`` turns ``use_hyde`` off. A flag left out changes nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

Tables = dict[str, Any]


def merge(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> Tables:
    """*overrides* deep-merged over *base* (new dicts); ``true`` over a table keeps the table (it is on)."""
    out: Tables = copy.deepcopy(dict(base))
    for key, value in overrides.items():
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = merge(current, value)
        elif value is True and isinstance(current, Mapping):
            continue
        else:
            out[key] = copy.deepcopy(value)
    return out


def _table(raw: Tables, *path: str) -> Tables:
    """The (nested) table at *path*, created when missing; ``true`` becomes an empty table (the defaults)."""
    node = raw
    for name in path:
        value = node.get(name)
        if not isinstance(value, dict):
            value = {}  # missing, `true` (the defaults) or `false` (off): a table of the defaults from here
            node[name] = value
        node = value
    return node


def _stage(section: str, stage: str, switch: str | None) -> Callable[[Tables, Any], None]:
    """On: configure ``[section.stage]`` (defaults unless the file has a table) and turn *switch* on;
    off: turn *switch* off (or, with no switch, remove the stage)."""

    def apply(raw: Tables, on: Any) -> None:
        if on:
            table = _table(raw, section)
            if not isinstance(table.get(stage), dict):
                table[stage] = True
            if switch:
                _table(raw, "retrieval")[switch] = True
        elif switch:
            _table(raw, "retrieval")[switch] = False
        else:
            _table(raw, section)[stage] = False

    return apply


def _set(*path: str) -> Callable[[Tables, Any], None]:
    def apply(raw: Tables, value: Any) -> None:
        _table(raw, *path[:-1])[path[-1]] = value

    return apply


def _rerank(raw: Tables, on: Any) -> None:
    _table(raw, "retrieval")["use_reranking"] = bool(on)
    if on and not raw.get("reranker"):
        raw["reranker"] = "llm"  # the offline default reranker (the local LLM's yes/no logits)


def _parents(raw: Tables, on: Any) -> None:
    _table(raw, "retrieval")["use_parent_document"] = bool(on)
    if not on:
        raw["parents"] = False
    elif not isinstance(raw.get("parents"), dict):
        raw["parents"] = True


def _agent(raw: Tables, on: Any) -> None:
    if not on:
        raw["agent"] = False
    elif not isinstance(raw.get("agent"), dict):
        raw["agent"] = True


def _decay_rate(raw: Tables, rate: Any) -> None:
    _table(raw, "strategies", "time_weighting")["decay_rate"] = rate
    _table(raw, "retrieval")["use_time_weighting"] = True


def _fusion(raw: Tables, method: Any) -> None:
    _table(raw, "retrieval", "ensemble")["method"] = method


def _feedback(raw: Tables, kind: Any) -> None:
    if kind == "none":
        _table(raw, "retrieval")["feedback"] = False
        return
    table = _table(raw, "retrieval", "feedback")
    table["rm3"], table["rocchio"] = kind in ("rm3", "both"), kind in ("rocchio", "both")


def _cache(raw: Tables, on: Any) -> None:
    current = raw.get("cache")
    if isinstance(current, dict):
        current["enabled"] = bool(on)
    else:
        raw["cache"] = bool(on)


def _federate(raw: Tables, value: Any) -> None:
    """``--federate NAME=URI,…``: stores joining ``[federation] stores`` (by name)."""
    from ragwright.federation.options import parse_stores

    table = _table(raw, "federation")
    table["stores"] = {**parse_stores(table.get("stores")), **parse_stores(value)}


@dataclass(frozen=True)
class Switch:
    """One flag: its click declaration, help, value type, commands, and what it writes."""

    decls: tuple[str, ...]
    name: str
    help: str
    apply: Callable[[Tables, Any], None]
    commands: tuple[str, ...] = ("search", "ask", "config")
    type: Any = None
    flag: bool = True


SEARCH: Final = ("search", "ask", "config", "mcp")
SWITCHES: Final[tuple[Switch, ...]] = (
    Switch(("--top-k",), "top_k", "How many results (default 5).", _set("retrieval", "top_k"), SEARCH, int, False),
    Switch(
        ("--min-score",),
        "min_score",
        "Floor on the dense cosine (default 0).",
        _set("retrieval", "min_score"),
        SEARCH,
        float,
        False,
    ),
    Switch(
        ("--mode",),
        "mode",
        "Search arms: hybrid (dense + BM25, the default), dense or bm25.",
        _set("mode"),
        SEARCH,
        "mode",
        False,
    ),
    Switch(
        ("--hyde/--no-hyde",),
        "hyde",
        "HyDE: search with hypothetical answers (needs --llm).",
        _stage("transforms", "hyde", "use_hyde"),
        SEARCH,
    ),
    Switch(
        ("--multi-query/--no-multi-query",),
        "multi_query",
        "Multi-query: paraphrases of the query fused with RRF (needs --llm).",
        _stage("transforms", "multi_query", "use_multi_query"),
        SEARCH,
    ),
    Switch(
        ("--rewrite/--no-rewrite",),
        "rewrite",
        "Query rewriting: condense, glossary, decompose, keywords (needs --llm).",
        _stage("transforms", "rewrite", "use_query_rewrite"),
        SEARCH,
    ),
    Switch(
        ("--self-query/--no-self-query",),
        "self_query",
        "Self-query: the model proposes filters on the fields [transforms.self_query] allow-lists (needs --llm).",
        _stage("transforms", "self_query", "use_self_query"),
        SEARCH,
    ),
    Switch(
        ("--rerank/--no-rerank",),
        "rerank",
        "Rerank the candidates (with --reranker, else the local LLM: pip install 'ragwright[llm]').",
        _rerank,
        SEARCH,
    ),
    Switch(
        ("--parents/--no-parents",),
        "parents",
        "Parent-document retrieval: ingest makes ~2048-character parents, search returns them for their children.",
        _parents,
        ("search", "ask", "config", "mcp", "ingest"),
    ),
    Switch(
        ("--parent-mode",),
        "parent_mode",
        "How parents replace children: swap, or auto_merge (only when enough children matched).",
        _set("retrieval", "parent_mode"),
        SEARCH,
        type="parent_mode",
        flag=False,
    ),
    Switch(
        ("--crag/--no-crag",),
        "crag",
        "Corrective RAG: grade the results, fall back when they are weak.",
        _stage("strategies", "crag", "use_crag"),
        SEARCH,
    ),
    Switch(
        ("--deep-research/--no-deep-research",),
        "deep_research",
        "Deep research: sub-queries until the context is sufficient (needs --llm).",
        _stage("strategies", "deep_research", None),
        SEARCH,
    ),
    Switch(
        ("--adaptive/--no-adaptive",),
        "adaptive",
        "Adaptive retrieval: top_k, multi-query and HyDE by the query's complexity.",
        _stage("strategies", "adaptive", "use_adaptive_retrieval"),
        SEARCH,
    ),
    Switch(
        ("--tags/--no-tags",),
        "tags",
        "Tag-based retrieval: a tag value the query names joins the filter (ingest indexes the tags).",
        _stage("strategies", "tags", "use_tag_retrieval"),
        ("search", "ask", "config", "mcp", "ingest"),
    ),
    Switch(
        ("--time-decay/--no-time-decay",),
        "time_decay",
        "Time decay: score × e^(−rate × age in hours), from updated_at / created_at.",
        _stage("strategies", "time_weighting", "use_time_weighting"),
        SEARCH,
    ),
    Switch(
        ("--decay-rate",),
        "decay_rate",
        "Time decay's rate per hour (turns time decay on).",
        _decay_rate,
        SEARCH,
        float,
        False,
    ),
    Switch(
        ("--mmr/--no-mmr",),
        "mmr",
        "Maximal marginal relevance: diversify the results.",
        _set("retrieval", "use_mmr"),
        SEARCH,
    ),
    Switch(
        ("--mmr-lambda",),
        "mmr_lambda",
        "MMR's relevance weight (0..1).",
        _set("retrieval", "mmr_lambda"),
        SEARCH,
        float,
        False,
    ),
    Switch(
        ("--redundancy-filter/--no-redundancy-filter",),
        "redundancy_filter",
        "Drop near-duplicate results (cosine ≥ 0.95).",
        _set("retrieval", "use_redundancy_filter"),
        SEARCH,
    ),
    Switch(
        ("--reorder/--no-reorder",),
        "reorder",
        "Lost-in-the-middle reordering: the best results at both ends.",
        _set("retrieval", "use_lost_in_the_middle_reordering"),
        SEARCH,
    ),
    Switch(
        ("--compress/--no-compress",),
        "compress",
        "Contextual compression: keep the sentences that bear on the query.",
        _set("retrieval", "use_compression"),
        SEARCH,
    ),
    Switch(
        ("--neighbours",),
        "neighbours",
        "Add this many neighbouring chunks on each side of a result.",
        _set("retrieval", "neighbour_window"),
        SEARCH,
        int,
        False,
    ),
    Switch(
        ("--max-context-tokens",),
        "max_context_tokens",
        "Token budget of the results (whole chunks dropped, lowest ranked first).",
        _set("retrieval", "max_context_tokens"),
        SEARCH,
        int,
        False,
    ),
    Switch(
        ("--fusion",),
        "fusion",
        "How the arms are fused: convex (default), rrf or weighted.",
        _fusion,
        SEARCH,
        "fusion",
        False,
    ),
    Switch(
        ("--feedback",),
        "feedback",
        "Pseudo-relevance feedback: rocchio (default in hybrid mode), rm3, both or none.",
        _feedback,
        SEARCH,
        "feedback",
        False,
    ),
    Switch(
        ("--cache/--no-cache",),
        "cache",
        "Cache embeddings, results, reranks and answers (in process; [cache] redis_url adds Redis).",
        _cache,
        SEARCH,
    ),
    Switch(
        ("--agent/--no-agent",),
        "agent",
        "Answer with the agent loop: the model searches, fetches and calculates with tools, capped by "
        "[agent] (rounds, tool calls, tokens); the steps come back as the trajectory. Needs --llm.",
        _agent,
        ("ask", "config"),
    ),
    Switch(
        ("--verify/--no-verify",),
        "verify",
        "Check the answer is grounded in the sources (one stricter retry, then decline).",
        _set("answers", "verify_answer"),
        ("ask", "config", "mcp"),
    ),
    Switch(
        ("--pair-gate/--no-pair-gate",),
        "pair_gate",
        "Let the chat model's yes/no reading of the best evidence join the answer/decline decision "
        "(LLM answers; about one short forward pass a question).",
        _set("answers", "pair_gate"),
        ("ask", "config"),
    ),
    Switch(
        ("--corrective/--no-corrective",),
        "corrective",
        "Corrective answers: grade the evidence, rewrite and retry (capped), then decline.",
        _set("answers", "use_corrective_answer"),
        ("ask", "config", "mcp"),
    ),
    Switch(
        ("--answer-mode",),
        "answer_mode",
        "extractive (quotes, no model) or llm (the --llm chat model); default: llm when one is configured.",
        _set("answers", "answer_mode"),
        ("ask", "config", "mcp"),
        "answer_mode",
        False,
    ),
    Switch(
        ("--system-prompt",),
        "system_prompt",
        "Replace the default system prompt.",
        _set("answers", "system_prompt"),
        ("ask", "config"),
        str,
        False,
    ),
    Switch(
        ("--rerank-min-score",),
        "rerank_min_score",
        "Drop reranked results below this reranker score (so 'nothing relevant' is possible).",
        _set("retrieval", "rerank_min_score"),
        SEARCH,
        float,
        False,
    ),
    Switch(
        ("--sources-as-tool-result/--no-sources-as-tool-result",),
        "sources_as_tool_result",
        "Send the sources to the chat model as a tool result instead of inside the user message.",
        _set("answers", "send_sources_as_tool_result"),
        ("ask", "config"),
    ),
    Switch(
        ("--ocr/--no-ocr",),
        "ocr",
        "OCR image-only pages (pip install 'ragwright[ocr]'); on by default.",
        _set("ingest", "parse", "ocr"),
        ("ingest", "config"),
    ),
    Switch(
        ("--ocr-images/--no-ocr-images",),
        "ocr_images",
        "OCR the pictures inside documents too (figures on PDF text pages, Office pictures); on by default.",
        _set("ingest", "parse", "ocr_images"),
        ("ingest", "config"),
    ),
    Switch(
        ("--overlap",),
        "overlap",
        "Chunk overlap: none (default: neighbours are linked instead), sentences or tokens.",
        _set("chunking", "overlap"),
        ("ingest", "config"),
        "overlap",
        False,
    ),
    Switch(
        ("--chunking",),
        "chunking",
        "Chunking strategy: structural (default), recursive, semantic or sentence_window.",
        _set("chunking", "strategy"),
        ("ingest", "config"),
        "chunking",
        False,
    ),
    Switch(
        ("--context",),
        "context",
        "Contextual enrichment of each chunk's embedded and indexed text: none (default), extractive "
        "(title and document lead, no model) or llm (a situating sentence by the --llm chat model).",
        _set("chunking", "context"),
        ("ingest", "config"),
        "context",
        False,
    ),
    Switch(
        ("--late-chunking/--no-late-chunking",),
        "late_chunking",
        "Late chunking: each chunk's vector pooled from token embeddings of its whole document "
        "(a local BERT-style ONNX embedder).",
        _set("chunking", "late_chunking"),
        ("ingest", "config"),
    ),
    Switch(
        ("--propositions/--no-propositions",),
        "propositions",
        "Propositional chunking: the --llm chat model splits each chunk into self-contained propositions, "
        "which are searched; a hit returns its source chunk.",
        _set("chunking", "propositions"),
        ("ingest", "config"),
    ),
    Switch(
        ("--collections",),
        "collections",
        "Federated search over these sources, merged by weighted RRF: NAME[=WEIGHT],… — collections of "
        "the store (live: its live one) or names given to --federate (e.g. live,g2=0.5).",
        _set("federation", "collections"),
        ("search", "ask", "config"),
        str,
        False,
    ),
    Switch(
        ("--federate",),
        "federate",
        "Other stores to search beside the store, by name: NAME=URI,… (postgresql://…, a SQLite path).",
        _federate,
        ("search", "ask", "config"),
        str,
        False,
    ),
)
CHOICES: Final[dict[str, tuple[str, ...]]] = {
    "mode": ("hybrid", "dense", "bm25"),
    "answer_mode": ("extractive", "llm"),
    "parent_mode": ("swap", "auto_merge"),
    "fusion": ("convex", "rrf", "weighted"),
    "feedback": ("rocchio", "rm3", "both", "none"),
    "chunking": ("structural", "recursive", "semantic", "sentence_window"),
    "overlap": ("none", "sentences", "tokens"),
    "context": ("none", "extractive", "llm"),
}


def for_command(command: str) -> tuple[Switch, ...]:
    return tuple(s for s in SWITCHES if command in s.commands)


def apply_overrides(
    base: Mapping[str, Any], values: Mapping[str, Any], switches: Iterable[Switch] = SWITCHES
) -> Tables:
    """*base* tables with the flags applied in order (a flag sees what the file configured)."""
    raw = copy.deepcopy(dict(base))
    for switch in switches:
        value = values.get(switch.name)
        if value is not None:
            switch.apply(raw, value)
    return raw
