"""The post-processing stages' options (one part of :class:`~ragwright.retrieve.options.RetrievalOptions`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ragwright._validate import OptionsBase, check_bool, check_choice, check_float, check_int

ParentMode = Literal["swap", "auto_merge"]
CompressionMode = Literal["embedding", "llm"]


@dataclass(frozen=True)
class PostprocessOptions(OptionsBase):
    """After fusion, in the pipeline's order: redundancy filter → MMR → rerank (over
    ``candidate_count`` candidates, ``rerank_min_score`` floor) → parents (``parent_mode`` ``swap`` or
    ``auto_merge`` at ``auto_merge_ratio``) → ``neighbour_window`` neighbours → sentence windows →
    compression → ``max_context_tokens`` budget → lost-in-the-middle reordering. Counts that must reach
    ``top_k`` are checked by :class:`RetrievalOptions`, which knows it."""

    use_redundancy_filter: bool = False
    redundancy_threshold: float = 0.95
    use_mmr: bool = False
    mmr_lambda: float = 0.5
    mmr_candidate_count: int | None = None
    use_reranking: bool = True
    candidate_count: int | None = None
    rerank_min_score: float | None = None
    use_parent_document: bool = True
    parent_mode: ParentMode = "swap"
    auto_merge_ratio: float = 0.5
    neighbour_window: int = 0
    use_sentence_window: bool = True
    use_compression: bool = False
    compression: CompressionMode = "embedding"
    compression_min_similarity: float = 0.35
    compression_max_sentences: int | None = None
    max_context_tokens: int | None = None
    use_lost_in_the_middle_reordering: bool = False

    def __post_init__(self) -> None:
        for name in (
            "use_redundancy_filter",
            "use_mmr",
            "use_reranking",
            "use_parent_document",
            "use_sentence_window",
            "use_compression",
            "use_lost_in_the_middle_reordering",
        ):
            check_bool(name, getattr(self, name))
        check_float("redundancy_threshold", self.redundancy_threshold, lo=0.0, hi=1.0, lo_open=True)
        check_float("mmr_lambda", self.mmr_lambda, lo=0.0, hi=1.0)
        check_int("mmr_candidate_count", self.mmr_candidate_count, minimum=1, optional=True)
        check_int("candidate_count", self.candidate_count, minimum=1, optional=True)
        check_float("rerank_min_score", self.rerank_min_score, optional=True)
        check_choice("parent_mode", self.parent_mode, ("swap", "auto_merge"))
        check_float("auto_merge_ratio", self.auto_merge_ratio, lo=0.0, hi=1.0, lo_open=True)
        check_int("neighbour_window", self.neighbour_window, minimum=0)
        check_choice("compression", self.compression, ("embedding", "llm"))
        check_float("compression_min_similarity", self.compression_min_similarity, lo=-1.0, hi=1.0)
        check_int("compression_max_sentences", self.compression_max_sentences, minimum=1, optional=True)
        check_int("max_context_tokens", self.max_context_tokens, minimum=1, optional=True)
