"""Docstrings cite the literature they implement, never documents that do not ship with the package.

The seeds, DESIGN.md and Rag.NET are the project's own working papers: a reader of the installed
package cannot open them. A technique's docstring names its paper instead (Cormack et al. 2009 for RRF,
Carbonell & Goldstein 1998 for MMR, …).
"""

from __future__ import annotations

import re
from pathlib import Path

import ragwright

PACKAGE = Path(ragwright.__file__).parent
UNSHIPPED = re.compile(r"\b[Ss]eeds? 00\d|§|Rag\.NET|DESIGN\.md")

#: Modules still citing an unshipped document (being edited by other work when this test was written);
#: remove an entry once its module is fixed. Nothing may be added.
NOT_YET: frozenset[str] = frozenset(
    {
        "chunk/options.py",
        "generate/citations.py",
        "generate/options.py",
        "generate/pair.py",
        "generate/prompt.py",
        "generate/verify.py",
        "graph/__init__.py",
        "graph/global_search.py",
        "graph/llm_extract.py",
        "graph/local.py",
        "graph/options.py",
        "ingest/options.py",
        "parse/ocr.py",
        "postprocess/chain.py",
        "retrieve/dispatch.py",
        "retrieve/feedback.py",
        "retrieve/options.py",
        "retrieve/phrases.py",
        "retrieve/pipeline.py",
        "retrieve/strategies/__init__.py",
        "retrieve/strategies/adaptive.py",
        "retrieve/strategies/cached.py",
        "retrieve/strategies/compose.py",
        "retrieve/strategies/crag.py",
        "retrieve/strategies/crag_loop.py",
        "retrieve/strategies/deep_research.py",
        "retrieve/strategies/options.py",
        "retrieve/strategies/tags.py",
        "retrieve/strategies/time_weighted.py",
        "retrieve/transforms/__init__.py",
        "retrieve/transforms/hyde.py",
        "retrieve/transforms/multi_query.py",
        "retrieve/transforms/options.py",
        "retrieve/transforms/rewrite.py",
        "retrieve/transforms/self_query.py",
        "stores/sqlite/store.py",
    }
)

#: A module implementing a published technique, and the authors its docstring must name.
CITATIONS = {
    "postprocess/diversity.py": "Carbonell & Goldstein 1998",
    "postprocess/reorder.py": "Liu et al. 2024",
    "postprocess/rerank.py": "Nogueira & Cho 2019",
    "postprocess/compress.py": "Xu, Shi & Choi 2024",
    "index/ann.py": "Malkov & Yashunin 2018",
    "models/sparse/base.py": "Formal",
    "models/sparse/splade.py": "Formal",
    "chunk/late.py": "Günther et al. 2024",
    "chunk/propositions.py": "Chen et al. 2023",
    "eval/metrics.py": "Järvelin & Kekäläinen 2002",
    "eval/stats.py": "Efron & Tibshirani 1993",
    "retrieve/feedback.py": "Rocchio 1971",
}


def _modules() -> dict[str, str]:
    return {
        p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8")
        for p in PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts
    }


def test_no_module_cites_a_document_that_does_not_ship() -> None:
    offending = {name for name, text in _modules().items() if UNSHIPPED.search(text)}
    assert offending <= NOT_YET, sorted(offending - NOT_YET)


def test_techniques_cite_their_papers() -> None:
    modules = _modules()
    missing = {name: who for name, who in CITATIONS.items() if who not in modules[name]}
    assert not missing, missing
