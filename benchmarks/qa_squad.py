"""Answers and declines on SQuAD 2.0 articles the answerability model never saw, default install (no LLM).

    python benchmarks/qa_squad.py --squad PATH/dev-v2.0.json [--per-class 300] [--work DIR] [--reserved]

The manifest's five held-out articles (``tools/answerability_data.json``) are ingested with the
defaults; a balanced QA set (half SQuAD-unanswerable) is written to ``WORK/heldout.jsonl`` (the same
records ``ragwright eval`` reads) and asked through ``Rag.ask``:

* ``default`` — the shipped answerability model gates the extractive answer;
* ``similarity floor (peer)`` — ``answerability="off"``: the decline rule before this model
  (``extractive_min_similarity`` 0.4), i.e. what ``ask`` did before.

Then the time the gate adds per question (features + model, over evidence the answerer computes
anyway) and the time of the whole evidence step. ``--reserved`` runs the same on the reserved
acceptance articles instead — once, at the very end.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tools"))
import squad_data

from ragwright.eval.qa import QaItem, evaluate_qa, render
from ragwright.generate.answerability import judge
from ragwright.generate.evidence import EmbeddingCache, gather
from ragwright.generate.question import analyze


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--squad", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=Path(__file__).parent / ".cache" / "qa_squad")
    ap.add_argument("--per-class", type=int, default=300)
    ap.add_argument("--reserved", action="store_true", help="the reserved acceptance articles (run once, last)")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)

    data = squad_data.load_squad(args.squad)
    if args.reserved:
        arts, name = squad_data.articles(data, reserved=True), "reserved"
    else:
        arts, name = squad_data.split(data)[1], "heldout"
    questions = squad_data.balanced_sample(arts, args.per_class)
    squad_data.write_qa(questions, args.work / f"{name}.jsonl")
    items = [QaItem(q.id, q.question, q.answers, q.unanswerable) for q in questions]
    print(f"{name}: articles {', '.join(a.title for a in arts)}; {len(items)} questions", flush=True)

    start = time.perf_counter()
    rag = squad_data.open_store(arts, args.work, name)
    print(f"store ready in {time.perf_counter() - start:.0f}s", flush=True)
    reports = {}
    for label, overrides in (("default", {}), ("similarity floor (peer)", {"answerability": "off"})):
        start = time.perf_counter()
        report = evaluate_qa(lambda q, o=overrides: rag.ask(q, **o), items)  # type: ignore[misc]
        reports[label] = report
        print(f"\n{render(report, f'{name} / {label}')}\n  wall {time.perf_counter() - start:.0f}s", flush=True)

    print("\nmetric                      default  peer    ratio")
    a, b = reports["default"].to_dict()["metrics"], reports["similarity floor (peer)"].to_dict()["metrics"]
    for metric in ("balanced_decline_accuracy", "answer_accuracy", "answered_correct", "citation_correct"):
        if metric in a and metric in b:
            ratio = a[metric]["mean"] / b[metric]["mean"] if b[metric]["mean"] else float("nan")
            print(f"{metric:<27} {a[metric]['mean']:.3f}    {b[metric]['mean']:.3f}   {ratio:.2f}x")

    cache = EmbeddingCache()
    gate_ms, evidence_ms = [], []
    for item in items[:200]:
        results = rag.search(item.question)
        start = time.perf_counter()
        ev = gather(analyze(item.question), results, rag.embedder, cache)
        mid = time.perf_counter()
        judge(ev, results)
        end = time.perf_counter()
        evidence_ms.append((mid - start) * 1000)
        gate_ms.append((end - mid) * 1000)
    gate_ms.sort()
    print(
        f"\ngate (features + model) per question: median {statistics.median(gate_ms):.2f} ms, "
        f"p95 {gate_ms[int(0.95 * len(gate_ms))]:.2f} ms; evidence step (units, embeddings cached after "
        f"first sight, sentence model) median {statistics.median(evidence_ms):.1f} ms"
    )
    rag.close()


if __name__ == "__main__":
    main()
