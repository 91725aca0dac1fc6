"""The retriever with transforms: configuration, the retrieval_path log, all transforms together."""

from __future__ import annotations

import asyncio
import logging

import pytest

from ragwright import Identity
from ragwright.errors import ConfigError
from ragwright.options import RetrievalOptions
from ragwright.retrieve import Retriever
from ragwright.retrieve.transforms import (
    AllowedField,
    HydeOptions,
    MultiQueryOptions,
    RewriteOptions,
    SelfQueryOptions,
    TransformOptions,
)
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

from .conftest import SpyStore, as_json, calls_of, router, run

ALL = TransformOptions(
    rewrite=RewriteOptions(glossary={"PTO": "paid time off"}),
    multi_query=MultiQueryOptions(variant_count=2),
    hyde=HydeOptions(hypothesis_count=2),
    self_query=SelfQueryOptions(fields={"doc_type": AllowedField(values=("policy", "faq"))}, min_results=1),
)
EVERYTHING_ON = RetrievalOptions(use_hybrid_search=True, use_query_rewrite=True, use_self_query=True)


def test_transforms_must_be_options(store: SpyStore, embedder: HashingEmbedder) -> None:
    with pytest.raises(ConfigError):
        Retriever(store, embedder, transforms={"hyde": True})  # type: ignore[arg-type]


def test_no_model_no_change(store: SpyStore, embedder: HashingEmbedder) -> None:
    """Configured transforms without a chat model: the same results as a plain retriever."""
    plain = asyncio.run(Retriever(store, embedder).retrieve("parental leave", EVERYTHING_ON, Identity()))
    results, trace = run(store, embedder, None, ALL, "parental leave", EVERYTHING_ON)
    assert [(r.chunk_id, r.score, r.arms) for r in results] == [(r.chunk_id, r.score, r.arms) for r in plain]
    assert trace.transforms == [] and trace.fallbacks == []


def test_everything_together_and_logged(
    store: SpyStore, embedder: HashingEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    chat = ScriptedChat(
        router(
            rewrite=as_json(
                {
                    "standalone_question": "How much PTO do employees accrue?",
                    "keywords": ["PTO", "accrual"],
                    "sub_questions": [],
                    "intent": "lookup",
                    "needs_retrieval": True,
                }
            ),
            multi_query="time off accrual rate\nvacation days per month",
            self_query=as_json(
                {"search_text": None, "filters": [{"field": "doc_type", "op": "eq", "value": "policy"}]}
            ),
            hyde="Paid time off accrues at two days per month.",
        )
    )
    with caplog.at_level(logging.DEBUG, logger="ragwright.retrieve"):
        results, trace = run(store, embedder, chat, ALL, "PTO?", EVERYTHING_ON)
    assert trace.transforms == ["glossary", "rewrite", "multi_query", "self_query", "hyde"]
    assert [o for _, _, o in trace.queries] == ["original", "glossary", "standalone", "variant", "variant"]
    assert len(calls_of(chat, "hyde")) == 5 * 2  # every branch, hypothesis_count each
    assert results[0].document_id == "pto.md" and all(r.chunk.metadata["doc_type"] == "policy" for r in results)
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("retrieval_path"))
    assert "transforms=glossary,rewrite,multi_query,self_query,hyde" in line and "filters=doc_type = 'policy'" in line
    assert store.keyword_queries()[0] == "PTO?" and "PTO accrual" in store.keyword_queries()
