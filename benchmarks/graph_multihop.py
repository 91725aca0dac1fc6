"""GraphRAG local search vs plain hybrid on multi-hop questions (issue 24), defaults otherwise.

    .venv/bin/python benchmarks/graph_multihop.py [--data DIR] [--squad PATH] [--split test|tune|all]
        [--corpus default|large|fresh] [--variants "name:hops=1,weight=0.5;..."] [--answers] [--ingest-cost 300]

One corpus: every Wikipedia paragraph of the evaluated HotpotQA questions (their distractors pooled,
each paragraph a document titled by its Wikipedia title) plus the paragraphs of a few SQuAD 2.0
articles (the single-hop control). ``--corpus large`` (9,487 documents instead of 2,593) adds ircot500's
questions and pools the paragraphs of every question left out as distractors. ``--corpus fresh`` (the
held-out confirmation set, ``benchmarks/graph_multihop_fresh.py``) adds the paragraphs of 534 HotpotQA,
2WikiMultiHopQA and MuSiQue questions never used to tune or test to a copy of the large store and evaluates
all of them (no split), with the large corpus's test-split SQuAD questions as the single-hop control. The
corpus is ingested once with the graph on (default extractor, default embedder) into a SQLite store cached
under ``--work``.
Then, per question, as the same caller:

* ``hybrid``: ``rag.search(q, top_k=10)`` (the default hybrid retrieval);
* ``graph``: ``rag.graph.search(q, top_k=10)`` (graph local search fused with hybrid).

Recall = 1 when every supporting document is among the top 10 results' documents (HotpotQA: both
paragraphs; SQuAD: the question's paragraph). Differences are paired per question with a bootstrap
95% interval, split by HotpotQA's type (``bridge`` = multi-hop through a bridge entity, ``comparison``)
and the SQuAD single-hop control. Questions are split by a hash of their id into ``tune`` (2/5: choose
graph parameters there) and ``test`` (3/5: report there). ``--variants`` runs more GraphOptions on the
same hybrid candidates (the graph step only; ``"bridge:fusion=bridge"``: the fusion that adds bridge chunks
without promoting co-occurring ones). ``--answers``: extractive ``rag.ask`` vs
``rag.graph.ask`` (gold answer contained in the answer, normalised). ``--ingest-cost N``: ingestion
seconds of N paragraphs without and with the graph (fresh stores, interleaved, best of ``--repeat``).

Data: ``benchmarks/graph_multihop_data.json`` names each file (repository, commit, path, sha256); the
script reads local copies from ``--data`` (default ``~/.cache/ragwright/bench/hotpotqa``) and never
the network.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import string
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ragwright.eval.stats import bootstrap_ci, paired_bootstrap
from ragwright.graph import GraphOptions
from ragwright.graph.local import local_search
from ragwright.models.embedders import default_embedder
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.sqlite import SqliteStore

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "graph_multihop_data.json"
CACHE = Path.home() / ".cache" / "ragwright" / "bench"
SQUAD_RESERVED = frozenset({"Normans", "Rhine", "Computational_complexity_theory"})


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answer: str
    kind: str  # bridge | comparison | single-hop
    gold: frozenset[str]  # document ids that must all be in the top 10
    paragraphs: tuple[tuple[str, str], ...]  # (document id, text) this question brings to the corpus

    @property
    def split(self) -> str:
        return "tune" if int(hashlib.sha256(self.id.encode()).hexdigest(), 16) % 5 < 2 else "test"


def _checked(folder: Path, entry: dict[str, Any]) -> bytes:
    path = folder / entry["local_name"]
    if not path.exists():
        raise SystemExit(f"{path} missing: git show {entry['commit']}:{entry['path']} from {entry['repository']}")
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != entry["sha256"]:
        raise SystemExit(f"{path}: sha256 {digest} is not the manifest's {entry['sha256']}")
    return raw


def _meve(raw: bytes) -> list[dict[str, Any]]:
    """The distractor-setting questions in the Hugging Face layout, as rows of the original layout."""
    rows: list[dict[str, Any]] = []
    for i, r in enumerate(json.loads(raw)):
        ctx = r["context"]
        facts = list(zip(r["supporting_facts"]["title"], r["supporting_facts"]["sent_id"], strict=True))
        context = [(t, s) for t, s in zip(ctx["title"], ctx["sentences"], strict=True)]
        rows.append({"_id": f"dev{i:04d}", "question": r["question"], "answer": r["answer"], "type": r["type"]})
        rows[-1] |= {"supporting_facts": facts, "context": context}
    return rows


def _ircot(raw: bytes) -> list[dict[str, Any]]:
    """IRCoT's ``dev_subsampled.jsonl`` (distractor setting, ``is_supporting`` per paragraph, no question type)."""
    rows: list[dict[str, Any]] = []
    for line in filter(str.strip, raw.decode().splitlines()):
        r = json.loads(line)
        context = [(c["title"], [c["paragraph_text"]]) for c in r["contexts"]]
        facts = [(c["title"], 0) for c in r["contexts"] if c["is_supporting"]]
        answer = r["answers_objects"][0]["spans"][0] if r["answers_objects"][0]["spans"] else ""
        rows.append({"_id": r["question_id"], "question": r["question_text"], "answer": answer, "type": "untyped"})
        rows[-1] |= {"supporting_facts": facts, "context": context}
    return rows


def load_hotpot(folder: Path) -> list[Question]:
    """The evaluable HotpotQA questions: both supporting paragraphs among the question's paragraphs."""
    return load_hotpot_pool(folder, large=False)[0]


def load_hotpot_pool(folder: Path, large: bool) -> tuple[list[Question], dict[str, str]]:
    """The evaluable HotpotQA questions and, with *large* (``--corpus large``), also ircot500's questions
    and the paragraphs of every question left out (amor500's fullwiki-retrieved paragraphs of the 349
    questions whose gold paragraphs are missing: realistic hard distractors), pooled as distractors."""
    files = json.loads(MANIFEST.read_text())["files"]
    rows = _meve(_checked(folder, files["meve100"]))
    rows += [json.loads(line) for line in _checked(folder, files["amor500"]).decode().splitlines() if line.strip()]
    if large:
        rows += _ircot(_checked(folder, files["ircot500"]))
    out: list[Question] = []
    extra: dict[str, str] = {}
    seen: set[str] = set()
    for r in rows:
        if r["question"] in seen:
            continue
        paragraphs = tuple((t, "".join(s).strip()) for t, s in r["context"])
        gold = frozenset(t for t, _ in r["supporting_facts"])
        if len(gold) != 2 or not gold <= {t for t, _ in paragraphs}:
            if large:
                for doc_id, text in paragraphs:
                    extra.setdefault(doc_id, text)
            continue
        seen.add(r["question"])
        out.append(Question(str(r["_id"]), r["question"], r["answer"], r["type"], gold, paragraphs))
    return out, extra


def load_squad(path: Path | None, n_articles: int, per_article: int) -> list[Question]:
    """Single-hop control: answerable SQuAD 2.0 questions, each paragraph of the articles a document."""
    if path is None or not path.exists():
        print(f"no SQuAD file at {path} (tools/answerability_data.json names it): no single-hop control")
        return []
    sys.path.insert(0, str(HERE.parent / "tools"))
    import squad_data

    arts = [a for a in squad_data.load_squad(path) if a.title not in SQUAD_RESERVED][:n_articles]
    out: list[Question] = []
    for art in arts:
        docs = tuple((f"{art.title} ¶{i}", p) for i, p in enumerate(art.paragraphs))
        index = {p: d for d, p in docs}
        answerable = [q for q in art.questions if not q.unanswerable and q.context in index][:per_article]
        for j, q in enumerate(answerable):
            out.append(
                Question(
                    q.id, q.question, q.answers[0], "single-hop", frozenset({index[q.context]}), docs if j == 0 else ()
                )
            )
    return out


def corpus(questions: Sequence[Question]) -> dict[str, str]:
    docs: dict[str, str] = {}
    for q in questions:
        for doc_id, text in q.paragraphs:
            docs.setdefault(doc_id, text)
    return docs


def _title(doc_id: str) -> str:
    return re.sub(r" ¶\d+$", "", doc_id).replace("_", " ")


def source(docs: dict[str, str]) -> BytesSource:
    data = {d: f"# {_title(d)}\n\n{text}\n".encode() for d, text in docs.items()}
    return BytesSource(data, names={d: "paragraph.md" for d in docs})


def open_store(
    docs: dict[str, str],
    work: Path,
    options: GraphOptions,
    *,
    prefix: str = "multihop",
    key_text: str | None = None,
    make_source: Callable[[dict[str, str]], BytesSource] | None = None,
) -> Rag:
    """The corpus *docs* ingested once with the graph into a store cached under *work* (named by *prefix*,
    the document count and a hash of *key_text*, by default the document ids)."""
    key = hashlib.sha256((key_text if key_text is not None else "\n".join(sorted(docs))).encode()).hexdigest()[:12]
    work.mkdir(parents=True, exist_ok=True)
    path, done = work / f"{prefix}-{len(docs)}-{key}.db", work / f"{prefix}-{len(docs)}-{key}.done"
    if done.exists():
        return Rag(SqliteStore(path), default_embedder(), graph=options)
    for stale in work.glob(f"{prefix}-{len(docs)}-{key}.db*"):
        stale.unlink()
    rag = Rag(SqliteStore(path), default_embedder(), graph=options)
    started = time.perf_counter()
    report = rag.ingest((make_source or source)(docs))
    seconds = time.perf_counter() - started
    done.write_text(json.dumps({"seconds": seconds, "chunks": report.chunks, "documents": len(docs)}))
    print(f"ingested {len(docs)} documents ({report.chunks} chunks) with the graph in {seconds:.0f}s", flush=True)
    return rag


def recall(results: Sequence[Any], gold: frozenset[str], k: int = 10) -> float:
    return float(gold <= {r.chunk.document_id for r in results[:k]})


def _normal(text: str) -> str:
    text = "".join(c for c in text.lower() if c not in string.punctuation)
    return " ".join(w for w in text.split() if w not in ("a", "an", "the"))


def contains(answer: str, gold: str) -> float:
    g = _normal(gold)
    return float(bool(g) and f" {g} " in f" {_normal(answer)} ")  # whole words: "no" is not in "north"


def parse_variants(spec: str) -> dict[str, GraphOptions]:
    out: dict[str, GraphOptions] = {}
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        name, _, assigns = part.partition(":")
        fields: dict[str, Any] = {}
        for a in filter(None, assigns.split(",")):
            k, _, v = a.partition("=")
            v = v.strip()
            fields[k.strip()] = (float(v) if "." in v else int(v)) if v.lstrip("-").replace(".", "", 1).isdigit() else v
        out[name.strip()] = replace(GraphOptions(), **fields)
    return out


#: The rows of the tables: a name and which questions it pools (HotpotQA's types, the SQuAD control).
HOTPOT_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("bridge", ("bridge",)),
    ("comparison", ("comparison",)),
    ("untyped (ircot500, --corpus large)", ("untyped",)),
    ("multi-hop (all HotpotQA)", ("bridge", "comparison", "untyped")),
    ("single-hop", ("single-hop",)),
)


def table(
    title: str,
    questions: Sequence[Question],
    runs: dict[str, dict[str, float]],
    secs: dict[str, float],
    groups: Sequence[tuple[str, Sequence[str]]] = HOTPOT_GROUPS,
) -> None:
    """One row per group of question kinds: each run's mean [95% CI], and each run against the first
    (paired bootstrap, wins/losses); the seconds per query of each run at the end."""
    names = list(runs)
    base = names[0]
    print(f"\n{title}")
    head = " | ".join(f"{n}" for n in names)
    print(f"| questions | n | {head} | " + " | ".join(f"{n} − {base} [95% CI] (w/l)" for n in names[1:]) + " |")
    print("|---" * (2 + len(names) + len(names) - 1) + "|")
    for kind, kinds in groups:
        ids = [q.id for q in questions if q.kind in kinds]
        if not ids:
            continue
        cells = []
        for n in names:
            ci = bootstrap_ci([runs[n][i] for i in ids])
            cells.append(f"{ci.mean:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
        diffs = []
        for n in names[1:]:
            p = paired_bootstrap({i: runs[base][i] for i in ids}, {i: runs[n][i] for i in ids})
            d = p.difference
            diffs.append(f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}] ({p.wins}/{p.losses})")
        print(f"| {kind} | {len(ids)} | " + " | ".join(cells) + " | " + " | ".join(diffs) + " |")
    if secs:
        print("| seconds per query | | " + " | ".join(f"{secs.get(n, float('nan')):.3f}" for n in names) + " |")


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - started


def ingest_cost(docs: dict[str, str], n: int, repeat: int = 2) -> None:
    subset = dict(sorted(docs.items())[:n])
    embedder = default_embedder()
    embedder.embed_documents(["warm up"])
    rows: dict[str, list[tuple[float, int]]] = {}
    for _ in range(repeat):  # interleaved: a busy machine slows both alike
        for name in ("no graph", "graph (rules)"):
            with tempfile.TemporaryDirectory() as tmp:
                graph = GraphOptions() if name != "no graph" else None
                rag = Rag(SqliteStore(Path(tmp) / "s.db"), embedder, graph=graph)
                report, seconds = timed(lambda rag=rag: rag.ingest(source(subset)))
                rag.close()
            rows.setdefault(name, []).append((seconds, report.chunks))
    base = min(s for s, _ in rows["no graph"])
    print(f"\ningestion of {len(subset)} HotpotQA paragraphs, best of {repeat} (interleaved)")
    print("| ingestion | chunks | seconds | s per 1k chunks | × no graph |\n|---|---|---|---|---|")
    for name, runs in rows.items():
        seconds, chunks = min(runs)
        print(f"| {name} | {chunks} | {seconds:.1f} | {1000 * seconds / max(chunks, 1):.0f} | {seconds / base:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=CACHE / "hotpotqa")
    ap.add_argument("--squad", type=Path, default=Path("/tmp/squad/dev-v2.0.json"))
    ap.add_argument("--squad-articles", type=int, default=4)
    ap.add_argument("--squad-per-article", type=int, default=40)
    ap.add_argument("--work", type=Path, default=CACHE / "graph_multihop")
    ap.add_argument(
        "--corpus",
        choices=("default", "large", "fresh"),
        default="default",
        help="large: also ircot500's questions and every left-out question's paragraphs as distractors; "
        "fresh: the held-out questions of graph_multihop_fresh.py added to a copy of the large store",
    )
    ap.add_argument("--split", choices=("tune", "test", "all"), default="test")
    ap.add_argument("--limit", type=int, default=0, help="at most this many questions of the split (0: all)")
    ap.add_argument("--variants", default="", help='"name:hops=1,weight=0.5;..." more GraphOptions, graph step only')
    ap.add_argument("--answers", action="store_true")
    ap.add_argument("--ingest-cost", type=int, default=0, help="paragraphs for the ingestion-time comparison")
    ap.add_argument("--repeat", type=int, default=2, help="ingestion-cost repetitions (best of)")
    ap.add_argument("--skip-search", action="store_true")
    args = ap.parse_args()

    hotpot, extra = load_hotpot_pool(args.data, large=args.corpus != "default")
    squad = load_squad(args.squad, args.squad_articles, args.squad_per_article)
    everything = hotpot + squad
    docs = corpus(everything)
    for doc_id, text in extra.items():
        docs.setdefault(doc_id, text)
    kinds = ", ".join(f"{k} {sum(q.kind == k for q in hotpot)}" for k in ("bridge", "comparison", "untyped"))
    print(
        f"HotpotQA questions {len(hotpot)} ({kinds}), SQuAD single-hop {len(squad)}; corpus {len(docs)} documents "
        f"({len(extra)} from left-out questions)",
        flush=True,
    )
    if args.ingest_cost:
        ingest_cost({d: t for d, t in docs.items() if "¶" not in d}, args.ingest_cost, args.repeat)
    groups: Sequence[tuple[str, Sequence[str]]] = HOTPOT_GROUPS
    if args.corpus == "fresh":
        import graph_multihop_fresh as fresh

        fresh_questions, new_docs, skipped = fresh.load_fresh(args.data, docs)
        print(fresh.describe(fresh_questions, new_docs, skipped), flush=True)
        print("single-hop control: the large corpus's SQuAD questions of the test split (no fresh single-hop set)")
        if args.skip_search:
            return
        rag = fresh.open_fresh_store(docs, new_docs, args.work, GraphOptions())
        questions = fresh_questions + [q for q in squad if q.split == "test"]
        groups = fresh.groups_for(questions)
        args.split = "fresh (every fresh question; --split ignored)"
    elif args.skip_search:
        return
    else:
        rag = open_store(docs, args.work, GraphOptions())
        questions = [q for q in everything if args.split in ("all", q.split)]
    assert rag.graph is not None
    if args.limit:
        questions = questions[: args.limit]
    variants = parse_variants(args.variants)
    runs: dict[str, dict[str, float]] = {"hybrid": {}, "graph": {}, **{n: {} for n in variants}}
    at5: dict[str, dict[str, float]] = {n: {} for n in runs}
    secs: dict[str, float] = {"hybrid": 0.0, "graph": 0.0}
    graph, view = rag.graph, rag.graph._view(None)
    for i, q in enumerate(questions):
        hybrid, s_h = timed(lambda q=q: rag.search(q.question, top_k=10))
        found, s_g = timed(lambda q=q: graph.search(q.question, top_k=10))
        secs["hybrid"] += s_h
        secs["graph"] += s_g
        runs["hybrid"][q.id], at5["hybrid"][q.id] = recall(hybrid, q.gold), recall(hybrid, q.gold, 5)
        runs["graph"][q.id], at5["graph"][q.id] = recall(found.results, q.gold), recall(found.results, q.gold, 5)
        if variants:
            wide = rag.search(q.question, top_k=graph.options.top_k)
            for name, opts in variants.items():
                wide_k = rag.search(q.question, top_k=opts.top_k) if opts.top_k != graph.options.top_k else wide
                res = local_search(graph.index.tables, view, q.question, graph.index.extractor, opts, wide_k, top_k=10)
                runs[name][q.id], at5[name][q.id] = recall(res.results, q.gold), recall(res.results, q.gold, 5)
        if (i + 1) % 50 == 0:
            print(f"  {i + 1}/{len(questions)} questions", flush=True)
    secs = {k: v / max(len(questions), 1) for k, v in secs.items()}
    print(f"\nsplit {args.split}: {len(questions)} questions; recall of all supporting documents in the top 10")
    table("recall@10 (all supporting documents), mean [95% bootstrap CI]", questions, runs, secs, groups)
    table("secondary: recall@5 (all supporting documents)", questions, at5, {}, groups)
    if args.answers:
        ans: dict[str, dict[str, float]] = {"hybrid ask": {}, "graph ask": {}}
        asecs = {"hybrid ask": 0.0, "graph ask": 0.0}
        for q in questions:
            a, s_a = timed(lambda q=q: rag.ask(q.question))
            b, s_b = timed(lambda q=q: graph.ask(q.question))
            asecs["hybrid ask"] += s_a
            asecs["graph ask"] += s_b
            ans["hybrid ask"][q.id] = contains(a.answer, q.answer)
            ans["graph ask"][q.id] = contains(b.answer, q.answer)
        asecs = {k: v / max(len(questions), 1) for k, v in asecs.items()}
        table("extractive answer accuracy (gold answer contained), mean [95% CI]", questions, ans, asecs, groups)
    rag.close()


if __name__ == "__main__":
    main()
