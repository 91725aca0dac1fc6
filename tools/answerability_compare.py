"""Two answerability weight files on the same held-out questions, with paired bootstrap intervals.

    python tools/answerability_compare.py --squad PATH/dev-v2.0.json --weights OLD.json NEW.json \
        [--per-class 300] [--work DIR] [--boot 2000]

The questions are ``benchmarks/qa_squad.py``'s (the manifest's five held-out articles, the same balanced
sample, the same store), asked through ``Rag.ask`` with the defaults, once with each weight file (both
the sentence and the answerability model are swapped). Reported per file: balanced decline accuracy and
answer accuracy (answered answerable questions holding a gold answer); then NEW − OLD of each with a
95 % interval from a paired bootstrap (questions resampled within each class, both files scored on the
same resample), and how many questions each file gets right that the other does not.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import squad_data

from ragwright.eval.qa import QaItem, evaluate_qa
from ragwright.generate import answerability


def outcomes(rag: Any, items: list[QaItem], weights: Path, work: Path) -> tuple[np.ndarray, np.ndarray]:
    """Per question: declined (bool) and answer correct (1/0; NaN when declined or unanswerable), kept in
    *work* by the weight file's and the questions' hash (a second run with the same file is free)."""
    key = hashlib.sha256(weights.read_bytes() + "\n".join(i.id for i in items).encode()).hexdigest()[:12]
    cached = work / f"compare-{key}.npz"
    if cached.exists():
        d = np.load(cached)
        return d["declined"], d["correct"]
    models = answerability.load_weights(str(weights))
    answerability._shipped = functools.cache(lambda: models)  # type: ignore[assignment]
    report = evaluate_qa(rag.ask, items)
    declined = np.array([r.declined for r in report.results])
    correct = np.array([r.scores.get("answer_accuracy", np.nan) for r in report.results], dtype=float)
    np.savez(cached, declined=declined, correct=correct)
    return declined, correct


def metrics(unans: np.ndarray, declined: np.ndarray, correct: np.ndarray) -> tuple[float, float]:
    balanced = ((~declined[~unans]).mean() + declined[unans].mean()) / 2
    answered = correct[~np.isnan(correct)]
    return float(balanced), float(answered.mean()) if len(answered) else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--squad", type=Path, required=True)
    ap.add_argument("--weights", type=Path, nargs=2, required=True, metavar=("OLD", "NEW"))
    ap.add_argument("--work", type=Path, default=Path(__file__).parents[1] / "benchmarks" / ".cache" / "qa_squad")
    ap.add_argument("--per-class", type=int, default=300)
    ap.add_argument("--boot", type=int, default=2000)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)

    arts = squad_data.split(squad_data.load_squad(args.squad))[1]
    questions = squad_data.balanced_sample(arts, args.per_class)
    items = [QaItem(q.id, q.question, q.answers, q.unanswerable) for q in questions]
    unans = np.array([q.unanswerable for q in questions])
    rag = squad_data.open_store(arts, args.work, "heldout")
    runs = [outcomes(rag, items, w, args.work) for w in args.weights]
    rag.close()

    for w, (d, c) in zip(args.weights, runs, strict=True):
        b, a = metrics(unans, d, c)
        print(f"{w.name:<32} balanced decline {b:.3f}   answer accuracy {a:.3f} (n={int((~np.isnan(c)).sum())})")
    (d0, c0), (d1, c1) = runs
    rng = np.random.default_rng(0)
    pos, neg = np.flatnonzero(~unans), np.flatnonzero(unans)
    diffs = []
    for _ in range(args.boot):
        idx = np.concatenate([rng.choice(pos, len(pos)), rng.choice(neg, len(neg))])
        m0 = metrics(unans[idx], d0[idx], c0[idx])
        m1 = metrics(unans[idx], d1[idx], c1[idx])
        diffs.append((m1[0] - m0[0], m1[1] - m0[1]))
    arr = np.array(diffs)
    point = np.subtract(metrics(unans, d1, c1), metrics(unans, d0, c0))
    for k, name in enumerate(("balanced decline accuracy", "answer accuracy")):
        lo, hi = np.nanpercentile(arr[:, k], [2.5, 97.5])
        print(f"NEW - OLD {name:<26} {point[k]:+.3f} [{lo:+.3f}, {hi:+.3f}] (paired bootstrap, {args.boot})")
    right0 = np.where(unans, d0, ~d0)
    right1 = np.where(unans, d1, ~d1)
    print(
        f"decline decision: NEW right where OLD wrong {int((right1 & ~right0).sum())}, the reverse "
        f"{int((right0 & ~right1).sum())}"
    )


if __name__ == "__main__":
    main()
