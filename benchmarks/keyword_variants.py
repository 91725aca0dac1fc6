"""Keyword-side variants measured and not adopted: question-phrasing stop words, title boosts, a fuzzy leg.

Over the cached evaluation stores of ``benchmarks/retrieval_beir.py`` (the chunks and their vectors as
ingested), for each collection: BM25 alone and BM25 fused with the dense arm (convex, 0.7 / 0.3, exact
scores everywhere), nDCG@10 with each keyword variant:

* ``auto`` — the default analyzer (each chunk's language: English stop words and Snowball stems here);
* ``+ question stop words`` — a query-only stop list of request phrasing ("interested", "describe",
  "deal", "regarding" …);
* ``title x2`` / ``title x3`` — the chunk's title (its first heading) counted two or three times;
* ``+ char trigrams`` — every word of four letters or more also indexed as its character trigrams (a
  "fuzzy" leg for OCR typos), on the clean corpus, on a copy with 15 % of its words given OCR-style
  errors, and with one misspelled content word in every query.

Usage::

    python benchmarks/keyword_variants.py [--datasets cranfield,scifact,cisi,med,npl]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

from ragwright.eval.commands import eval_store_path  # noqa: E402
from ragwright.eval.datasets import load_beir  # noqa: E402
from ragwright.eval.metrics import ndcg_at_k  # noqa: E402
from ragwright.index import Bm25Index  # noqa: E402
from ragwright.index.analyzers import tokenize  # noqa: E402
from ragwright.index.multilingual import LanguageAnalyzer  # noqa: E402

QUESTION_WORDS = frozenset(
    {
        *("interested", "interest", "please", "find", "finding", "looking", "want", "wanted", "wish", "need"),
        *("tell", "show", "give", "describe", "describing", "discuss", "discussing", "deal", "dealing"),
        *("concerning", "regarding", "pertaining", "pertain", "relating"),
    }
)
OCR_CONFUSIONS = (("rn", "m"), ("m", "rn"), ("l", "1"), ("e", "c"), ("o", "0"), ("i", "l"), ("cl", "d"), ("h", "b"))


class Variant:
    """An analyzer for one variant: the default's terms, plus or minus something."""

    def __init__(self, name: str, *, query_stops: frozenset[str] = frozenset(), trigrams: bool = False) -> None:
        self.name = name
        self.base = LanguageAnalyzer()
        self.query_stops, self.trigrams = query_stops, trigrams

    def _grams(self, text: str) -> list[str]:
        out: list[str] = []
        for token in tokenize(text):
            if self.trigrams and len(token) >= 4 and token.isalpha():
                padded = f"^{token}$"
                out.extend("#" + padded[i : i + 3] for i in range(len(padded) - 2))
        return out

    def __call__(self, text: str) -> list[str]:
        return self.base.index_terms(text, "en") + self._grams(text)

    def query(self, text: str) -> list[str]:
        words = " ".join(t for t in tokenize(text) if t not in self.query_stops)
        return self.base.query_terms(words, {"en": 1}) + self._grams(words)


def corrupt(text: str, rate: float, rng: random.Random) -> str:
    words = []
    for word in text.split():
        if len(word) > 3 and rng.random() < rate:
            a, b = rng.choice(OCR_CONFUSIONS)
            if a in word:
                word = word.replace(a, b, 1)
            else:
                i = rng.randrange(len(word))
                word = word[:i] + word[i + 1 :]
        words.append(word)
    return " ".join(words)


def misspell(query: str, rng: random.Random) -> str:
    words = query.split()
    content = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha()]
    if not content:
        return query
    i = rng.choice(content)
    w = words[i]
    j = rng.randrange(1, len(w) - 1)
    words[i] = w[:j] + w[j + 1 :] if rng.random() < 0.5 else w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    return " ".join(words)


def evaluate(
    chunks: list[tuple[str, str, str]],
    vectors: np.ndarray,
    queries: list[tuple[str, str]],
    embed: Callable[[str], Any],
    qrels: dict[str, dict[str, int]],
    variant: Variant,
) -> tuple[float, float]:
    index = Bm25Index(variant)
    index.upsert((cid, text) for cid, text, _ in chunks)
    doc_of = {cid: doc for cid, _, doc in chunks}
    position = {cid: i for i, (cid, _, _) in enumerate(chunks)}
    runs: dict[str, dict[str, list[str]]] = {"bm25": {}, "fused": {}}
    for qid, query in queries:
        scores = np.zeros(len(chunks))
        for cid, score in index.search(_counts(variant.query(query)), 1000):
            scores[position[cid]] = score
        dense = vectors @ np.asarray(embed(query), dtype=np.float32)
        best = scores.max() or 1.0
        for name, total in (("bm25", scores), ("fused", 0.7 * dense + 0.3 * scores / best)):
            order = np.argsort(-total, kind="stable")[:400]
            runs[name][qid] = list(dict.fromkeys(doc_of[chunks[i][0]] for i in order))[:100]
    return tuple(float(np.mean(list(ndcg_at_k(runs[n], qrels, 10).values()))) for n in ("bm25", "fused"))  # type: ignore[return-value]


def _counts(terms: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for term in terms:
        out[term] = out.get(term, 0.0) + 1.0
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="cranfield,scifact,cisi,med,npl")
    args = parser.parse_args(argv)
    from ragwright.models.embedders import default_embedder

    embedder = default_embedder()
    print(f"{'dataset':10s} {'variant':36s} {'bm25':>7s} {'fused':>7s}")
    for name in args.datasets.split(","):
        data = load_beir(DATA / name, "test")
        path = eval_store_path((DATA / name).resolve(), embedder.name)
        if not path.is_file():
            print(f"{name}: no cached store at {path}; run benchmarks/retrieval_beir.py first")
            continue
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        rows = conn.execute(
            "SELECT chunk_id, COALESCE(embed_text, text), document_id, vector, metadata FROM chunks ORDER BY rowid"
        ).fetchall()
        conn.close()
        chunks = [(r[0], r[1], r[2]) for r in rows]
        titles = [str(json.loads(r[4] or "{}").get("title") or "") for r in rows]
        vectors = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        queries = list(data.judged_queries.items())
        qrels = {q: data.qrels[q] for q, _ in queries}
        cache: dict[str, Any] = {}

        def embed(text: str, cache: dict[str, Any] = cache) -> Any:
            if text not in cache:
                cache[text] = embedder.embed_query(text)
            return cache[text]

        rng = random.Random(0)
        noisy = [(cid, corrupt(text, 0.15, rng), doc) for cid, text, doc in chunks]
        typos = [(qid, misspell(q, rng)) for qid, q in queries]
        cases = [
            ("auto (the default)", chunks, queries, Variant("auto")),
            ("auto + question stop words", chunks, queries, Variant("q", query_stops=QUESTION_WORDS)),
            ("auto + char trigrams", chunks, queries, Variant("tri", trigrams=True)),
            ("auto, 15% OCR noise", noisy, queries, Variant("auto")),
            ("auto + char trigrams, 15% OCR noise", noisy, queries, Variant("tri", trigrams=True)),
            ("auto, a misspelled query word", chunks, typos, Variant("auto")),
            ("auto + char trigrams, misspelled", chunks, typos, Variant("tri", trigrams=True)),
        ]
        if any(titles):
            for boost in (2, 3):
                boosted = [
                    (cid, text + (" " + title) * (boost - 1), doc)
                    for (cid, text, doc), title in zip(chunks, titles, strict=True)
                ]
                cases.append((f"auto, title x{boost}", boosted, queries, Variant("auto")))
        for label, corpus, qs, variant in cases:
            bm25, fused = evaluate(corpus, vectors, qs, embed, qrels, variant)
            print(f"{name:10s} {label:36s} {bm25:7.4f} {fused:7.4f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
