"""LLM answers measured (issue 20 item 3): the local chat models against the extractive answer.

    python benchmarks/llm_answers.py --squad PATH/dev-v2.0.json --llm local:0.5b --llm local:1.5b \
        [--per-class 30] [--rag-set] [--work DIR] [--compress] [--ttft N]

**QA set**: a balanced sample of questions about the five held-out SQuAD 2.0 articles
(``tools/answerability_data.json``; half SQuAD-unanswerable, drawn with its own seed, never the
reserved articles), asked against a store of those articles. Every question is answered once by each
model with the gate off (streamed: time to first token and tokens per second per answer, one thread,
5 sources); the gates are then read on the same evidence, so each row below is the same answers with a
different decline rule:

* ``extractive`` — the default install (no LLM): the lexical answerability gate + the quoted unit;
* ``LLM, no gate`` — the model alone (its own "the sources do not say" is its decline);
* ``LLM + lexical gate`` — the shipped answerability model declines before generating;
* ``LLM + pair gate`` — the chat model's yes/no on the best evidence (:mod:`ragwright.generate.pair`;
  ``pair_gate=True``) as ``pair_models.json`` weighs it for the model: stacked with the lexical logit
  (the 0.5B) or alone (the 1.5B); only when the file holds weights for the model.

Metrics (:mod:`ragwright.eval.qa`): balanced decline accuracy, answer accuracy (answered answerable
questions holding a gold answer), citation correctness (a cited chunk holds a gold answer),
faithfulness (lexical), each with a 95 % bootstrap interval.

``--compress``: the sources the model reads are compressed to their sentences closest to the question
(``use_compression=True``: embedding compression, ``compression_min_similarity`` 0.35) — fewer prompt
tokens, so less time to the first token; its answers are cached apart (``answers-<model>-compressed``).
``--ttft N`` times N streamed answers only (after one warm-up), with the prompt's token count.

``--rag-set``: ``benchmarks/rag_set`` through ``Rag.ask`` with each model and the default gate
(decline accuracy, key facts, citations, faithfulness), next to the extractive answer.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "tools"))
import squad_data

from ragwright.eval.qa import QaItem, evaluate_qa, render
from ragwright.generate.answerability import judge
from ragwright.generate.citations import check_citations, citation_suffix
from ragwright.generate.evidence import EmbeddingCache, gather
from ragwright.generate.llm_answer import NOT_ANSWERED
from ragwright.generate.pair import load_pair_models, pair_probability, stacked_features
from ragwright.generate.question import analyze
from ragwright.model.results import RagResponse
from ragwright.models.llms.base import YesNoScorer

_SUFFIX = re.compile(r" \[Source \d+(?:, \d+)*\]")
METRICS = ("balanced_decline_accuracy", "answer_accuracy", "citation_correct", "faithfulness")


def timed_answer(rag: Any, question: str) -> tuple[RagResponse, float | None, int, float, str]:
    """(response, seconds to the first token, deltas, seconds of generation, the model's own text) of one
    ungated LLM answer. An attached citation arrives as one final delta (" [Source N]"), which a model's
    token stream never produces in one piece, so the model's own text is the deltas before it."""
    stream = rag.ask_stream(question, answerability="off")
    start = time.perf_counter()
    first: float | None = None
    deltas: list[str] = []
    for delta in stream:
        if first is None:
            first = time.perf_counter() - start
        deltas.append(delta)
    own = "".join(deltas[:-1]) if len(deltas) > 1 and _SUFFIX.fullmatch(deltas[-1]) else "".join(deltas)
    return stream.response, first, len(deltas), time.perf_counter() - start, own


def rag_prompt(rag: Any, question: str, response: RagResponse) -> list[Any]:
    """The messages the answer's model read (the default prompt over the response's sources)."""
    from ragwright.generate.prompt import build_messages

    return build_messages(question, response.sources)


def citations_as(response: RagResponse, attach: bool, own: str | None = None) -> RagResponse:
    """*response* with the citations the model wrote itself (``attach=False``) or with the sources of an
    uncited answer attached as :class:`~ragwright.generate.llm_answer.LlmAnswerer` does now (``True``).
    *own* is the model's own text when it was recorded; rows without it (answers generated before
    attachment existed) are the model's own text as they stand."""
    if response.declined:
        return response
    text = own if own is not None else response.answer
    if attach and check_citations(text, response.sources).uncited:
        text = text.rstrip() + citation_suffix(text.rstrip(), response.sources)
    report = check_citations(text, response.sources)
    return replace(response, answer=text, citations=report.citations, uncited=report.uncited)


def declined(response: RagResponse, reason: str, p: float) -> RagResponse:
    return replace(response, answer=NOT_ANSWERED, citations=(), declined=True, decline_reason=reason, answerability=p)


def qa_run(
    rag: Any,
    llm: Any,
    items: list[QaItem],
    work: Path,
    *,
    gated_only: bool = False,
    report_only: bool = False,
    compressed: bool = False,
) -> tuple[dict[str, Any], list[str]]:
    """Each item answered once by the model (gate off), the gates read on the same evidence.

    The per-question rows are kept in ``WORK/answers-<model>.pkl`` (a rerun resumes, and re-reads the
    gates with the weights shipped now)."""
    cache = EmbeddingCache()
    label = llm.name.replace(":", "_").replace("/", "_") + ("-compressed" if compressed else "")
    path = work / f"answers-{label}.pkl"
    rows: dict[str, dict[str, Any]] = pickle.loads(path.read_bytes()) if path.exists() else {}
    stacked_model = load_pair_models().get(llm.name)
    lines: list[str] = []
    if report_only:  # the questions answered so far (a run cut short), nothing generated now
        items = [i for i in items if i.question in rows]
        lines.append(f"{llm.name}: {len(items)} questions answered so far")
    start = time.perf_counter()
    for n, item in enumerate(items, start=1):
        if item.question in rows:
            continue
        results = rag.search(item.question)
        ev = gather(analyze(item.question), results, rag.embedder, cache)
        verdict = judge(ev, results)
        row: dict[str, Any] = {"lexical": (verdict.probability, verdict.answerable, verdict.decline_reason)}
        passes = verdict.answerable
        if (stacked_model is not None or not gated_only) and isinstance(llm, YesNoScorer) and ev.best is not None:
            t = time.perf_counter()
            row["yes"] = yes = pair_probability(llm, ev)
            row["pair_s"] = time.perf_counter() - t
            if stacked_model is not None:
                stacked_p = stacked_model.probability(stacked_features(verdict.probability, yes or 0.0))
                passes = passes or stacked_p >= stacked_model.threshold
        if gated_only and not passes:  # every gate declines: the answer is never generated
            row["llm"] = RagResponse(NOT_ANSWERED, tuple(results), declined=True, decline_reason="gated")
            row["first"], row["deltas"], row["seconds"] = None, 0, 0.0
        else:
            answer = timed_answer(rag, item.question)
            row["llm"], row["first"], row["deltas"], row["seconds"], row["own"] = answer
        rows[item.question] = row
        path.write_bytes(pickle.dumps(rows))
        if n % 10 == 0:
            print(f"  {llm.name}: {n}/{len(items)} in {time.perf_counter() - start:.0f}s", flush=True)
    ttft, rates = [], []
    for row in rows.values():
        if row["first"] is not None:
            ttft.append(row["first"])
            if row["deltas"] > 1 and row["seconds"] > row["first"]:
                rates.append((row["deltas"] - 1) / (row["seconds"] - row["first"]))
        if stacked_model is not None and row.get("yes") is not None:
            p = stacked_model.probability(stacked_features(row["lexical"][0], row["yes"]))
            row["stacked"] = (p, p >= stacked_model.threshold)

    def gated(kind: str, attach: bool = True) -> Any:
        def ask(question: str) -> RagResponse:
            row = rows[question]
            response: RagResponse = citations_as(row["llm"], attach, row.get("own"))
            p, ok, reason = row["lexical"]
            if kind == "lexical" and not ok:
                return declined(response, reason, p)
            if kind == "stacked":
                p, ok = row.get("stacked", (0.0, False))
                if not ok:
                    return declined(response, "answerability_pair", p)
            return response

        return ask

    reports = {}
    if not any(rows[i.question]["llm"].decline_reason == "gated" for i in items):
        reports["LLM, no gate"] = evaluate_qa(gated("none"), items)
    reports["LLM + lexical gate"] = evaluate_qa(gated("lexical"), items)
    reports["LLM + lexical gate, model's own citations"] = evaluate_qa(gated("lexical", attach=False), items)
    if stacked_model is not None:
        reports["LLM + pair gate"] = evaluate_qa(gated("stacked"), items)
    pair_s = [r["pair_s"] for r in rows.values() if "pair_s" in r]

    timing = {
        "ttft_median_s": statistics.median(ttft) if ttft else None,
        "ttft_p90_s": sorted(ttft)[int(0.9 * len(ttft))] if ttft else None,
        "tokens_per_s": statistics.median(rates) if rates else None,
        "pair_median_s": statistics.median(pair_s) if pair_s else None,
    }
    for label, report in reports.items():
        lines.append(render(report, f"{llm.name} / {label}"))
    return {"reports": reports, "timing": timing}, lines


def summary(name: str, report: Any) -> str:
    m = report.to_dict()["metrics"]
    cells = []
    for metric in METRICS:
        iv = m.get(metric)
        cells.append(f"{iv['mean']:.3f} [{iv['ci_low']:.2f}, {iv['ci_high']:.2f}]" if iv else "–")
    return f"{name:<46} " + "  ".join(f"{c:<19}" for c in cells)


def rag_set_run(llm_specs: list[str]) -> None:
    from ragwright.eval.items import load_rag_benchmark
    from ragwright.eval.rag_eval import evaluate_rag, ingest_benchmark
    from ragwright.models.embedders import default_embedder
    from ragwright.models.llms import load_chat
    from ragwright.rag import Rag
    from ragwright.stores.memory import MemoryStore

    bench = load_rag_benchmark(Path(__file__).parent / "rag_set")
    embedder = default_embedder()
    names = ("decline_accuracy", "key_fact_recall", "citation_recall", "citation_precision", "faithfulness")
    print("\nrag_set (75 items), default gate; 95% bootstrap CIs")
    print(f"{'answerer':<40} " + "  ".join(f"{n:<19}" for n in names) + "  s/item")
    for spec in ["extractive", *llm_specs]:
        llm = None if spec == "extractive" else load_chat(spec)
        with Rag(MemoryStore(), embedder, llm=llm) as rag:
            ingest_benchmark(rag, bench)
            start = time.perf_counter()
            result = evaluate_rag(rag, bench)
            seconds = (time.perf_counter() - start) / len(bench.items)
        payload = result.to_dict()
        cells = []
        for n in names:
            iv = payload["metrics"].get(n)
            cells.append(f"{iv['mean']:.3f} [{iv['ci_low']:.2f}, {iv['ci_high']:.2f}]" if iv else "–")
        label = spec if llm is None else llm.name
        print(f"{label:<40} " + "  ".join(f"{c:<19}" for c in cells) + f"  {seconds:.1f}", flush=True)
        cats = ", ".join(f"{k} {v}" for k, v in sorted(payload["categories"].items()))
        print(f"  categories: {cats}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--squad", type=Path)
    ap.add_argument("--llm", action="append", default=[], help="chat model spec (repeatable)")
    ap.add_argument("--per-class", type=int, default=30)
    ap.add_argument("--rag-set", action="store_true")
    ap.add_argument("--ttft", type=int, default=0, help="only time N streamed answers (after one warm-up)")
    ap.add_argument("--report-only", action="store_true", help="report the answers cached so far, generate nothing")
    ap.add_argument(
        "--gated-only", action="store_true", help="generate only where a gate lets the question through (no peer row)"
    )
    ap.add_argument("--work", type=Path, default=Path(__file__).parent / ".cache" / "qa_squad")
    ap.add_argument("--compress", action="store_true", help="the model reads compressed sources (use_compression)")
    args = ap.parse_args()

    from ragwright.models.embedders import default_embedder
    from ragwright.models.llms import load_chat
    from ragwright.options import PRESETS, RetrievalOptions
    from ragwright.rag import Rag
    from ragwright.stores.sqlite import SqliteStore

    retrieval = RetrievalOptions(**PRESETS["hybrid"], use_compression=args.compress)

    def llm_rag(llm: Any) -> Any:
        return Rag(SqliteStore(args.work / "heldout.db"), default_embedder(), llm=llm, retrieval_options=retrieval)

    if args.squad is not None:
        held = squad_data.split(squad_data.load_squad(args.squad))[1]
        questions = squad_data.balanced_sample(held, args.per_class, seed=29)
        items = [QaItem(q.id, q.question, q.answers, q.unanswerable) for q in questions]
        args.work.mkdir(parents=True, exist_ok=True)
        base = squad_data.open_store(held, args.work, "heldout")
        print(f"QA set: {len(items)} held-out SQuAD questions ({args.per_class} answerable, {args.per_class} not)")
        table = [summary("extractive (default install)", evaluate_qa(base.ask, items))]
        base.close()
        timings = []
        if args.ttft:
            for spec in args.llm:
                llm = load_chat(spec)
                rag = llm_rag(llm)
                timed_answer(rag, items[0].question)  # load and warm up
                for item in items[1 : args.ttft + 1]:
                    load = os.getloadavg()[0]
                    response, first, deltas, seconds, _ = timed_answer(rag, item.question)
                    if first is None:
                        print(f"{llm.name}: no token streamed")
                        continue
                    rate = (deltas - 1) / (seconds - first) if deltas > 1 else float("nan")
                    prompt = sum(llm.count_tokens(m.content) for m in rag_prompt(rag, item.question, response))
                    print(
                        f"{llm.name}{' compressed' if args.compress else ''}: time to first token {first:.2f} s, "
                        f"{rate:.1f} tokens/s, prompt ~{prompt} tokens (load {load:.1f})"
                    )
                rag.close()
            return
        for spec in args.llm:
            llm = load_chat(spec)
            rag = llm_rag(llm)
            out, lines = qa_run(
                rag,
                llm,
                items,
                args.work,
                gated_only=args.gated_only,
                report_only=args.report_only,
                compressed=args.compress,
            )
            rag.close()
            for line in lines:
                print(line, flush=True)
            tag = f"{llm.name}{' compressed' if args.compress else ''}"
            table.extend(summary(f"{tag} / {label}", r) for label, r in out["reports"].items())
            timings.append((llm.name, out["timing"]))
        print(f"\n{'answerer':<46} " + "  ".join(f"{m:<19}" for m in METRICS))
        print("\n".join(table))
        for name, t in timings:
            tt = f"{t['ttft_median_s']:.2f} s (p90 {t['ttft_p90_s']:.2f} s)" if t["ttft_median_s"] else "–"
            rate = f"{t['tokens_per_s']:.1f}" if t["tokens_per_s"] else "–"
            pair = f"{t['pair_median_s'] * 1000:.0f} ms" if t["pair_median_s"] else "–"
            print(f"{name}: time to first token (5 sources, 1 thread) median {tt}; {rate} tokens/s; pair gate {pair}")
    if args.rag_set:
        rag_set_run(args.llm)


if __name__ == "__main__":
    main()
