"""Cache settings, frozen and validated.

TTLs in seconds: results **5 min**, embeddings **30 min**, reranks and
answers configurable. ``prompt_version`` goes into every key (change it when a prompt changes);
``namespace`` separates deployments sharing one Redis. ``max_entries`` bounds the in-process L1.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragwright._validate import OptionsBase, check_float, check_int
from ragwright.errors import ConfigError


@dataclass(frozen=True)
class CacheOptions(OptionsBase):
    result_ttl_s: float = 300.0
    embedding_ttl_s: float = 1800.0
    rerank_ttl_s: float = 1800.0
    answer_ttl_s: float = 300.0
    max_entries: int = 10_000
    prompt_version: str = "1"
    namespace: str = "rw"

    def __post_init__(self) -> None:
        for name in ("result_ttl_s", "embedding_ttl_s", "rerank_ttl_s", "answer_ttl_s"):
            check_float(name, getattr(self, name), lo=0.0, lo_open=True)
        check_int("max_entries", self.max_entries, minimum=1)
        for name in ("prompt_version", "namespace"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip() or any(c.isspace() for c in value):
                raise ConfigError.invalid(name, value, "a non-empty string without whitespace")
