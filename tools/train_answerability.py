"""Train the answerability and sentence models shipped in ``ragwright/generate/answerability.json``.

    python tools/train_answerability.py --squad PATH/dev-v2.0.json --offcorpus PATH/test-v2.0.json \
        [--extra explorer train_prefix [--extra-dir DIR]] [--work DIR] [--out FILE]

The data is the SQuAD 2.0 file named in ``tools/answerability_data.json`` (checked by sha256; it is not
kept in the repository). Only the manifest's nine *training* articles are used: the five held-out
articles belong to ``benchmarks/qa_squad.py`` and the three reserved ones to the final acceptance check.
``--extra`` adds the manifest's further labelled SQuAD 2.0 articles (``extra`` in the manifest,
``tools/squad_extra.py``: the explorer pages of 18 more dev articles, the first ten train articles),
checked to share no title or paragraph with the held-out and reserved articles; without it the recipe
is the original one.

1. The training articles are ingested into a SQLite store with the defaults (default embedder,
   structural chunks), and every question is retrieved as ``ask`` retrieves it (hybrid, top 5). Extra
   articles go into stores of their own, about nine articles each (the size of the original training
   store), so every question meets as many distractor articles as before.
2. **Sentence model**: every candidate unit of an answerable question's sources is labelled by
   whether it contains a gold answer; logistic regression on :data:`SENTENCE_FEATURES`.
3. **Answerability model**: features of each question and its best unit (ranked by the new sentence
   model), labelled by SQuAD's ``is_impossible``, plus *off-corpus* questions (questions about other
   articles, from the manifest's unlabelled file, which the training store cannot answer: label 0) so
   the model sees both kinds of unanswerable question a RAG store meets — adversarial near-misses and
   questions about something it does not hold. L2 strength chosen by leave-one-article-out log-loss
   (an off-corpus question is left out with the article it was written about), the threshold by
   balanced accuracy of the out-of-fold probabilities.

Both are plain numpy logistic regressions (Newton's method on standardised features); the shipped
JSON holds means, scales, coefficients, intercept, threshold and the out-of-fold figures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import pickle
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# one BLAS thread: the fits are small (15k x 40), and on a shared, loaded machine a threaded BLAS made each
# one 27x slower (7.5 s against 0.28 s); the results are the same
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import squad_data
import squad_extra

from ragwright.eval.qa import contains_answer
from ragwright.generate.answerability import LogisticModel
from ragwright.generate.evidence import EmbeddingCache, Evidence, gather, rescore
from ragwright.generate.extractive import choose_units
from ragwright.generate.features import ANSWER_FEATURES, ANSWER_SIGNS, SENTENCE_FEATURES, answer_features, unit_features
from ragwright.generate.question import analyze
from ragwright.model.results import SearchResult

OUT = Path(__file__).parents[1] / "src" / "ragwright" / "generate" / "answerability.json"


@dataclass
class Sample:
    qa: squad_data.Qa
    results: list[SearchResult]
    ev: Evidence


class MemoEmbedder:
    """The embedder with every vector remembered (and saved with the retrieval results)."""

    def __init__(self, inner: Any, memo: dict[tuple[str, str], Any] | None = None) -> None:
        self.inner, self.memo = inner, memo if memo is not None else {}
        self.name, self.dimension = inner.name, inner.dimension

    def embed_query(self, text: str) -> Any:
        key = ("q", text)
        if key not in self.memo:
            self.memo[key] = self.inner.embed_query(text)
        return self.memo[key]

    def embed_documents(self, texts: list[str]) -> Any:
        missing = [t for t in dict.fromkeys(texts) if ("d", t) not in self.memo]
        if missing:
            for t, v in zip(missing, self.inner.embed_documents(missing), strict=True):
                self.memo[("d", t)] = v
        return np.vstack([self.memo[("d", t)] for t in texts])


def retrieve(
    train: list[squad_data.Article],
    questions: list[squad_data.Qa],
    work: Path,
    name: str = "retrieved",
    store: str = "train",
) -> tuple[list[tuple[squad_data.Qa, list[SearchResult]]], MemoEmbedder]:
    """Retrieval results of every question over a store of *train* (``work/STORE.db``), cached in
    *work* (delete ``NAME.pkl`` to redo)."""
    cached = work / f"{name}.pkl"
    if cached.exists():
        with cached.open("rb") as fh:
            pairs, memo = pickle.load(fh)
        from ragwright.models.embedders import default_embedder

        return pairs, MemoEmbedder(default_embedder(), memo)
    start = time.perf_counter()
    rag = squad_data.open_store(train, work, store)
    print(f"store ready in {time.perf_counter() - start:.0f}s", flush=True)
    embedder = MemoEmbedder(rag.embedder)
    pairs = []
    for n, qa in enumerate(questions, start=1):
        results = rag.search(qa.question)
        embedder.embed_query(qa.question)
        pairs.append((qa, results))
        if n % 500 == 0:
            print(f"  {n}/{len(questions)} questions, {time.perf_counter() - start:.0f}s", flush=True)
    rag.close()
    with cached.open("wb") as fh:
        pickle.dump((pairs, embedder.memo), fh)
    return pairs, embedder


def collect(pairs: list[tuple[squad_data.Qa, list[SearchResult]]], embedder: Any) -> list[Sample]:
    cache = EmbeddingCache(max_entries=500_000)
    bootstrap = LogisticModel(("cos",), (0.0,), (1.0,), (1.0,), 0.0)  # ranks by similarity until trained
    samples = [
        Sample(qa, results, gather(analyze(qa.question), results, embedder, cache, bootstrap)) for qa, results in pairs
    ]
    return samples


def fit(x: np.ndarray, y: np.ndarray, l2: float, iters: int = 50) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by Newton's method (the intercept is not penalised)."""
    n, d = x.shape
    xa = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    reg = np.full(d + 1, l2)
    reg[-1] = 0.0
    for _ in range(iters):
        z = np.clip(xa @ w, -30, 30)
        p = 1.0 / (1.0 + np.exp(-z))
        grad = xa.T @ (p - y) + reg * w
        hess = (xa * (p * (1 - p))[:, None]).T @ xa + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    return mean, scale


def model_from(
    features: tuple[str, ...],
    x: np.ndarray,
    y: np.ndarray,
    l2: float,
    threshold: float,
    meta: dict[str, Any],
    signs: dict[str, int] | None = None,
) -> LogisticModel:
    """Fit on standardised features; with *signs*, a feature whose coefficient comes out against its
    expected direction is dropped and the rest refitted, until every sign agrees."""
    keep = list(range(len(features)))
    while True:
        mean, scale = standardise(x[:, keep])
        coef, intercept = fit((x[:, keep] - mean) / scale, y, l2)
        wrong = [k for k, c in zip(keep, coef, strict=True) if signs and signs.get(features[k], 0) * c < 0]
        if not wrong:
            break
        worst = max(wrong, key=lambda k: abs(coef[keep.index(k)]))
        keep.remove(worst)
    features = tuple(features[k] for k in keep)
    return LogisticModel(
        features=features,
        mean=tuple(float(v) for v in mean),
        scale=tuple(float(v) for v in scale),
        coef=tuple(float(v) for v in coef),
        intercept=intercept,
        threshold=threshold,
        meta=meta,
    )


def predict(model: LogisticModel, x: np.ndarray) -> np.ndarray:
    z = model.intercept + ((x - np.asarray(model.mean)) / np.asarray(model.scale)) @ np.asarray(model.coef)
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


def balanced_accuracy(y: np.ndarray, p: np.ndarray, t: float) -> float:
    yes = p >= t
    return float(((yes[y == 1]).mean() + (~yes[y == 0]).mean()) / 2)


def log_loss(y: np.ndarray, p: np.ndarray) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def matrix(rows: list[dict[str, float]], features: tuple[str, ...]) -> np.ndarray:
    return np.array([[r[f] for f in features] for r in rows], dtype=float)


def train_sentence(samples: list[Sample]) -> LogisticModel:
    rows, labels = [], []
    for s in samples:
        if s.qa.unanswerable:
            continue
        for i, unit in enumerate(s.ev.units):
            rows.append(unit_features(s.ev, i))
            labels.append(float(contains_answer(unit.text, s.qa.answers)))
    x, y = matrix(rows, SENTENCE_FEATURES), np.array(labels)
    meta = {"units": len(y), "positive_units": int(y.sum())}
    return model_from(SENTENCE_FEATURES, x, y, 1.0, 0.5, meta)


def answer_rows(samples: list[Sample]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = matrix([answer_features(s.ev, s.results) for s in samples], ANSWER_FEATURES)
    y = np.array([0.0 if s.qa.unanswerable else 1.0 for s in samples])
    groups = np.array([s.qa.article for s in samples])
    return x, y, groups


def folds(groups: np.ndarray) -> np.ndarray:
    """The cross-validation fold of each row: its article, an off-corpus question with the article it
    was written about (``off:Oxygen`` with ``Oxygen``, when that article is a training article too)."""
    return np.array([str(g).removeprefix("off:") for g in groups])


def out_of_fold(x: np.ndarray, y: np.ndarray, groups: np.ndarray, l2: float) -> np.ndarray:
    p = np.zeros(len(y))
    groups = folds(groups)
    for g in sorted(set(groups)):
        test = groups == g
        m = model_from(ANSWER_FEATURES, x[~test], y[~test], l2, 0.5, {}, dict(ANSWER_SIGNS))
        p[test] = predict(m, x[test][:, [ANSWER_FEATURES.index(f) for f in m.features]])
    return p


def best_threshold(y: np.ndarray, p: np.ndarray, kinds: np.ndarray) -> tuple[float, float]:
    """The threshold with the best mean of three rates: answerable questions answered, SQuAD's
    unanswerable questions declined, off-corpus questions declined (each kind weighs a third)."""
    grid = np.round(np.arange(0.05, 0.951, 0.005), 3)

    def score(t: float) -> float:
        yes = p >= t
        return float((yes[y == 1].mean() + (~yes[(y == 0) & ~kinds]).mean() + (~yes[kinds]).mean()) / 3)

    scores = [score(float(t)) for t in grid]
    i = int(np.argmax(scores))
    return float(grid[i]), float(scores[i])


def answer_accuracy(samples: list[Sample]) -> float:
    hits = []
    for s in samples:
        if s.qa.unanswerable:
            continue
        chosen = choose_units(s.ev, 3)
        hits.append(float(any(contains_answer(s.ev.units[i].text, s.qa.answers) for i in chosen)))
    return float(np.mean(hits))


def extra_pairs(
    args: argparse.Namespace, guarded: list[squad_data.Article], work: Path
) -> tuple[list[tuple[squad_data.Qa, list[SearchResult]]], dict[tuple[str, str], Any], list[str]]:
    """Retrieval results of the extra articles' questions, each over a store of about nine extra
    articles in manifest order (``extra-<hash of the titles>``)."""
    extra = squad_extra.load_extra(args.extra_dir, tuple(args.extra))
    squad_extra.check_disjoint(extra, guarded)
    print(f"extra ({', '.join(args.extra)}): {squad_extra.summary(extra)}", flush=True)
    pairs: list[tuple[squad_data.Qa, list[SearchResult]]] = []
    memo: dict[tuple[str, str], Any] = {}
    groups = [extra[i : i + 9] for i in range(0, len(extra), 9)]
    if len(groups) > 1 and len(groups[-1]) < 5:  # no store of fewer than five articles
        last = groups.pop()
        groups[-1] = groups[-1] + last
    assert sum(len(g) for g in groups) == len({a.title for g in groups for a in g}) == len(extra)
    for arts in groups:
        name = "extra-" + hashlib.sha256("\n".join(a.title for a in arts).encode()).hexdigest()[:10]
        questions = [q for a in arts for q in a.questions]
        got, embedder = retrieve(arts, questions, work, name, name)
        pairs += got
        memo.update(embedder.memo)
    return pairs, memo, sorted(a.title for a in extra)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--squad", type=Path, required=True, help="the SQuAD 2.0 file of the manifest")
    ap.add_argument(
        "--offcorpus", type=Path, required=True, help="the manifest's unlabelled file (off-corpus questions)"
    )
    ap.add_argument(
        "--extra",
        nargs="*",
        default=[],
        choices=("explorer", "train_prefix"),
        help="also train on the manifest's extra labelled articles (tools/squad_extra.py)",
    )
    ap.add_argument("--extra-dir", type=Path, default=squad_extra.DEFAULT_DIR)
    ap.add_argument("--work", type=Path, default=Path.home() / ".cache" / "ragwright" / "answerability-train")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--rows", type=Path, help="also save the answerability feature rows here (.npz)")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)

    data = squad_data.load_squad(args.squad)
    train, heldout = squad_data.split(data)
    expected = set(squad_data.manifest()["train_articles"])
    assert {a.title for a in train} == expected, "training articles differ from the manifest"
    assert not {a.title for a in train} & squad_data.RESERVED
    questions = [q for a in train for q in a.questions]
    print(f"training articles: {len(train)}, questions: {len(questions)}", flush=True)

    pairs, embedder = retrieve(train, questions, args.work)
    off = squad_data.load_offcorpus(args.offcorpus)
    off_pairs, off_embedder = retrieve(train, off, args.work, "offcorpus")
    embedder.memo.update(off_embedder.memo)
    print(f"off-corpus questions: {len(off_pairs)}", flush=True)
    extra_titles: list[str] = []
    if args.extra:
        # guarded: the held-out articles and the reserved ones (compared by title and paragraph hash only)
        more, memo, extra_titles = extra_pairs(args, heldout + squad_data.articles(data, reserved=True), args.work)
        pairs += more
        embedder.memo.update(memo)
    start = time.perf_counter()
    memo_file = args.work / "evidence-memo.pkl"  # the unit embeddings of earlier runs (delete to redo)
    if memo_file.exists():
        with memo_file.open("rb") as fh:
            embedder.memo.update(pickle.load(fh))
    samples = collect(pairs + off_pairs, embedder)
    with memo_file.open("wb") as fh:
        pickle.dump(embedder.memo, fh)
    print(f"evidence of {len(samples)} questions in {time.perf_counter() - start:.0f}s", flush=True)

    sentence = train_sentence(samples)
    for s in samples:
        rescore(s.ev, sentence)
    x, y, groups = answer_rows(samples)
    if args.rows:  # the answerability rows, for trying model variants without recomputing the evidence
        ids = np.array([s.qa.id for s in samples])
        np.savez_compressed(args.rows, x=x, y=y, groups=groups.astype(str), ids=ids, features=ANSWER_FEATURES)
    grid = (0.1, 1.0, 10.0, 100.0, 1000.0)
    losses = {l2: log_loss(y, out_of_fold(x, y, groups, l2)) for l2 in grid}
    l2 = min(losses, key=lambda k: losses[k])
    oof = out_of_fold(x, y, groups, l2)
    # the out-of-fold probabilities by question id: the lexical input of tools/pair_signal.py's stacked model
    oof_ids = {s.qa.id: round(float(p), 6) for s, p in zip(samples, oof, strict=True)}
    (args.work / "oof.json").write_text(json.dumps(oof_ids) + "\n", encoding="utf-8")
    squad_only = ~np.char.startswith(groups.astype(str), "off:")
    threshold, oof_three = best_threshold(y, oof, ~squad_only)
    oof_bacc = balanced_accuracy(y, oof, threshold)
    acc = answer_accuracy(samples)
    oof_squad = balanced_accuracy(y[squad_only], oof[squad_only], threshold)
    off_declined = float((oof[~squad_only] < threshold).mean())
    print(f"out-of-fold on SQuAD questions only: balanced {oof_squad:.3f}; off-corpus declined {off_declined:.3f}")
    print(f"l2 log-loss (leave-one-article-out): {losses}; chosen {l2}")
    print(f"out-of-fold balanced decline accuracy {oof_bacc:.3f} (three-way {oof_three:.3f}) at threshold {threshold}")
    print(f"answer accuracy of the chosen units (training articles): {acc:.3f}")

    meta = {
        "trained": dt.date.today().isoformat(),
        "data": {k: squad_data.manifest()[k] for k in ("repository", "commit", "path", "sha256")},
        **({"data_extra": _extra_sources(args.extra)} if args.extra else {}),
        "embedder": embedder.name,
        "articles": sorted(a.title for a in train),
        **({"extra": {"parts": list(args.extra), "articles": extra_titles}} if args.extra else {}),
        "questions": len(samples),
        "l2": l2,
        "oof_log_loss": losses[l2],
        "oof_balanced_accuracy": oof_bacc,
        "oof_balanced_accuracy_squad": oof_squad,
        "oof_offcorpus_declined": off_declined,
        "offcorpus_questions": len(off_pairs),
        "oof_three_way": oof_three,
        "threshold_rule": "max mean of (answerable answered, SQuAD unanswerable declined, off-corpus declined), "
        "leave-one-article-out probabilities",
    }
    answer = model_from(ANSWER_FEATURES, x, y, l2, threshold, meta, dict(ANSWER_SIGNS))
    sentence_meta = {**(sentence.meta or {}), "trained": meta["trained"], "data": meta["data"]}
    sentence = LogisticModel(
        sentence.features, sentence.mean, sentence.scale, sentence.coef, sentence.intercept, 0.5, sentence_meta
    )
    payload = {"sentence": _rounded(sentence.to_dict()), "answerable": _rounded(answer.to_dict())}
    args.out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    top = sorted(zip(answer.features, answer.coef, strict=True), key=lambda fc: -abs(fc[1]))[:12]
    print("largest standardised coefficients:", ", ".join(f"{f} {c:+.2f}" for f, c in top))


def _extra_sources(parts: list[str]) -> list[dict[str, str]]:
    spec = squad_extra.spec()
    return [{k: spec[p][k] for k in ("repository", "commit")} | {"part": p} for p in parts]


def _rounded(d: dict[str, Any]) -> dict[str, Any]:
    for key in ("mean", "scale", "coef"):
        d[key] = [float(f"{v:.6g}") for v in d[key]]
    d["intercept"] = float(f"{d['intercept']:.6g}")
    if isinstance(d.get("threshold"), float) and not math.isnan(d["threshold"]):
        d["threshold"] = float(f"{d['threshold']:.4g}")
    return d


if __name__ == "__main__":
    main()
