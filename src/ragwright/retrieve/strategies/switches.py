"""Which configured strategies and caches one retrieval call uses: a part of
:class:`~ragwright.retrieve.options.RetrievalOptions`, beside the strategies it switches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ragwright._validate import OptionsBase, check_bool, check_choice, check_float

CragFallbackMode = Literal["replace", "append"]


@dataclass(frozen=True)
class StrategySwitches(OptionsBase):
    """Which configured strategies and caches a call uses, and corrective RAG's per-call settings."""

    use_adaptive_retrieval: bool = False
    use_crag: bool = False
    crag_score_threshold: float = 0.5
    crag_fallback_mode: CragFallbackMode = "replace"
    use_tag_retrieval: bool = True
    use_time_weighting: bool = True
    use_cache_embedding: bool = True
    use_cache_result: bool = True

    def __post_init__(self) -> None:
        for name in (
            "use_adaptive_retrieval",
            "use_crag",
            "use_tag_retrieval",
            "use_time_weighting",
            "use_cache_embedding",
            "use_cache_result",
        ):
            check_bool(name, getattr(self, name))
        check_float("crag_score_threshold", self.crag_score_threshold, lo=0.0, hi=1.0)
        check_choice("crag_fallback_mode", self.crag_fallback_mode, ("replace", "append"))
