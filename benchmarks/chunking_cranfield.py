"""Chunking strategies and chunk enrichment compared on retrieval quality and ingestion cost (seed 003 §4–5,
issue 26).

Each configuration ingests a BEIR corpus through the real pipeline — JSONL source → chunker (and its
stages: contextual enrichment, late chunking, propositions) → default embedder (all-MiniLM-L6-v2 int8)
→ in-memory store — then runs the judged queries and ranks documents by the first occurrence of their
chunks (``ragwright.eval.runner.run_config``). For each collection it reports nDCG@10 with a bootstrap
confidence interval and a paired bootstrap against the first configuration (the structural default),
for dense retrieval and for the default hybrid retrieval, plus the ingestion cost: chunks, embedder
tokens encoded (exact, counted from the texts and windows, whatever was cached), LLM calls.

Vectors are cached on disk by model and embedded text (late-chunked vectors by their document's text),
seeded from the evaluation stores under ``~/.cache/ragwright/eval`` when their model matches, so a rerun
embeds only what is new. Seconds are therefore measured separately, without any cache, on the first
``--timing-docs`` documents of the first collection: bare embedding of the structural chunks, then a
full ingestion with each configuration (``--timing-reps`` rounds, interleaved, the fastest kept), and
the ratio ingest / bare embedding (the ingestion-throughput goal is ≤ 1.15×).

    python benchmarks/chunking_cranfield.py [--datasets scifact,cranfield,cisi] [--configs structural,context,late]
        [--threads 2] [--timing-docs 200] [--llm local:0.5b] [--sample-docs 300]
        [--sample-queries 30 --negatives 10 --seed 0]

``--sample-queries N`` keeps N judged queries (drawn with ``--seed``) and a corpus of their judged-relevant
documents plus each query's top ``--negatives`` BM25 documents over the whole corpus (hard negatives,
``subcorpus.query_sample``), for the stages too slow for a whole corpus (one LLM call per chunk).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from subcorpus import query_sample, sampled  # sibling helper module

from ragwright._paths import cache_root
from ragwright.chunk import make_chunker
from ragwright.chunk.late import windows
from ragwright.eval.configs import EvalConfig
from ragwright.eval.datasets import BeirDataset, load_beir
from ragwright.eval.runner import run_config
from ragwright.eval.stats import bootstrap_ci, paired_bootstrap
from ragwright.models.embedders import load_embedder
from ragwright.options import PRESETS, ChunkingOptions, RetrievalOptions
from ragwright.rag import Rag
from ragwright.sources import JsonlSource
from ragwright.stores.memory import MemoryStore

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CONFIGS: dict[str, ChunkingOptions] = {
    "structural": ChunkingOptions(),
    "recursive": ChunkingOptions(strategy="recursive"),
    "semantic": ChunkingOptions(strategy="semantic"),
    "structural+overlap": ChunkingOptions(overlap="sentences", overlap_sentences=1),
    "context": ChunkingOptions(context="extractive"),
    "late": ChunkingOptions(late_chunking=True),
    "context+late": ChunkingOptions(context="extractive", late_chunking=True),
    "context-llm": ChunkingOptions(context="llm"),
    "propositions": ChunkingOptions(propositions=True),
    # small chunks (several per document), where document context has more to add
    "structural@128": ChunkingOptions(max_tokens=128),
    "context@128": ChunkingOptions(max_tokens=128, context="extractive"),
    "late@128": ChunkingOptions(max_tokens=128, late_chunking=True),
}
NEEDS_LLM = {"context-llm", "propositions"}
MODES = {
    "dense": RetrievalOptions(use_hybrid_search=False),
    "hybrid": RetrievalOptions(**PRESETS["hybrid"]),
}


class VectorCache:
    """Vectors on disk by key (sha256 of the model and the text), in one SQLite file per model."""

    def __init__(self, model: str) -> None:
        slug = "".join(ch if ch.isalnum() else "-" for ch in model)
        path = cache_root() / "bench" / f"chunking-vectors-{slug}.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.model = model
        self.conn = sqlite3.connect(path, check_same_thread=False)
        self.conn.execute("CREATE TABLE IF NOT EXISTS v (key TEXT PRIMARY KEY, shape TEXT, vector BLOB)")

    def key(self, *parts: str) -> str:
        return hashlib.sha256("\x1f".join((self.model, *parts)).encode()).hexdigest()

    def get(self, keys: Sequence[str]) -> dict[str, Any]:
        import numpy as np

        out: dict[str, Any] = {}
        for i in range(0, len(keys), 500):
            part = list(keys[i : i + 500])
            sql = f"SELECT key, shape, vector FROM v WHERE key IN ({','.join('?' * len(part))})"
            for key, shape, blob in self.conn.execute(sql, part):
                out[key] = np.frombuffer(blob, dtype=np.float32).reshape(json.loads(shape))
        return out

    def put(self, items: dict[str, Any]) -> None:
        rows = [(k, json.dumps(list(v.shape)), v.astype("float32").tobytes()) for k, v in items.items()]
        self.conn.executemany("INSERT OR REPLACE INTO v VALUES (?, ?, ?)", rows)
        self.conn.commit()

    def seed_from_eval_stores(self) -> int:
        """Vectors of the evaluation stores built with this model (chunks embedded as the default chunks them)."""
        added = 0
        for db in sorted((cache_root() / "eval").glob("*.db")):
            try:
                src = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
                meta = dict(src.execute("SELECT key, value FROM rag_metadata").fetchall())
                if meta.get("embedding_model") != self.model:
                    continue
                rows = src.execute("SELECT COALESCE(embed_text, text), vector FROM chunks").fetchall()
            except sqlite3.Error:
                continue
            import numpy as np

            self.put({self.key("text", t): np.frombuffer(v, dtype=np.float32) for t, v in rows})
            added += len(rows)
        return added


class CachedEmbedder:
    """The wrapped embedder with vectors from a :class:`VectorCache`; counts the texts actually embedded."""

    def __init__(self, inner: Any, cache: VectorCache) -> None:
        self.inner, self.cache = inner, cache
        self.embedded = 0

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    @property
    def max_tokens(self) -> int:
        return int(self.inner.max_tokens)

    def count_tokens(self, text: str) -> int:
        return int(self.inner.count_tokens(text))

    def embed_documents(self, texts: Sequence[str]) -> Any:
        import numpy as np

        keys = [self.cache.key("text", t) for t in texts]
        known = self.cache.get(keys)
        missing = list(dict.fromkeys(k for k in keys if k not in known))
        if missing:
            text_of = dict(zip(keys, texts, strict=True))
            vectors = self.inner.embed_documents([text_of[k] for k in missing])
            fresh = dict(zip(missing, vectors, strict=True))
            self.cache.put(fresh)
            known.update(fresh)
            self.embedded += len(missing)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([known[k] for k in keys])

    def embed_query(self, text: str) -> Any:
        return self.inner.embed_query(text)


def cache_late(chunker: Any, cache: VectorCache, counter: dict[str, int]) -> None:
    """Late-chunked vectors cached by the document's joined embedded text and the late signature."""
    late = getattr(chunker, "late", None)
    if late is None:
        return
    compute = late.embed

    def embed(chunks: Sequence[Any]) -> Any:
        key = cache.key("late", late.signature, *(c.text_for_embedding for c in chunks))
        found = cache.get([key]).get(key)
        if found is None:
            found = compute(chunks)
            cache.put({key: found})
            counter["embedded"] += len(chunks)
        return found

    late.embed = embed


def encoded_tokens(store: Any, embedder: Any, options: ChunkingOptions, window: int) -> int:
    """Embedder tokens the chunks cost (special tokens included): each chunk's embedded text, or the
    late-chunking windows over each document."""
    total = 0
    for record in store.list_records():
        texts = [c.text_for_embedding for c in store.document_chunks(record.document_id)]
        if options.late_chunking:
            n = embedder.count_tokens("\n\n".join(texts))
            overlap = window // 4 if options.late_overlap_tokens is None else options.late_overlap_tokens
            total += sum(end - start + 2 for start, end, _, _ in windows(n, window, overlap))
        else:
            total += sum(min(embedder.count_tokens(t), window) + 2 for t in texts)
    return total


def evaluate(
    data: BeirDataset, names: list[str], embedder: CachedEmbedder, llm: Any, resamples: int, note: str = ""
) -> list[str]:
    rows: list[dict[str, Any]] = []
    per_query: dict[str, dict[str, dict[str, float]]] = {m: {} for m in MODES}
    for name in names:
        options = CONFIGS[name]
        counter = {"embedded": 0}
        before = embedder.embedded
        started = time.perf_counter()
        with Rag(MemoryStore(), embedder, chunking=options, llm=llm if name in NEEDS_LLM else None) as rag:
            cache_late(rag.chunker, embedder.cache, counter)
            report = rag.ingest(JsonlSource(data.corpus_path))
            ingest_s = time.perf_counter() - started
            store = rag.store
            chunks = store.count_chunks()
            tokens = encoded_tokens(store, embedder, options, embedder.max_tokens)
            results = {mode: run_config(rag, data, EvalConfig(name, opts)) for mode, opts in MODES.items()}
        for mode, result in results.items():
            per_query[mode][name] = result.per_query["ndcg@10"]
        rows.append(
            {
                "name": name,
                "docs": report.added + report.updated,
                "failed": len(report.failed),
                "chunks": chunks,
                "tokens": tokens,
                "embedded": embedder.embedded - before + counter["embedded"],
                "llm_calls": report.llm_calls,
                "llm_s": report.llm_seconds,
                "ingest_s": ingest_s,
                "ndcg": {m: bootstrap_ci(list(per_query[m][name].values()), resamples=resamples) for m in MODES},
            }
        )
        print(f"  done {data.root.name} {name}: {chunks} chunks, {ingest_s:.0f}s", flush=True)
    base = names[0]
    base_tokens = rows[0]["tokens"]
    lines = [
        f"dataset {data.root.name}: {len(data.judged_queries)} judged queries, {rows[0]['docs']} documents, "
        f"{embedder.name}",
        *([note] if note else []),
        f"{'config':14} {'chunks':>6} {'emb tokens':>10} {'×':>5} {'LLM calls':>9} {'LLM s':>7} {'ingest s':>8} "
        + " ".join(f"{m + ' nDCG@10 [95% CI]':>24} {'Δ vs ' + base + ' [95% CI]':>30} {'W/L/T':>11}" for m in MODES),
    ]
    for row in rows:
        cells = []
        for mode in MODES:
            iv = row["ndcg"][mode]
            delta, wlt = "—", ""
            if row["name"] != base:
                cmp = paired_bootstrap(per_query[mode][base], per_query[mode][row["name"]], resamples=resamples)
                d = cmp.difference
                delta = f"{d.mean:+.4f} [{d.low:+.4f}, {d.high:+.4f}]{' *' if cmp.significant else ''}"
                wlt = f"{cmp.wins}/{cmp.losses}/{cmp.ties}"
            cells.append(f"{f'{iv.mean:.4f} [{iv.low:.4f}, {iv.high:.4f}]':>24} {delta:>30} {wlt:>11}")
        lines.append(
            f"{row['name']:14} {row['chunks']:>6} {row['tokens']:>10} {row['tokens'] / base_tokens:>5.2f} "
            f"{row['llm_calls']:>9} {row['llm_s']:>7.0f} {row['ingest_s']:>8.0f} " + " ".join(cells)
        )
    return lines


def timing(data: BeirDataset, names: list[str], threads: int, docs: int, reps: int, llm: Any) -> list[str]:
    """Seconds without any cache on the first *docs* documents: bare embedding vs each ingestion."""
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "corpus.jsonl"
        with data.corpus_path.open(encoding="utf-8") as src:
            sample.write_text("".join(line for _, line in zip(range(docs), src, strict=False)), encoding="utf-8")
        embedder = load_embedder("default", threads=threads)
        chunker = make_chunker(embedder, CONFIGS["structural"])
        texts = [c.text_for_embedding for d in JsonlSource(sample).items() for c in chunker.chunk(d.load())]  # type: ignore[arg-type]
        best: dict[str, float] = {}
        calls: dict[str, int] = {}
        embedder.embed_documents(texts[:20])  # warm-up: the session and tokenizers load outside the timings
        for _ in range(reps):
            started = time.perf_counter()
            embedder.embed_documents(texts)
            best["bare embedding"] = min(best.get("bare embedding", float("inf")), time.perf_counter() - started)
            for name in names:
                started = time.perf_counter()
                with Rag(
                    MemoryStore(), embedder, chunking=CONFIGS[name], llm=llm if name in NEEDS_LLM else None
                ) as rag:
                    report = rag.ingest(JsonlSource(sample))
                best[name] = min(best.get(name, float("inf")), time.perf_counter() - started)
                calls[name] = report.llm_calls
    bare = best["bare embedding"]
    lines = [
        f"ingestion seconds, {data.root.name} first {docs} documents ({len(texts)} structural chunks), "
        f"no cache, best of {reps}, {threads} embedder threads",
        f"{'config':16} {'seconds':>8} {'× bare embedding':>17} {'LLM calls':>9}",
        f"{'bare embedding':16} {bare:>8.2f} {1.0:>17.2f} {'':>9}",
    ]
    lines += [f"{n:16} {best[n]:>8.2f} {best[n] / bare:>17.2f} {calls[n]:>9}" for n in names]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--datasets", "--dataset", default="scifact,cranfield,cisi", help="names or paths, comma-separated"
    )
    parser.add_argument(
        "--configs", default="structural,context,late", help="comma-separated; the first is the baseline"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--timing-docs", type=int, default=200, help="documents of the first dataset timed (0: none)")
    parser.add_argument("--timing-reps", type=int, default=2)
    parser.add_argument("--timing-only", action="store_true", help="only the seconds table (no retrieval runs)")
    parser.add_argument("--llm", default=None, help="chat model for context-llm / propositions (e.g. local:0.5b)")
    parser.add_argument("--sample-docs", type=int, default=0, help="restrict each corpus (all relevant docs kept)")
    parser.add_argument(
        "--sample-queries",
        type=int,
        default=0,
        help="keep N judged queries (seeded); the corpus = their relevant documents + --negatives hard negatives each",
    )
    parser.add_argument("--negatives", type=int, default=10, help="each sampled query's BM25 top-K over the corpus")
    parser.add_argument("--seed", type=int, default=0, help="the query sample's seed")
    args = parser.parse_args()
    names = [n.strip() for n in args.configs.split(",") if n.strip()]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        parser.error(f"unknown config(s) {unknown}; choose from {list(CONFIGS)}")
    llm = None
    if NEEDS_LLM & set(names):
        if not args.llm:
            parser.error(f"{sorted(NEEDS_LLM & set(names))} need --llm")
        from ragwright.models.llms import load_chat

        llm = load_chat(args.llm)
    inner = load_embedder("default", threads=args.threads)
    cache = VectorCache(inner.name)
    seeded = cache.seed_from_eval_stores()
    print(f"vector cache: {seeded} vectors seeded from the evaluation stores", flush=True)
    embedder = CachedEmbedder(inner, cache)
    out: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, spec in enumerate(s.strip() for s in args.datasets.split(",") if s.strip()):
            path = Path(spec) if "/" in spec else SHARED / "data" / spec
            data = load_beir(path, "test")
            note = ""
            if args.sample_queries:
                sample = query_sample(data, args.sample_queries, args.negatives, args.seed, Path(tmp))
                data, note = sample.data, sample.describe()
            elif args.sample_docs:
                data = sampled(data, args.sample_docs, Path(tmp))
            if i == 0 and args.timing_docs > 0:
                out += [*timing(data, names, args.threads, args.timing_docs, args.timing_reps, llm), ""]
                print("\n".join(out), flush=True)
            if args.timing_only:
                break
            out += [*evaluate(data, names, embedder, llm, args.resamples, note), ""]
            print("\n".join(out[-(len(names) + 3 + bool(note)) :]), flush=True)
    out.append("* = the paired 95% interval excludes 0; W/L/T = queries better/worse/tied than " + names[0])
    out.append("emb tokens = embedder tokens encoded (special tokens included); × = against " + names[0])
    out.append("LLM s = seconds in LLM calls; ingest s = the whole ingestion, embeddings cached between runs")
    print("\n" + "\n".join(out))


if __name__ == "__main__":
    main()
