"""Our metrics against pytrec_eval (trec_eval, the oracle) on random runs with graded judgments."""

import random

import pytest
import pytrec_eval

from ragwright.eval.metrics import average_precision, hit_rate_at_k, mean, mrr, ndcg_at_k, precision_at_k, recall_at_k


def random_case(seed: int) -> tuple[dict[str, list[str]], dict[str, dict[str, int]]]:
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(30)]
    run, qrels = {}, {}
    for q in range(25):
        qid = f"q{q}"
        run[qid] = rng.sample(docs, 20)
        qrels[qid] = {d: rng.choice([1, 2, 3]) for d in rng.sample(docs, rng.randint(1, 6))}
    return run, qrels


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_against_trec_eval(seed: int) -> None:
    run, qrels = random_case(seed)
    scored = {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in run.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.10", "recip_rank", "P.10", "map"})
    per_query = evaluator.evaluate(scored)
    ours = {
        "ndcg_cut_10": ndcg_at_k(run, qrels, 10),
        "recall_10": recall_at_k(run, qrels, 10),
        "recip_rank": mrr(run, qrels),
        "P_10": precision_at_k(run, qrels, 10),
        "map": average_precision(run, qrels),
    }
    for q, m in per_query.items():
        for name, values in ours.items():
            assert values[q] == pytest.approx(m[name], abs=1e-9), (q, name)


def test_perfect_and_empty_runs() -> None:
    qrels = {"q": {"a": 2, "b": 1}}
    assert mean(ndcg_at_k({"q": ["a", "b"]}, qrels)) == pytest.approx(1.0)
    assert mean(ndcg_at_k({"q": ["b", "a"]}, qrels)) < 1.0
    assert mean(ndcg_at_k({}, qrels)) == 0.0


def test_hit_rate() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"z": 1}}
    run = {"q1": ["x", "a"], "q2": ["x", "y"]}
    assert hit_rate_at_k(run, qrels, 2) == {"q1": 1.0, "q2": 0.0}
    assert hit_rate_at_k(run, qrels, 1) == {"q1": 0.0, "q2": 0.0}
