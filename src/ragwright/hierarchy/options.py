"""``HierarchyOptions``: hierarchical retrieval's and multi-vector's settings, validated on construction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ragwright.errors import ConfigError

SUMMARIES: Final = ("auto", "extractive", "llm")
COMBINE: Final = ("two_stage", "rrf", "doc_prior")
NODE_VECTORS: Final = ("centroid", "summary")


def _int(name: str, value: object, low: int, high: int) -> None:
    if not (isinstance(value, int) and not isinstance(value, bool) and low <= value <= high):
        raise ConfigError.invalid(f"hierarchy.{name}", value, f"an integer from {low} to {high}")


def _num(name: str, value: object, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ConfigError.invalid(f"hierarchy.{name}", value, f"a number from {low:g} to {high:g}")


@dataclass(frozen=True, slots=True)
class HierarchyOptions:
    """*summary*: how document summaries are written — ``auto`` (the Rag's chat model when it has one,
    else extractive), ``extractive`` (title, section headings, representative sentences; no model) or
    ``llm`` (a chat model is required). *summary_sentences*: representative sentences per summary.

    Two-stage search: *documents* best documents by summary (dense + BM25 of the summaries, RRF), then
    chunks inside them (dense + BM25 over those documents' chunks); *combine* says how that meets the
    flat (hybrid) result: ``rrf`` (both lists fused, *flat_weight* for the flat one), ``two_stage``
    (the restricted list alone) or ``doc_prior`` (the flat list re-ranked with its documents' stage-1
    rank, weight *document_weight*). *chunk_evidence*: stage 1 also ranks documents by their best chunk
    in the flat result, and stage 2 its chunks by their flat rank (the seed's "retrieve generously at
    stage 1 and combine with keyword matching").

    Tree (RAPTOR, Sarthi et al. 2024): *tree* builds per access scope (tenant + ACL) clusters of
    about *branching* chunk vectors, summarised, up to *levels* levels; *node_vector* embeds each
    node's ``summary`` or uses its members' ``centroid`` (free). *tree_weight*: the weight of the node
    arm when tree hits are fused with the flat result.

    Defaults (``rrf``, 8 documents, chunk evidence, flat ×2; tree weight 0.2) were chosen on SQuAD 2.0
    train articles (``benchmarks/hierarchical_qa.py``); even so, flat hybrid search ranked the gold
    paragraph better on held-out articles, so hierarchical search is opt-in (``--hierarchical``).

    Multi-vector: *questions* hypothetical questions per parent written by the chat model (0: off;
    opt-in, an LLM call per parent); a parent is the parent chunk when the Rag builds parents, else the
    document; *document_chars*: a document-level parent up to this long is returned whole."""

    summary: str = "auto"
    summary_sentences: int = 5
    documents: int = 8
    combine: str = "rrf"
    flat_weight: float = 2.0
    document_weight: float = 1.0
    chunk_evidence: bool = True
    tree: bool = True
    branching: int = 8
    levels: int = 3
    node_vector: str = "centroid"
    tree_weight: float = 0.2
    questions: int = 0
    document_chars: int = 4000

    def __post_init__(self) -> None:
        if self.summary not in SUMMARIES:
            raise ConfigError.invalid("hierarchy.summary", self.summary, " | ".join(SUMMARIES))
        if self.combine not in COMBINE:
            raise ConfigError.invalid("hierarchy.combine", self.combine, " | ".join(COMBINE))
        if self.node_vector not in NODE_VECTORS:
            raise ConfigError.invalid("hierarchy.node_vector", self.node_vector, " | ".join(NODE_VECTORS))
        for name in ("tree", "chunk_evidence"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError.invalid(f"hierarchy.{name}", getattr(self, name), "true or false")
        _int("summary_sentences", self.summary_sentences, 1, 20)
        _int("documents", self.documents, 1, 200)
        _int("branching", self.branching, 2, 64)
        _int("levels", self.levels, 1, 6)
        _int("questions", self.questions, 0, 10)
        _int("document_chars", self.document_chars, 200, 200_000)
        _num("flat_weight", self.flat_weight, 0.0, 10.0)
        _num("document_weight", self.document_weight, 0.0, 10.0)
        _num("tree_weight", self.tree_weight, 0.0, 10.0)

    @classmethod
    def check_keys(cls, keys: list[str]) -> None:
        """Refuse a key that is no field (the configuration file's ``[hierarchy]`` table)."""
        import difflib

        fields = list(cls.__dataclass_fields__)
        for key in keys:
            if key not in fields:
                close = difflib.get_close_matches(key, fields, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise ConfigError(f"unknown key {key!r}{hint} (accepted: {', '.join(fields)})", field=key)
