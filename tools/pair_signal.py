"""Train and measure the pair-reading answerability signal: the chat model's yes/no on (question, evidence).

    python tools/pair_signal.py --squad PATH/dev-v2.0.json --offcorpus PATH/test-v2.0.json \
        --llm local:0.5b [--llm local:1.5b] [--train-per-class 20] [--heldout-per-class 100] [--write]

Run ``tools/train_answerability.py`` first: its work folder holds the training store and
``oof.json``, the lexical model's leave-one-article-out probabilities, which are the lexical input of
the stacked model here (so the stack never sees a lexical score fitted on the same question).

1. A balanced sample of the nine training articles' questions (``--train-per-class`` of each class per
   article) plus ``--offcorpus-n`` off-corpus questions, and a balanced sample of the five held-out
   articles' questions (``--heldout-per-class``, drawn like ``benchmarks/qa_squad.py``; the reserved
   articles are never read) are retrieved as ``ask`` retrieves them; each question's best evidence unit
   and its neighbours form the passage (:func:`ragwright.generate.pair.passage`).
2. Each chat model gives P(yes) for every (question, passage): one forward pass, no decoding. The
   records are cached in ``WORK/pair-<model>.jsonl`` (delete to redo).
3. The stacked model ``(lex_logit, pair_logit)`` is fitted on the training sample; its threshold is
   chosen on leave-one-article-out probabilities (the mean of answered, SQuAD-unanswerable declined and
   off-corpus declined, as for the lexical model). P(yes) alone gets its own threshold the same way. The
   variant with the better balanced accuracy on the training sample's SQuAD questions is the model's gate
   (a small model: the stack; the 1.5B model: P(yes) alone, a model over ``pair_logit`` only). Then
   every variant is measured once on the held-out sample, next to the lexical gate. ``--write`` stores the
   chosen gates in ``src/ragwright/generate/pair_models.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import squad_data
from train_answerability import balanced_accuracy, best_threshold, model_from, predict

from ragwright.eval.stats import balanced_accuracy_ci, paired_bootstrap
from ragwright.generate.answerability import LogisticModel, answer_model, judge
from ragwright.generate.evidence import EmbeddingCache, gather
from ragwright.generate.pair import PAIR_FEATURES, logit, passage, prompt
from ragwright.generate.question import analyze

OUT = Path(__file__).parents[1] / "src" / "ragwright" / "generate" / "pair_models.json"
TRAIN_WORK = Path.home() / ".cache" / "ragwright" / "answerability-train"


def sample(arts: list[squad_data.Article], per_class: int, seed: int) -> list[squad_data.Qa]:
    """*per_class* answerable and unanswerable questions of each article."""
    rng = random.Random(seed)
    out: list[squad_data.Qa] = []
    for art in arts:
        for label in (False, True):
            pool = [q for q in art.questions if q.unanswerable is label]
            out.extend(rng.sample(pool, min(per_class, len(pool))))
    return out


def evidence(
    rag: Any, questions: list[squad_data.Qa], split: str, lex: dict[str, float] | None
) -> list[dict[str, Any]]:
    """Retrieval, evidence and the lexical probability of each question (*lex*: out-of-fold, by id)."""
    cache = EmbeddingCache()
    rows = []
    for qa in questions:
        results = rag.search(qa.question)
        ev = gather(analyze(qa.question), results, rag.embedder, cache)
        lexical = lex[qa.id] if lex is not None else judge(ev, results).probability
        rows.append(
            {
                "id": qa.id,
                "split": split,
                "article": qa.article,
                "label": 0 if qa.unanswerable else 1,
                "kind": "off" if qa.article.startswith("off:") else "squad",
                "lex_p": lexical,
                "question": qa.question,
                "passage": passage(ev, ev.best) if ev.best is not None else None,
            }
        )
    return rows


def score(llm: Any, rows: list[dict[str, Any]], path: Path, *, cached_only: bool = False) -> dict[str, float]:
    """P(yes) by question id, cached in *path*; prompts sorted by passage so repeats reuse the KV cache."""
    done: dict[str, float] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            done[rec["id"]] = rec["p"]
    if cached_only:
        return done
    todo = sorted((r for r in rows if r["id"] not in done and r["passage"]), key=lambda r: r["passage"])
    start = time.perf_counter()
    with path.open("a", encoding="utf-8") as fh:
        for n, r in enumerate(todo, start=1):
            p = llm.yes_probabilities([prompt(llm, r["question"], r["passage"])])[0]
            done[r["id"]] = p
            fh.write(json.dumps({"id": r["id"], "p": p}) + "\n")
            fh.flush()
            if n % 50 == 0:
                print(f"  {llm.name}: {n}/{len(todo)} in {time.perf_counter() - start:.0f}s", flush=True)
    return done


def cost(llm: Any, rows: list[dict[str, Any]], n: int = 20) -> list[float]:
    """Seconds per question with nothing reused (the KV cache reset before each prompt)."""
    out = []
    llama = llm._model()
    for r in [r for r in rows if r["passage"]][:n]:
        llama.reset()
        start = time.perf_counter()
        llm.yes_probabilities([prompt(llm, r["question"], r["passage"])])
        out.append(time.perf_counter() - start)
    return out


def features(rows: list[dict[str, Any]], pair: dict[str, float]) -> np.ndarray:
    return np.array([[logit(r["lex_p"]), logit(pair.get(r["id"], 1e-6))] for r in rows])


def report(name: str, y: np.ndarray, yes: np.ndarray) -> str:
    ci = balanced_accuracy_ci(yes[y == 1].astype(float), (~yes[y == 0]).astype(float))
    return (
        f"  {name:<34} {ci.mean:.3f} [{ci.low:.3f}, {ci.high:.3f}]   answered {yes[y == 1].mean():.3f}"
        f"   declined {(~yes[y == 0]).mean():.3f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--squad", type=Path, required=True)
    ap.add_argument("--offcorpus", type=Path, required=True)
    ap.add_argument("--llm", action="append", required=True, help="chat model spec (repeatable)")
    ap.add_argument("--train-per-class", type=int, default=20)
    ap.add_argument("--offcorpus-n", type=int, default=60)
    ap.add_argument("--heldout-per-class", type=int, default=100)
    ap.add_argument("--work", type=Path, default=TRAIN_WORK)
    ap.add_argument(
        "--heldout-work", type=Path, default=Path(__file__).parents[1] / "benchmarks" / ".cache" / "qa_squad"
    )
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--cost-n", type=int, default=20, help="prompts timed with nothing reused")
    ap.add_argument("--cached-only", action="store_true", help="use the P(yes) already cached, score nothing new")
    args = ap.parse_args()

    from ragwright.models.llms import load_chat

    oof = json.loads((args.work / "oof.json").read_text(encoding="utf-8"))
    train_arts, held_arts = squad_data.split(squad_data.load_squad(args.squad))
    assert not {a.title for a in train_arts + held_arts} & squad_data.RESERVED
    train_q = sample(train_arts, args.train_per_class, seed=5)
    off = squad_data.load_offcorpus(args.offcorpus)[: args.offcorpus_n]  # the trainer's own off-corpus questions
    held_q = squad_data.balanced_sample(held_arts, args.heldout_per_class, seed=17)

    cached = args.work / f"pair-rows-{args.train_per_class}-{args.offcorpus_n}-{args.heldout_per_class}.json"
    if cached.exists():
        rows, held = json.loads(cached.read_text(encoding="utf-8"))
    else:
        rag = squad_data.open_store(train_arts, args.work, "train")
        rows = evidence(rag, train_q + off, "train", oof)
        rag.close()
        args.heldout_work.mkdir(parents=True, exist_ok=True)
        rag = squad_data.open_store(held_arts, args.heldout_work, "heldout")
        held = evidence(rag, held_q, "heldout", None)
        rag.close()
        cached.write_text(json.dumps([rows, held]), encoding="utf-8")
    print(f"train sample {len(rows)} (off-corpus {len(off)}), held-out sample {len(held)}", flush=True)

    shipped: dict[str, Any] = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    lex_t = answer_model().threshold
    for spec in args.llm:
        llm = load_chat(spec)
        safe = llm.name.replace("/", "_").replace(":", "_")
        pair = score(llm, rows + held, args.work / f"pair-{safe}.jsonl", cached_only=args.cached_only)
        # a question without a best unit is declined by every gate; one not scored (a run cut short
        # with --cached-only) is left out of this model's figures, and the counts say so
        rows_m = [r for r in rows if r["id"] in pair or not r["passage"]]
        held_m = [r for r in held if r["id"] in pair or not r["passage"]]
        print(f"{llm.name}: scored train {len(rows_m)}/{len(rows)}, held-out {len(held_m)}/{len(held)}", flush=True)
        x, xh = features(rows_m, pair), features(held_m, pair)
        y = np.array([r["label"] for r in rows_m])
        kinds = np.array([r["kind"] == "off" for r in rows_m])
        groups = np.array([r["article"] if r["kind"] == "squad" else "off" for r in rows_m])
        yh = np.array([r["label"] for r in held_m])
        oof_p = np.zeros(len(y))
        for g in sorted(set(groups)):
            test = groups == g
            m = model_from(PAIR_FEATURES, x[~test], y[~test], 1.0, 0.5, {})
            oof_p[test] = predict(m, x[test][:, [PAIR_FEATURES.index(f) for f in m.features]])
        threshold, three = best_threshold(y, oof_p, kinds)
        squad = ~kinds
        oof_bacc = balanced_accuracy(y[squad], oof_p[squad], threshold)
        pair_train = 1 / (1 + np.exp(-x[:, 1]))  # P(yes) alone: its threshold is the one fitted parameter
        pair_t, _ = best_threshold(y, pair_train, kinds)
        lex_train = np.array([r["lex_p"] for r in rows_m])  # out-of-fold already (oof.json)
        train_figures = {
            "lexical": balanced_accuracy(y[squad], lex_train[squad], lex_t),
            "pair alone": balanced_accuracy(y[squad], pair_train[squad], pair_t),
            "stacked (out-of-fold)": balanced_accuracy(y[squad], oof_p[squad], threshold),
        }
        # the gate shipped for this model is chosen here, on the training sample: the stacked model, or the
        # chat model's P(yes) alone where that reads the pairs better (a larger model: the lexical logit
        # then only adds the SQuAD-specific noise of its features)
        alone = train_figures["pair alone"] > train_figures["stacked (out-of-fold)"]
        print(
            f"training sample, SQuAD questions ({int(squad.sum())}): balanced decline accuracy "
            + ", ".join(f"{k} {v:.3f}" for k, v in train_figures.items())
            + f"; shipped: {'pair alone' if alone else 'stacked'}",
            flush=True,
        )
        meta = {
            "chat_model": llm.name,
            "train_questions": len(rows_m),
            "variant": "pair alone" if alone else "stacked",
            "train_balanced_accuracy_squad": {k: round(v, 4) for k, v in train_figures.items()},
            "oof_balanced_accuracy_squad": round(oof_bacc, 4),
            "oof_three_way": round(three, 4),
            "prompt": "ragwright.generate.pair.PAIR_USER over the best unit and its neighbours",
        }
        signs = {"lex_logit": 1, "pair_logit": 1}
        stacked = model_from(PAIR_FEATURES, x, y, 1.0, threshold, meta, signs)
        ph = predict(stacked, xh[:, [PAIR_FEATURES.index(f) for f in stacked.features]])
        pair_h = 1 / (1 + np.exp(-xh[:, 1]))
        # P(yes) alone as a model over pair_logit: sigmoid(pair_logit) = P(yes), cut at its own threshold
        chosen = (
            LogisticModel(("pair_logit",), (0.0,), (1.0,), (1.0,), 0.0, threshold=pair_t, meta=meta)
            if alone
            else stacked
        )
        chosen_ok = ((pair_h >= pair_t) if alone else (ph >= threshold)) == (yh == 1)
        # paired: each question's correctness weighted so the mean is the balanced accuracy
        n_pos, n_neg = int((yh == 1).sum()), int((yh == 0).sum())
        weight = np.where(yh == 1, len(yh) / (2 * max(n_pos, 1)), len(yh) / (2 * max(n_neg, 1)))
        lex_ok = (np.array([r["lex_p"] for r in held_m]) >= lex_t) == (yh == 1)
        diff = paired_bootstrap(
            {r["id"]: float(w * ok) for r, w, ok in zip(held_m, weight, lex_ok, strict=True)},
            {r["id"]: float(w * ok) for r, w, ok in zip(held_m, weight, chosen_ok, strict=True)},
        )
        seconds = cost(llm, held_m, args.cost_n)
        print(
            f"\n{llm.name}: threshold {threshold} (train out-of-fold SQuAD balanced {oof_bacc:.3f}), "
            f"coef {dict(zip(stacked.features, np.round(stacked.coef, 3), strict=True))}"
        )
        print(f"held-out sample ({len(held_m)} questions, half unanswerable): balanced decline accuracy, 95% CI")
        print(report("lexical gate (shipped)", yh, np.array([r["lex_p"] for r in held_m]) >= lex_t))
        print(report("pair P(yes) alone", yh, pair_h >= pair_t))
        print(report("stacked (lexical + pair)", yh, ph >= threshold))
        iv = diff.difference
        print(
            f"  {'pair alone' if alone else 'stacked'} (shipped) - lexical (paired): {iv.mean:+.3f} "
            f"[{iv.low:+.3f}, {iv.high:+.3f}], {diff.wins} questions better, {diff.losses} worse"
        )
        print(
            f"  pair cost per question (nothing reused): median {statistics.median(seconds) * 1000:.0f} ms, "
            f"max {max(seconds) * 1000:.0f} ms"
        )
        shipped[llm.name] = chosen.to_dict()
    if args.write:
        OUT.write_text(json.dumps(shipped, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
