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
UNSHIPPED = re.compile(r"\b[Ss]eeds? 00\d|§\s?\d|Rag\.NET|DESIGN\.md")

#: A module implementing a published technique, and the authors its docstring must name (each of them).
CITATIONS: dict[str, str | tuple[str, ...]] = {
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
    "retrieve/fusion.py": ("Cormack, Clarke & Büttcher 2009", "Bruch, Gai & Ingber 2023"),
    "index/bm25.py": "Robertson & Zaragoza 2009",
    "retrieve/transforms/hyde.py": "Gao et al. 2022",
    "retrieve/transforms/multi_query.py": "Cormack, Clarke &",
    "retrieve/strategies/crag.py": "Yan et al. 2024",
    "retrieve/strategies/adaptive.py": "Jeong et al. 2024",
    "graph/__init__.py": "Edge et al. 2024",
    "graph/global_search.py": "Edge et al. 2024",
}


def _modules() -> dict[str, str]:
    return {
        p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8")
        for p in PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts
    }


def test_no_module_cites_a_document_that_does_not_ship() -> None:
    offending = {name for name, text in _modules().items() if UNSHIPPED.search(text)}
    assert not offending, sorted(offending)


def test_techniques_cite_their_papers() -> None:
    modules = _modules()
    missing = {
        name: who
        for name, names in CITATIONS.items()
        for who in ((names,) if isinstance(names, str) else names)
        if who not in modules[name]
    }
    assert not missing, missing
