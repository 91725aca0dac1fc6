"""GraphRAG local search vs plain hybrid on MultiHop-RAG (issue 24), the sibling of ``graph_multihop.py``.

    .venv/bin/python benchmarks/graph_multihop_rag.py [--data DIR] [--layout evidence|official]
        [--split test|tune|all] [--sample 300] [--variants "name:hops=1,weight=0.5;..."] [--gate]

MultiHop-RAG (Tang & Yang 2024): news questions whose ``evidence_list`` names 2-4 supporting articles,
``question_type`` inference / comparison / temporal / null. The articles are ingested once with the graph
on (default extractor, default embedder, default chunker) into a SQLite store cached under ``--work``;
then, per question, as the same caller:

* ``hybrid``: ``rag.search(q, top_k=10)`` (the default hybrid retrieval);
* ``graph``: ``rag.graph.search(q, top_k=10)`` (graph local search fused with hybrid).

Recall = 1 when every evidence article is among the top 10 results' documents; paired bootstrap 95%
intervals (``ragwright.eval.stats``), split by question_type. ``null_query`` questions have no evidence
and are skipped (recall is undefined; MultiHop-RAG has no single-hop questions, so there is no
single-hop control here - ``graph_multihop.py``'s SQuAD rows are that control). Questions are split by a
hash of their id into ``tune`` (2/5) and ``test`` (3/5), exactly as ``graph_multihop.py`` does;
``--sample N`` keeps N questions of the split (lowest hash first, so a larger sample contains a
smaller one). ``--variants`` runs more GraphOptions on the same hybrid candidates (the graph step only);
``--gate`` adds ``gate2``: the graph result when the extractor finds two or more entities in the
question, else the hybrid result.

Layouts (``benchmarks/multihop_rag_data.json`` names every file, with repository, commit, path, sha256;
local copies are read from ``--data``, default ``~/.cache/ragwright/bench/multihop_rag``, never the
network):

* ``evidence`` (default): the official files are Git LFS objects on GitHub (not fetchable here), so the
  corpus is rebuilt from HoanNhi/ircot's conversion of MultiHopRAG.json: one document per evidence
  article (609), its text the distinct evidence ``fact`` sentences of that article across all queries.
  A reduced corpus: short documents, no article bodies, every document evidence for some query.
* ``official``: ``corpus.json`` (title, body) and ``MultiHopRAG.json`` as published (LFS objects).
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragwright.graph import GraphOptions
from ragwright.graph.local import local_search, query_found
from ragwright.rag import Rag
from ragwright.sources import BytesSource

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from graph_multihop import CACHE, Question, _checked, parse_variants, recall, timed  # noqa: E402
from graph_multihop import open_store as open_hotpot_store  # noqa: E402
from graph_multihop import table as hotpot_table  # noqa: E402

MANIFEST = HERE / "multihop_rag_data.json"
TYPES = ("inference_query", "temporal_query", "comparison_query", "null_query")
KINDS = {"inference_query": "inference", "temporal_query": "temporal", "comparison_query": "comparison"}


def _order(q: Question) -> int:
    return int(hashlib.sha256(q.id.encode()).hexdigest(), 16)


def load_evidence_layout(folder: Path) -> tuple[list[Question], dict[str, str], int]:
    """Questions and the evidence-rebuilt corpus from HoanNhi/ircot's conversion (see the manifest)."""
    files = json.loads(MANIFEST.read_text())["files"]
    kind_of: dict[str, str] = {}
    for t in TYPES:
        for qid in json.loads(_checked(folder, files[f"type_{t.split('_')[0]}"])):
            kind_of[qid] = t
    facts: dict[str, list[str]] = {}
    out: list[Question] = []
    nulls = 0
    for line in _checked(folder, files["ircot_queries"]).decode().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        kind = kind_of[r["question_id"]]
        for c in r["contexts"]:
            seen = facts.setdefault(c["title"], [])
            if c["paragraph_text"] not in seen:
                seen.append(c["paragraph_text"])
        if kind == "null_query":
            nulls += 1
            continue
        gold = frozenset(c["title"] for c in r["contexts"])
        answer = r["answers_objects"][0]["spans"][0]
        out.append(Question(f"mhr{r['question_id']}", r["question_text"], answer, KINDS[kind], gold, ()))
    docs = {title: "\n\n".join(sentences) for title, sentences in facts.items()}
    return out, docs, nulls


def load_official_layout(folder: Path) -> tuple[list[Question], dict[str, str], int]:
    files = json.loads(MANIFEST.read_text())["files"]
    corpus = json.loads(_checked(folder, files["official_corpus"]))
    raw = json.loads(_checked(folder, files["official_queries"]))
    rows = raw["data"] if isinstance(raw, dict) else raw
    docs = {a["title"]: a["body"] for a in corpus}
    out: list[Question] = []
    nulls = 0
    for i, r in enumerate(rows, start=1):
        if r["question_type"] == "null_query":
            nulls += 1
            continue
        gold = frozenset(e["title"] for e in r["evidence_list"])
        out.append(Question(f"mhr{i}", r["query"], r["answer"], KINDS[r["question_type"]], gold, ()))
    return out, docs, nulls


def source(docs: dict[str, str]) -> BytesSource:
    data = {d: f"# {html.unescape(d)}\n\n{html.unescape(text)}\n".encode() for d, text in docs.items()}
    return BytesSource(data, names={d: "article.md" for d in docs})


def open_store(docs: dict[str, str], work: Path, options: GraphOptions) -> Rag:
    key_text = "\n".join(f"{d}\t{t}" for d, t in sorted(docs.items()))
    return open_hotpot_store(docs, work, options, prefix="mhr", key_text=key_text, make_source=source)


#: MultiHop-RAG's question types, and all of them pooled.
GROUPS = (
    ("inference", ("inference",)),
    ("temporal", ("temporal",)),
    ("comparison", ("comparison",)),
    ("all multi-hop", ("inference", "temporal", "comparison")),
)


def table(title: str, questions: Sequence[Question], runs: dict[str, dict[str, float]], secs: dict[str, float]) -> None:
    hotpot_table(title, questions, runs, secs, GROUPS)


def coverage(results: Sequence[Any], gold: frozenset[str], k: int = 10) -> float:
    return len(gold & {r.chunk.document_id for r in results[:k]}) / len(gold)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=CACHE / "multihop_rag")
    ap.add_argument("--layout", choices=("evidence", "official"), default="evidence")
    ap.add_argument("--work", type=Path, default=CACHE / "graph_multihop_rag")
    ap.add_argument("--split", choices=("tune", "test", "all"), default="test")
    ap.add_argument("--sample", type=int, default=300, help="questions of the split, lowest id hash first (0: all)")
    ap.add_argument("--variants", default="", help='"name:hops=1,weight=0.5;..." more GraphOptions, graph step only')
    ap.add_argument("--gate", action="store_true", help="add gate2: graph only when the question names >= 2 entities")
    args = ap.parse_args()

    load = load_evidence_layout if args.layout == "evidence" else load_official_layout
    everything, docs, nulls = load(args.data)
    counts = {k: sum(q.kind == k for q in everything) for k in ("inference", "temporal", "comparison")}
    print(
        f"MultiHop-RAG ({args.layout} layout): {len(everything)} questions with evidence {counts}, "
        f"{nulls} null_query skipped; corpus {len(docs)} documents",
        flush=True,
    )
    rag = open_store(docs, args.work, GraphOptions())
    assert rag.graph is not None
    questions = sorted((q for q in everything if args.split in ("all", q.split)), key=_order)
    if args.sample:
        questions = questions[: args.sample]
    variants = parse_variants(args.variants)
    extra = [*variants, *(["gate2"] if args.gate else [])]
    runs: dict[str, dict[str, float]] = {"hybrid": {}, "graph": {}, **{n: {} for n in extra}}
    at5: dict[str, dict[str, float]] = {n: {} for n in runs}
    cover: dict[str, dict[str, float]] = {n: {} for n in runs}
    secs: dict[str, float] = {"hybrid": 0.0, "graph": 0.0}
    graph, view = rag.graph, rag.graph._view(None)
    gated = 0
    for i, q in enumerate(questions):
        hybrid, s_h = timed(lambda q=q: rag.search(q.question, top_k=10))
        found, s_g = timed(lambda q=q: graph.search(q.question, top_k=10))
        secs["hybrid"] += s_h
        secs["graph"] += s_g
        got: dict[str, Sequence[Any]] = {"hybrid": hybrid, "graph": found.results}
        if variants:
            wide = rag.search(q.question, top_k=graph.options.top_k)
            for name, opts in variants.items():
                wide_k = rag.search(q.question, top_k=opts.top_k) if opts.top_k != graph.options.top_k else wide
                res = local_search(graph.index.tables, view, q.question, graph.index.extractor, opts, wide_k, top_k=10)
                got[name] = res.results
        if args.gate:
            on = len(set(query_found(q.question, graph.index.extractor))) >= 2
            gated += on
            got["gate2"] = found.results if on else hybrid
        for name, res in got.items():
            runs[name][q.id], at5[name][q.id] = recall(res, q.gold), recall(res, q.gold, 5)
            cover[name][q.id] = coverage(res, q.gold)
        if (i + 1) % 50 == 0:
            print(f"  {i + 1}/{len(questions)} questions", flush=True)
    secs = {k: v / max(len(questions), 1) for k, v in secs.items()}
    print(f"\nsplit {args.split}: {len(questions)} questions; recall of all evidence articles in the top 10")
    if args.gate:
        print(f"gate2: graph applied to {gated}/{len(questions)} questions (two or more entities found)")
    table("recall@10 (all evidence articles), mean [95% bootstrap CI]", questions, runs, secs)
    table("secondary: recall@5 (all evidence articles)", questions, at5, {})
    table("secondary: evidence coverage@10 (share of evidence articles in the top 10)", questions, cover, {})
    rag.close()


if __name__ == "__main__":
    main()
