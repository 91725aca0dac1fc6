"""Query routing (``route_ask``, rules) vs always-hybrid (``rag.ask``) on a mixed question set (issue 25).

    .venv/bin/python benchmarks/routing.py [--hotpot 60] [--squad 30] [--scifact 30] [--split test]
        [--llm-router local [--llm-router-n 6] [--skip-answers]]

Questions, each with a type label from its data:

* HotpotQA ``bridge`` and ``comparison`` (multi-hop) and SQuAD 2.0 ``single-hop`` questions, asked of
  the GraphRAG benchmark's store (``benchmarks/graph_multihop.py``: one corpus of their paragraphs,
  ingested once with the entity graph, cached under ``~/.cache/ragwright/bench/graph_multihop``;
  ``benchmarks/graph_multihop_data.json`` names the files and their sha256). The hash split of that
  benchmark: ``--split test`` by default (the rules were adjusted on the ``tune`` questions and on SciFact
  *train* claims, never on the reported ones).
* BEIR SciFact ``single-hop`` claims (test queries, from ``/work/shared/data/scifact``), asked of a small
  SciFact store (their gold abstracts plus ``--distractors`` others, cached under
  ``~/.cache/ragwright/bench/routing``).
* ``chit-chat`` prompts written here (greetings, thanks, questions about the assistant).

Per question, as the same caller and with the defaults (no LLM: extractive answers): ``rag.ask(q)`` and
``route_ask(rag, q)`` (mode ``auto``). Quality: recall of the gold documents among the answer's sources
(fraction of them), and for HotpotQA/SQuAD whether the answer contains the gold answer (normalised,
whole words); paired bootstrap 95% CIs (``ragwright.eval.stats``), wins/losses. Cost: seconds per
question and LLM calls. Chit-chat has no gold: its rows count the sources retrieved. Router accuracy:
the route the rules wanted (before availability) against the label — single-hop → ``hybrid``,
chit-chat → ``none``, bridge → ``graph_local`` or ``agentic``, comparison → ``agentic`` or
``graph_local`` (multi-step routes). ``--llm-router SPEC``: the rules and the LLM classifier (mode
``llm``, every route offered) on the first ``--llm-router-n`` questions of each label, classification
only (``--skip-answers``: nothing else).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragwright.eval.stats import bootstrap_ci, paired_bootstrap
from ragwright.graph import GraphOptions
from ragwright.model.results import RagResponse
from ragwright.models.embedders import default_embedder
from ragwright.rag import Rag
from ragwright.rag_route import route_ask
from ragwright.route import Router
from ragwright.sources import BytesSource
from ragwright.stores.sqlite import SqliteStore

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import graph_multihop as gm  # noqa: E402  (the GraphRAG benchmark's loaders and store)

CACHE = Path.home() / ".cache" / "ragwright" / "bench"
SCIFACT = Path("/work/shared/data/scifact")
CHITCHAT = (
    "hi",
    "Hello there!",
    "good morning",
    "thanks a lot!",
    "Thank you for your help.",
    "who are you?",
    "What can you do?",
    "how are you today?",
    "bye",
    "Hi! What can I ask you?",
    "ok, thanks",
    "are you a bot?",
)
EXPECTED = {
    "single-hop": {"hybrid"},
    "chit-chat": {"none"},
    "bridge": {"graph_local", "agentic"},
    "comparison": {"agentic", "graph_local"},
}


@dataclass(frozen=True)
class Item:
    id: str
    question: str
    kind: str  # bridge | comparison | single-hop | chit-chat
    dataset: str  # hotpotqa | squad | scifact | chit-chat
    gold_docs: frozenset[str]
    answer: str | None  # gold answer text, when the data has one


def _hash_order(items: Sequence[Any], key: Callable[[Any], str]) -> list[Any]:
    return sorted(items, key=lambda i: hashlib.sha256(key(i).encode()).hexdigest())


def scifact_items(n: int, distractors: int) -> tuple[list[Item], dict[str, tuple[str, str]]]:
    queries = {q["_id"]: q["text"] for q in map(json.loads, (SCIFACT / "queries.jsonl").read_text().splitlines()) if q}
    qrels: dict[str, set[str]] = defaultdict(set)
    for line in (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        qid, doc, score = line.split("\t")
        if int(score) > 0:
            qrels[qid].add(doc)
    chosen = _hash_order(sorted(qrels), str)[:n]
    items = [Item(f"scifact-{q}", queries[q], "single-hop", "scifact", frozenset(qrels[q]), None) for q in chosen]
    corpus = {d["_id"]: (d["title"], d["text"]) for d in map(json.loads, (SCIFACT / "corpus.jsonl").open())}
    gold = set().union(*(i.gold_docs for i in items))
    others = _hash_order([d for d in corpus if d not in gold], str)[:distractors]
    return items, {d: corpus[d] for d in sorted(gold | set(others))}


def scifact_store(docs: dict[str, tuple[str, str]], work: Path) -> Rag:
    key = hashlib.sha256("\n".join(docs).encode()).hexdigest()[:12]
    work.mkdir(parents=True, exist_ok=True)
    path, done = work / f"scifact-{len(docs)}-{key}.db", work / f"scifact-{len(docs)}-{key}.done"
    if done.exists():
        return Rag(SqliteStore(path), default_embedder())
    for stale in work.glob(f"scifact-{len(docs)}-{key}.db*"):
        stale.unlink()
    rag = Rag(SqliteStore(path), default_embedder())
    data = {d: f"# {title}\n\n{text}\n".encode() for d, (title, text) in docs.items()}
    started = time.perf_counter()
    report = rag.ingest(BytesSource(data, names={d: "abstract.md" for d in docs}))
    done.write_text(json.dumps({"seconds": time.perf_counter() - started, "chunks": report.chunks}))
    print(f"ingested {len(docs)} SciFact abstracts ({report.chunks} chunks)", flush=True)
    return rag


def recall(response: RagResponse, gold: frozenset[str]) -> float:
    found = {s.document_id for s in response.sources}
    return len(gold & found) / len(gold) if gold else 0.0


def llm_calls(response: RagResponse) -> int:
    return int(response.usage.get("llm_calls", 0))


def ci_cell(values: Sequence[float]) -> str:
    ci = bootstrap_ci(values)
    return f"{ci.mean:.3f} [{ci.low:.3f}, {ci.high:.3f}]"


def diff_cell(base: dict[str, float], other: dict[str, float]) -> str:
    p = paired_bootstrap(base, other)
    d = p.difference
    return f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}] ({p.wins}/{p.losses})"


def llm_router(items: Sequence[Item], spec: str, per_label: int) -> None:
    """The rules and the LLM classifier (every route usable, as with a graph, summaries and a model) on
    the same *per_label* questions of each label (data set): wanted route vs the label, seconds per call."""
    from ragwright.models.llms import load_chat
    from ragwright.route import RouterOptions

    chat = load_chat(spec)
    rules, model = Router(), Router(RouterOptions(mode="llm"), chat)
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        key = f"{item.kind} ({item.dataset})" if item.kind == "single-hop" else item.kind
        if len(groups[key]) < per_label:
            groups[key].append(item)
    print(f"\nrouter accuracy, rules vs LLM classifier ({getattr(chat, 'name', spec)}), {per_label} per label")
    print("| label | n | rules correct | LLM correct | LLM routes | LLM failures / overruled | s per LLM call |")
    print("|---|---|---|---|---|---|---|")
    for key, group in groups.items():
        kind = group[0].kind
        r_ok = l_ok = bad = 0
        spent = 0.0
        routes: Counter[str] = Counter()
        for item in group:
            r_ok += rules.decide(item.question).wanted in EXPECTED[kind]
            started = time.perf_counter()
            d = model.decide(item.question)
            spent += time.perf_counter() - started
            l_ok += d.wanted in EXPECTED[kind]
            routes[d.wanted] += 1
            bad += d.source != "llm"
        fmt = ", ".join(f"{r} {c}" for r, c in routes.most_common())
        print(f"| {key} | {len(group)} | {r_ok} | {l_ok} | {fmt} | {bad} | {spent / len(group):.1f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=CACHE / "hotpotqa")
    ap.add_argument("--squad-file", type=Path, default=Path("/tmp/squad/dev-v2.0.json"))
    ap.add_argument("--work", type=Path, default=CACHE / "graph_multihop")
    ap.add_argument("--split", choices=("tune", "test", "all"), default="test")
    ap.add_argument("--hotpot", type=int, default=60, help="HotpotQA questions (hash order)")
    ap.add_argument("--squad", type=int, default=30, help="SQuAD single-hop questions (hash order)")
    ap.add_argument("--scifact", type=int, default=30, help="SciFact test claims (hash order)")
    ap.add_argument("--distractors", type=int, default=300, help="SciFact abstracts besides the gold ones")
    ap.add_argument("--llm-router", default=None, help="also classify with this chat model (e.g. local): no answers")
    ap.add_argument("--llm-router-n", type=int, default=6, help="questions per label for --llm-router")
    ap.add_argument("--skip-answers", action="store_true", help="only the --llm-router comparison")
    args = ap.parse_args()

    hotpot = gm.load_hotpot(args.data)
    squad = gm.load_squad(args.squad_file, 4, 40)  # the GraphRAG benchmark's corpus: same store
    rag = gm.open_store(gm.corpus(hotpot + squad), args.work, GraphOptions())
    split = [q for q in hotpot + squad if args.split in ("all", q.split)]
    hq = _hash_order([q for q in split if q.kind != "single-hop"], lambda q: q.id)[: args.hotpot]
    sq = _hash_order([q for q in split if q.kind == "single-hop"], lambda q: q.id)[: args.squad]
    wiki = [
        Item(q.id, q.question, q.kind, "hotpotqa" if q.kind != "single-hop" else "squad", q.gold, q.answer)
        for q in hq + sq
    ]
    sci_items, sci_docs = scifact_items(args.scifact, args.distractors)
    sci_rag = scifact_store(sci_docs, CACHE / "routing")
    chat = [Item(f"chat-{i}", q, "chit-chat", "chit-chat", frozenset(), None) for i, q in enumerate(CHITCHAT)]
    items = [(i, rag) for i in wiki + chat] + [(i, sci_rag) for i in sci_items]
    print(
        f"questions: {len(hq)} HotpotQA ({sum(q.kind == 'bridge' for q in hq)} bridge, "
        f"{sum(q.kind == 'comparison' for q in hq)} comparison), {len(sq)} SQuAD, {len(sci_items)} SciFact, "
        f"{len(chat)} chit-chat; split {args.split}; no LLM (extractive answers)",
        flush=True,
    )
    if args.llm_router:
        llm_router([i for i, _ in items], args.llm_router, args.llm_router_n)
    if args.skip_answers:
        return
    for r in (rag, sci_rag):  # warm the embedder, the indexes and the graph before timing
        r.ask("warm up")
        route_ask(r, "Who is the director of the film that won?")

    router = Router()
    runs: dict[str, dict[str, dict[str, float]]] = {m: {"recall": {}, "contains": {}} for m in ("hybrid", "routed")}
    secs: dict[str, dict[str, float]] = {"hybrid": {}, "routed": {}}
    calls: dict[str, Counter[str]] = {"hybrid": Counter(), "routed": Counter()}
    sources: dict[str, dict[str, int]] = {"hybrid": {}, "routed": {}}
    wanted: dict[str, str] = {}
    taken: dict[str, str] = {}
    for n, (item, store) in enumerate(items):
        wanted[item.id] = router.decide(item.question).wanted
        for name in ("hybrid", "routed"):  # both on the same warm store, one after the other
            started = time.perf_counter()
            response = store.ask(item.question) if name == "hybrid" else route_ask(store, item.question)
            secs[name][item.id] = time.perf_counter() - started
            calls[name][item.kind] += llm_calls(response)
            sources[name][item.id] = len(response.sources)
            if name == "routed":
                taken[item.id] = response.route or "?"
            if item.gold_docs:
                runs[name]["recall"][item.id] = recall(response, item.gold_docs)
            if item.answer is not None:
                runs[name]["contains"][item.id] = gm.contains(response.answer, item.answer)
        if (n + 1) % 25 == 0:
            print(f"  {n + 1}/{len(items)}", flush=True)

    kinds = ["bridge", "comparison", "single-hop", "chit-chat"]
    by_kind = {k: [i.id for i, _ in items if i.kind == k] for k in kinds}
    for data in ("squad", "scifact"):
        by_kind[f"single-hop ({data})"] = [i.id for i, _ in items if i.kind == "single-hop" and i.dataset == data]
    by_kind["all with gold"] = [i.id for i, _ in items if i.gold_docs]

    print("\nrecall of the gold documents among the answer's sources, mean [95% CI]")
    print("| questions | n | always hybrid | routed | routed − hybrid [95% CI] (w/l) |\n|---|---|---|---|---|")
    for k in ["bridge", "comparison", "single-hop (squad)", "single-hop (scifact)", "all with gold"]:
        ids = by_kind[k]
        if ids:
            h, r = ({i: runs[m]["recall"][i] for i in ids} for m in ("hybrid", "routed"))
            print(
                f"| {k} | {len(ids)} | {ci_cell(list(h.values()))} | {ci_cell(list(r.values()))} | {diff_cell(h, r)} |"
            )

    print("\nanswer contains the gold answer (HotpotQA, SQuAD), mean [95% CI]")
    print("| questions | n | always hybrid | routed | routed − hybrid [95% CI] (w/l) |\n|---|---|---|---|---|")
    with_answer = [i.id for i, _ in items if i.answer is not None]
    for k in ["bridge", "comparison", "single-hop", "all"]:
        ids = [i for i in with_answer if k == "all" or i in by_kind[k]]
        if ids:
            h, r = ({i: runs[m]["contains"][i] for i in ids} for m in ("hybrid", "routed"))
            print(
                f"| {k} | {len(ids)} | {ci_cell(list(h.values()))} | {ci_cell(list(r.values()))} | {diff_cell(h, r)} |"
            )

    print("\ncost: seconds per question (mean), LLM calls, sources retrieved (mean)")
    print(
        "| questions | n | hybrid s | routed s | hybrid LLM calls | routed LLM calls | hybrid sources | routed sources"
        " |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for k in [*kinds, "all"]:
        ids = [i.id for i, _ in items] if k == "all" else by_kind[k]
        if not ids:
            continue
        kk = kinds if k == "all" else [k]
        cells = (
            [f"{sum(secs[m][i] for i in ids) / len(ids):.3f}" for m in ("hybrid", "routed")]
            + [str(sum(calls[m][x] for x in kk)) for m in ("hybrid", "routed")]
            + [f"{sum(sources[m][i] for i in ids) / len(ids):.1f}" for m in ("hybrid", "routed")]
        )
        print(f"| {k} | {len(ids)} | " + " | ".join(cells) + " |")

    print("\nrouter: the route the rules wanted (before availability) per label, and the route that answered")
    print("| label | n | wanted | answered by | accuracy (wanted ∈ expected) |\n|---|---|---|---|---|")
    correct = 0
    for k in kinds:
        ids = by_kind[k]
        if not ids:
            continue
        w = Counter(wanted[i] for i in ids)
        t = Counter(taken[i] for i in ids)
        ok = sum(wanted[i] in EXPECTED[k] for i in ids)
        correct += ok
        fmt = ", ".join(f"{r} {c}" for r, c in w.most_common())
        fmt_t = ", ".join(f"{r} {c}" for r, c in t.most_common())
        print(f"| {k} | {len(ids)} | {fmt} | {fmt_t} | {ok / len(ids):.3f} ({ok}/{len(ids)}) |")
    print(f"| all | {len(items)} | | | {correct / len(items):.3f} ({correct}/{len(items)}) |")
    by_set: dict[str, list[str]] = defaultdict(list)
    for i, _ in items:
        by_set[i.dataset].append(i.id)
    print(
        "per data set, wanted ∈ expected: "
        + ", ".join(
            f"{d} {sum(wanted[i] in EXPECTED[next(x.kind for x, _ in items if x.id == i)] for i in ids)}/{len(ids)}"
            for d, ids in by_set.items()
        )
    )
    rag.close()
    sci_rag.close()


if __name__ == "__main__":
    main()
