"""Long-document QA retrieval: hierarchical (two-stage, tree) against flat hybrid search, paired CIs.

    python benchmarks/hierarchical_qa.py --squad DIR [--questions 300] [--train-questions 200] [--work DIR]

DIR holds ``dev-v2.0.json`` and ``test-v2.0.json`` (``benchmarks/hierarchical_qa_data.json`` names the
repository, commit, paths and sha256; checked on load). Every usable SQuAD 2.0 dev article (the
reserved acceptance articles left out) is one Markdown document, ingested with the defaults and
``hierarchy=HierarchyOptions()``. A question's target is the paragraph it was written on, among all
paragraphs of all articles; a retrieved chunk stands for the paragraphs it overlaps, and the metrics
are recall@10 and nDCG@10 of the gold paragraph in the ranked paragraph list.

Variants of the two-stage search (``combine`` × ``documents``, with and without the flat result's
chunk evidence, the flat list weighted ×2) and of the collapsed tree (its arm's RRF weight) are scored
on the questions of the manifest's train articles and the best of each by nDCG@10 is chosen there; the
flat search, those two and the shipped default are then reported on the held-out articles' questions,
each against flat with a paired bootstrap CI (``ragwright.eval.stats``).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "tools"))
import squad_data

from ragwright.eval.metrics import mean, ndcg_at_k, recall_at_k
from ragwright.eval.stats import bootstrap_ci, paired_bootstrap
from ragwright.hierarchy import HierarchyOptions
from ragwright.model.identity import Identity
from ragwright.model.results import SearchResult

MANIFEST = Path(__file__).with_name("hierarchical_qa_data.json")
DEPTH = 50


def norm(text: str) -> str:
    return " ".join(text.split())


def load(folder: Path) -> tuple[list[squad_data.Article], list[squad_data.Article]]:
    """(labelled usable articles, unlabelled usable articles), hashes checked."""
    files = json.loads(MANIFEST.read_text())["files"]
    out = []
    for spec in files:
        path = folder / Path(spec["path"]).name
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != spec["sha256"]:
            raise SystemExit(f"{path}: sha256 {digest} is not the manifest's {spec['sha256']}")
        out.append(squad_data.articles(squad_data.load_squad(path, check=False)))
    return out[0], out[1]


def paragraph_map(chunks: Sequence[Any], articles: dict[str, squad_data.Article]) -> dict[str, list[str]]:
    """chunk id -> ids (``title#i``) of the paragraphs it overlaps."""
    out: dict[str, list[str]] = {}
    paras = {t: [norm(p) for p in a.paragraphs] for t, a in articles.items()}
    for c in chunks:
        title = Path(c.document_id).stem
        text = norm(c.text)
        hits = []
        for i, p in enumerate(paras.get(title, [])):
            if p[:60] in text or text[:60] in p or (len(text) < 60 and text in p):
                hits.append(f"{title}#{i}")
        out[c.id] = hits
    return out


def ranked_paragraphs(results: Sequence[SearchResult], pmap: dict[str, list[str]]) -> list[str]:
    seen: dict[str, None] = {}
    for r in results:
        for p in pmap.get(r.chunk_id, []):
            seen.setdefault(p, None)
    return list(seen)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--squad", type=Path, required=True, help="folder with dev-v2.0.json and test-v2.0.json")
    ap.add_argument("--work", type=Path, default=Path(__file__).parent / ".cache" / "hierarchical_qa")
    ap.add_argument("--questions", type=int, default=300, help="answerable questions sampled on the held-out split")
    ap.add_argument("--train-questions", type=int, default=200, help="answerable questions sampled on train")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)

    labelled, unlabelled = load(args.squad)
    corpus = labelled + unlabelled
    train_titles = set(squad_data.manifest()["train_articles"])
    heldout_titles = set(squad_data.manifest()["heldout_articles"])
    rng = random.Random(7)

    def sample(titles: set[str], n: int) -> list[squad_data.Qa]:
        qs = [q for a in labelled if a.title in titles for q in a.questions if not q.unanswerable]
        return rng.sample(qs, min(n, len(qs)))

    splits = {"train": sample(train_titles, args.train_questions), "heldout": sample(heldout_titles, args.questions)}
    n_paras = sum(len(a.paragraphs) for a in corpus)
    print(
        f"corpus: {len(corpus)} articles, {n_paras} paragraphs; questions: "
        + ", ".join(f"{k} {len(v)}" for k, v in splits.items()),
        flush=True,
    )

    from ragwright.models.embedders import default_embedder
    from ragwright.rag import Rag
    from ragwright.sources import FolderSource
    from ragwright.stores.sqlite import SqliteStore

    folder = args.work / "corpus"
    squad_data.write_corpus(corpus, folder)
    start = time.perf_counter()
    rag = Rag(SqliteStore(args.work / "store.db"), default_embedder(), hierarchy=HierarchyOptions())
    rag.ingest(FolderSource(folder, include=("*.md",)))
    hierarchy = rag.hierarchy
    assert hierarchy is not None
    hierarchy.sync()
    ingest_s = time.perf_counter() - start
    start = time.perf_counter()
    hierarchy.index.refresh_trees()
    tree_s = time.perf_counter() - start
    print(
        f"store ready in {ingest_s:.0f}s (summaries included); tree built in {tree_s:.1f}s; {hierarchy.index.stats()}",
        flush=True,
    )
    chunks = [c for r in rag.documents(status="indexed") for c in rag.store.document_chunks(r.document_id)]
    pmap = paragraph_map(chunks, {a.title: a for a in corpus})
    unmapped = sum(1 for v in pmap.values() if not v)
    print(f"{len(chunks)} chunks ({unmapped} overlap no paragraph: headings)", flush=True)

    who = Identity()
    search = hierarchy.searcher
    default = hierarchy.options
    variants: dict[str, Callable[[str, list[SearchResult]], list[SearchResult]]] = {"flat": lambda q, flat: flat}

    def with_options(o: HierarchyOptions, mode: str) -> Callable[[str, list[SearchResult]], list[SearchResult]]:
        def run(q: str, flat: list[SearchResult]) -> list[SearchResult]:
            search.index.options = o
            try:
                if mode == "tree":
                    return search.tree(q, who, flat, DEPTH).results
                return search.two_stage(q, who, flat, DEPTH).results
            finally:
                search.index.options = default

        return run

    for combine in ("rrf", "two_stage", "doc_prior"):
        for docs in (3, 8):
            opts = dataclasses.replace(default, combine=combine, documents=docs, chunk_evidence=True, flat_weight=1.0)
            variants[f"two-stage {combine} docs={docs}"] = with_options(opts, "two_stage")
    no_evidence = dataclasses.replace(default, combine="rrf", documents=8, chunk_evidence=False, flat_weight=1.0)
    variants["two-stage rrf docs=8 summaries only"] = with_options(no_evidence, "two_stage")
    heavy_flat = dataclasses.replace(default, combine="rrf", documents=8, chunk_evidence=True, flat_weight=2.0)
    variants["two-stage rrf docs=8 flat x2"] = with_options(heavy_flat, "two_stage")
    for flat_w, tree_w in ((1.0, 0.5), (1.0, 0.2), (2.0, 0.2)):
        tree_opts = dataclasses.replace(default, flat_weight=flat_w, tree_weight=tree_w)
        variants[f"tree: tree w={tree_w}, flat w={flat_w}"] = with_options(tree_opts, "tree")

    def score(split: str, names: Sequence[str]) -> dict[str, dict[str, dict[str, float]]]:
        runs: dict[str, dict[str, list[str]]] = {n: {} for n in names}
        seconds = {n: 0.0 for n in names}
        doc1: dict[str, dict[str, float]] = {
            n: {} for n in [*names, "stage 1: summaries", "stage 1: summaries + chunks"]
        }
        qrels = {q.id: {f"{q.article}#{squad_data_index(q)}": 1} for q in splits[split]}
        for i, q in enumerate(splits[split]):
            t = time.perf_counter()
            flat = list(rag.search(q.question, top_k=DEPTH))
            seconds["flat"] = seconds.get("flat", 0.0) + time.perf_counter() - t
            for n in names:
                t = time.perf_counter()
                results = variants[n](q.question, flat)
                if n != "flat":
                    seconds[n] += time.perf_counter() - t
                runs[n][q.id] = ranked_paragraphs(results, pmap)
                doc1[n][q.id] = float(bool(results) and Path(results[0].document_id).stem == q.article)
            for label, evidence in (("stage 1: summaries", False), ("stage 1: summaries + chunks", True)):
                search.index.options = dataclasses.replace(default, chunk_evidence=evidence)
                try:
                    top = search.documents(q.question, who, 1, flat=flat)
                finally:
                    search.index.options = default
                doc1[label][q.id] = float(bool(top) and Path(top[0].document_id).stem == q.article)
            if (i + 1) % 50 == 0:
                print(f"  {split}: {i + 1}/{len(splits[split])}", flush=True)
        out = {}
        for n in names:
            out[n] = {
                "ndcg@10": ndcg_at_k(runs[n], qrels, 10),
                "recall@10": recall_at_k(runs[n], qrels, 10),
                "recall@3": recall_at_k(runs[n], qrels, 3),
            }
            out[n]["_ms"] = {"": 1000 * seconds[n] / max(1, len(splits[split]))}
            out[n]["doc@1"] = doc1[n]
        for label in ("stage 1: summaries", "stage 1: summaries + chunks"):
            out[label] = {"doc@1": doc1[label]}
        return out

    para_index = {(a.title, norm(p)): i for a in corpus for i, p in enumerate(a.paragraphs)}

    def squad_data_index(q: squad_data.Qa) -> int:
        return para_index[(q.article, norm(q.context))]

    def table(split: str, scores: dict[str, dict[str, dict[str, float]]]) -> None:
        print(f"\n{split} ({len(splits[split])} questions): paragraph-level, vs flat (paired bootstrap 95% CI)")
        print(
            f"{'configuration':34} {'nDCG@10':>8} {'R@10':>6} {'R@3':>6} {'Doc@1':>6} {'ms/q':>6}  "
            f"{'ΔnDCG@10 [95% CI]':>28}  {'ΔR@10 [95% CI]':>28}"
        )
        base = scores["flat"]
        for n, s in scores.items():
            if "ndcg@10" not in s:
                continue
            line = (
                f"{n:34} {mean(s['ndcg@10']):8.4f} {mean(s['recall@10']):6.3f} {mean(s['recall@3']):6.3f} "
                f"{mean(s['doc@1']):6.3f} {s['_ms']['']:6.0f}"
            )
            if n != "flat":
                for metric in ("ndcg@10", "recall@10"):
                    c = paired_bootstrap(base[metric], s[metric])
                    d = c.difference
                    mark = "*" if c.significant else " "
                    line += f"  {d.mean:+.4f} [{d.low:+.4f}, {d.high:+.4f}]{mark} ({c.wins}/{c.losses})"
            print(line, flush=True)
        for label in ("stage 1: summaries", "stage 1: summaries + chunks"):
            c = paired_bootstrap(base["doc@1"], scores[label]["doc@1"])
            d = c.difference
            print(
                f"document found first (Doc@1): {label} {mean(scores[label]['doc@1']):.3f} vs flat "
                f"{mean(base['doc@1']):.3f}: {d.mean:+.4f} [{d.low:+.4f}, {d.high:+.4f}]{'*' if c.significant else ''}",
                flush=True,
            )

    train = score("train", list(variants))
    table("train", train)
    two_stage = [n for n in variants if n.startswith("two-stage")]
    best = max(two_stage, key=lambda n: mean(train[n]["ndcg@10"]))
    tree = max((n for n in variants if n.startswith("tree")), key=lambda n: mean(train[n]["ndcg@10"]))
    variants["shipped default (two-stage)"] = with_options(default, "two_stage")
    variants["shipped default (tree)"] = with_options(default, "tree")
    print(f"\nchosen on train: {best}; {tree}; shipped default: {default}", flush=True)
    names = ["flat", best, "shipped default (two-stage)", tree, "shipped default (tree)"]
    held = score("heldout", names)
    table("heldout", held)
    ci = bootstrap_ci(list(held["flat"]["ndcg@10"].values()))
    print(f"\nflat nDCG@10 on heldout: {ci.mean:.4f} [{ci.low:.4f}, {ci.high:.4f}]")


if __name__ == "__main__":
    main()
