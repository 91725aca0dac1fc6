"""Agentic RAG vs single-shot ``ask`` on multi-hop questions (issue 25), with the local chat model.

    .venv/bin/python benchmarks/agentic_multihop.py [--limit 16] [--llm local:0.5b] [--split test]
        [--max-rounds 4] [--out results.json]

The corpus and questions are benchmarks/graph_multihop.py's: every Wikipedia paragraph of the
evaluated HotpotQA dev questions (bridge and comparison; distractors pooled) plus a few SQuAD 2.0
articles, ingested once (default embedder, graph on) into the SQLite store that script caches under
``~/.cache/ragwright/bench/graph_multihop``. Questions: the ``test`` split of that script (a hash of the
question id), the first ``--limit`` of them. Per question, the same caller and the same chat model:

* ``ask``: ``rag.ask(q)`` — the default single-shot path (hybrid retrieval, the answerability gate, the
  chat model writing a cited answer, or a decline);
* ``agent``: ``enable_agent(rag, AgentOptions(...)).ask(q)`` — the tool loop (search, fetch, graph,
  calculator) with its caps, JSON actions under the local model's grammar.

Accuracy: the gold answer contained in the answer (normalised, whole words; a decline scores 0), with
SQuAD exact match and token F1 of the answer text (citations and the partial-answer note removed) as
secondary columns. Cost: chat-model calls and seconds per question. Differences are paired per question
with a 95% bootstrap interval (``ragwright.eval.stats.paired_bootstrap``). The local model runs with one
thread; on a shared machine seconds are noisy: compare the two columns, not absolutes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import graph_multihop as gm  # noqa: E402

from ragwright.agent import AgentOptions  # noqa: E402
from ragwright.eval.qa import contains_answer, normalize, token_f1  # noqa: E402
from ragwright.eval.stats import bootstrap_ci, paired_bootstrap  # noqa: E402
from ragwright.generate.citations import without_citations  # noqa: E402
from ragwright.graph import GraphOptions  # noqa: E402
from ragwright.models.embedders import default_embedder  # noqa: E402
from ragwright.models.llms import load_chat  # noqa: E402
from ragwright.rag import Rag  # noqa: E402
from ragwright.rag_agent import enable_agent  # noqa: E402
from ragwright.stores.sqlite import SqliteStore  # noqa: E402

_NOTE = re.compile(r"\(Partial answer:.*?\)\s*$", re.S)


def store_path(docs: dict[str, str], work: Path) -> Path:
    """graph_multihop's cached store for *docs* (built there on first use)."""
    key = hashlib.sha256("\n".join(sorted(docs)).encode()).hexdigest()[:12]
    path = work / f"multihop-{len(docs)}-{key}.db"
    if not (work / f"multihop-{len(docs)}-{key}.done").exists():
        gm.open_store(docs, work, GraphOptions()).close()
    return path


def score(response: Any, gold: str) -> dict[str, float]:
    text = _NOTE.sub("", without_citations(response.answer)).strip()
    if response.declined:
        return {"contains": 0.0, "em": 0.0, "f1": 0.0}
    return {
        "contains": float(contains_answer(text, [gold])),
        "em": float(normalize(text) == normalize(gold)),
        "f1": token_f1(text, [gold]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=gm.CACHE / "hotpotqa")
    ap.add_argument("--squad", type=Path, default=Path("/tmp/squad/dev-v2.0.json"))
    ap.add_argument("--work", type=Path, default=gm.CACHE / "graph_multihop")
    ap.add_argument("--split", choices=("tune", "test", "all"), default="test")
    ap.add_argument("--limit", type=int, default=16, help="questions (HotpotQA only), the first of the split")
    ap.add_argument("--llm", default="local:0.5b", help="chat model spec (load_chat)")
    ap.add_argument("--max-rounds", type=int, default=AgentOptions().max_rounds)
    ap.add_argument("--out", type=Path, default=None, help="write per-question rows (JSON) here")
    args = ap.parse_args()

    hotpot = gm.load_hotpot(args.data)
    squad = gm.load_squad(args.squad, 4, 40)  # the same corpus as graph_multihop's defaults (its cached store)
    docs = gm.corpus(hotpot + squad)
    questions = [q for q in hotpot if args.split in ("all", q.split)][: args.limit]
    llm = load_chat(args.llm)
    assert llm is not None
    path = store_path(docs, args.work)
    rag = Rag(SqliteStore(path), default_embedder(), graph=GraphOptions(), llm=llm)
    agent = enable_agent(rag, AgentOptions(max_rounds=args.max_rounds))
    bridge = sum(q.kind == "bridge" for q in questions)
    print(
        f"{len(questions)} HotpotQA questions ({args.split} split: {bridge} bridge, {len(questions) - bridge} "
        f"comparison); corpus {len(docs)} documents; "
        f"chat model {llm.name}; agent {agent.options}",
        flush=True,
    )
    rag.ask("warm up: what is Big Stone Gap?")  # loads the model (and the crash probe) outside the timings
    names = ("ask", "agent")
    acc: dict[str, dict[str, dict[str, float]]] = {n: {} for n in names}
    calls: dict[str, list[float]] = {n: [] for n in names}
    secs: dict[str, list[float]] = {n: [] for n in names}
    declines: dict[str, int] = {n: 0 for n in names}
    stops: dict[str, int] = {}
    rows = []
    for i, q in enumerate(questions):
        row: dict[str, Any] = {"id": q.id, "question": q.question, "gold": q.answer, "kind": q.kind}
        for name in names:
            started = time.perf_counter()
            response = rag.ask(q.question) if name == "ask" else agent.ask(q.question)
            seconds = time.perf_counter() - started
            acc[name][q.id] = score(response, q.answer)
            calls[name].append(float(response.usage.get("llm_calls", 0)))
            secs[name].append(seconds)
            declines[name] += int(response.declined)
            row[name] = {
                "answer": response.answer,
                "declined": response.declined,
                "decline_reason": response.decline_reason,
                "scores": acc[name][q.id],
                "llm_calls": response.usage.get("llm_calls", 0),
                "seconds": round(seconds, 2),
            }
            if name == "agent":
                row[name]["trajectory"] = [
                    {k: s.get(k) for k in ("tool", "arguments", "note", "reason") if s.get(k) is not None}
                    for s in response.trajectory
                ]
                stop = next((s["reason"] for s in response.trajectory if s["tool"] == "stop"), "answered")
                stops[stop] = stops.get(stop, 0) + 1
        rows.append(row)
        print(
            f"  {i + 1}/{len(questions)} {q.kind:<10} gold={q.answer[:30]!r:<32} "
            + " ".join(f"{n}={acc[n][q.id]['contains']:.0f}/{secs[n][-1]:.0f}s" for n in names),
            flush=True,
        )
    if args.out is not None:
        args.out.write_text(json.dumps(rows, indent=1, ensure_ascii=False))
    print(f"\nagentic vs single-shot ask, {len(questions)} HotpotQA questions, {llm.name}; mean [95% bootstrap CI]")
    print("| metric | ask | agent | agent − ask [95% CI] (wins/losses) |\n|---|---|---|---|")
    for metric in ("contains", "em", "f1"):
        a = {k: v[metric] for k, v in acc["ask"].items()}
        b = {k: v[metric] for k, v in acc["agent"].items()}
        ca, cb = bootstrap_ci(list(a.values())), bootstrap_ci(list(b.values()))
        p = paired_bootstrap(a, b)
        d = p.difference
        print(
            f"| {metric} | {ca.mean:.3f} [{ca.low:.3f}, {ca.high:.3f}] | {cb.mean:.3f} [{cb.low:.3f}, {cb.high:.3f}] "
            f"| {d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}] ({p.wins}/{p.losses}) |"
        )
    for label, values in (("LLM calls per question", calls), ("seconds per question", secs)):
        a, b = bootstrap_ci(values["ask"]), bootstrap_ci(values["agent"])
        print(f"| {label} | {a.mean:.2f} [{a.low:.2f}, {a.high:.2f}] | {b.mean:.2f} [{b.low:.2f}, {b.high:.2f}] | |")
    print(f"| declined | {declines['ask']} | {declines['agent']} | |")
    print("agent endings: " + ", ".join(f"{k} {v}" for k, v in sorted(stops.items())))
    rag.close()


if __name__ == "__main__":
    main()
