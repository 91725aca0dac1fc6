"""``GraphOptions``: GraphRAG's settings, validated on construction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ragwright._validate import OptionsBase
from ragwright.errors import ConfigError

EXTRACTORS: Final = ("rules", "spacy", "llm")
MODES: Final = ("local", "global")
FUSIONS: Final = ("anchored", "bridge", "rrf")


@dataclass(frozen=True, slots=True)
class GraphOptions(OptionsBase):
    """*extractor*: ``rules`` (default: capitalisation/pattern rules, no model), ``spacy`` (statistical
    NER, extra ``[graph-ner]``) or ``llm`` (the Rag's chat model with a JSON grammar).
    *hops*: how far local search walks from the question's entities. *top_k*: graph candidates fused
    with the hybrid result; *weight*: the graph arm's RRF weight. *merge_similarity*: names of one tenant
    and type whose embeddings are at least this similar are merged (recorded, reversible); ``None`` turns
    embedding merges off. *levels*: community levels (Louvain, coarsest first); *resolution*: the
    finest level's modularity resolution. *chunk_metadata*: write ``metadata["entities"]`` on chunks.
    Local search's evidence weights, tuned on HotpotQA's tune split (``benchmarks/graph_multihop.py``):
    *entry_chunks* best hybrid chunks whose entities also seed the walk, at *entry_weight*; a chunk that
    opens with a reached entity counts *opening_boost* times; the question's own entities count
    *seed_evidence* as evidence (hybrid search finds their chunks already). *fusion*: how local search
    combines the graph with hybrid search — ``anchored`` (default) fuses by RRF at *weight* for a
    question with an anchored bridge chunk (about an entity named by a hybrid chunk that is about a
    question entity: the graph sees a second hop) and keeps hybrid's ranking otherwise (chosen on the
    large HotpotQA corpus's tune split; on 534 fresh HotpotQA/2Wiki/MuSiQue questions multi-hop recall@10
    +0.056 [+0.032, +0.081], single-hop 0 losses: ``benchmarks/RESULTS.md``); ``rrf`` fuses the whole
    graph ranking for every question (a larger multi-hop gain, single-hop losses at recall@5);
    ``bridge`` keeps hybrid's order and places up to *bridges* bridge chunks after its first
    *bridge_position* results."""

    extractor: str = "rules"
    hops: int = 2
    top_k: int = 20
    weight: float = 1.0
    max_seeds: int = 8
    merge_similarity: float | None = 0.93
    levels: int = 2
    resolution: float = 1.0
    chunk_metadata: bool = True
    summary_sentences: int = 4
    entry_chunks: int = 3
    entry_weight: float = 0.5
    opening_boost: float = 6.0
    seed_evidence: float = 0.5
    fusion: str = "anchored"
    bridge_position: int = 3
    bridges: int = 1

    def __post_init__(self) -> None:
        if self.extractor not in EXTRACTORS:
            raise ConfigError.invalid("graph.extractor", self.extractor, " | ".join(EXTRACTORS))
        if not (isinstance(self.hops, int) and 0 <= self.hops <= 3):
            raise ConfigError.invalid("graph.hops", self.hops, "an integer from 0 to 3")
        if not (isinstance(self.top_k, int) and 1 <= self.top_k <= 200):
            raise ConfigError.invalid("graph.top_k", self.top_k, "an integer from 1 to 200")
        if not (isinstance(self.max_seeds, int) and 1 <= self.max_seeds <= 64):
            raise ConfigError.invalid("graph.max_seeds", self.max_seeds, "an integer from 1 to 64")
        if not 0.0 <= self.weight <= 10.0:
            raise ConfigError.invalid("graph.weight", self.weight, "a number from 0 to 10")
        if self.merge_similarity is not None and not 0.5 <= self.merge_similarity <= 1.0:
            raise ConfigError.invalid("graph.merge_similarity", self.merge_similarity, "None or 0.5 to 1.0")
        if not (isinstance(self.levels, int) and 1 <= self.levels <= 4):
            raise ConfigError.invalid("graph.levels", self.levels, "an integer from 1 to 4")
        if not 0.05 <= self.resolution <= 10.0:
            raise ConfigError.invalid("graph.resolution", self.resolution, "a number from 0.05 to 10")
        if not (isinstance(self.entry_chunks, int) and 0 <= self.entry_chunks <= 20):
            raise ConfigError.invalid("graph.entry_chunks", self.entry_chunks, "an integer from 0 to 20")
        for name in ("entry_weight", "opening_boost", "seed_evidence"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 100.0:
                raise ConfigError.invalid(f"graph.{name}", value, "a number from 0 to 100")
        if self.fusion not in FUSIONS:
            raise ConfigError.invalid("graph.fusion", self.fusion, " | ".join(FUSIONS))
        if not (isinstance(self.bridge_position, int) and 0 <= self.bridge_position <= 50):
            raise ConfigError.invalid("graph.bridge_position", self.bridge_position, "an integer from 0 to 50")
        if not (isinstance(self.bridges, int) and 0 <= self.bridges <= 10):
            raise ConfigError.invalid("graph.bridges", self.bridges, "an integer from 0 to 10")
        if not (isinstance(self.summary_sentences, int) and 1 <= self.summary_sentences <= 20):
            raise ConfigError.invalid("graph.summary_sentences", self.summary_sentences, "an integer from 1 to 20")
