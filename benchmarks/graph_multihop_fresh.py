"""``--corpus fresh`` of ``benchmarks/graph_multihop.py``: multi-hop questions never used to tune or test.

The held-out confirmation set of issue 24: HotpotQA, 2WikiMultiHopQA and MuSiQue dev questions (the
``fresh_*`` entries of ``benchmarks/graph_multihop_data.json``) that are not among the questions of
``--corpus large`` (meve100, amor500, ircot500: matched by id and by normalised question text). Their
paragraphs, deduplicated by title and whitespace-normalised text, are added to a copy of the ``--corpus
large`` store (only the new paragraphs are ingested; the cached large store itself is never written), so
the evaluated corpus is the 9,487 large documents plus the fresh ones. Every fresh question is evaluated
(no tune/test split); the single-hop control is the large corpus's SQuAD questions of the ``test`` split.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from graph_multihop import MANIFEST, Question, _checked, _ircot, _meve, source

from ragwright.graph import GraphOptions
from ragwright.models.embedders import default_embedder
from ragwright.rag import Rag
from ragwright.stores.sqlite import SqliteStore

#: The rows of the fresh tables: a name and the question kinds it pools. "bridge-like" = the questions
#: answered through a bridge entity or a chain (HotpotQA bridge, 2Wiki compositional/inference, MuSiQue).
MUSIQUE = tuple(f"musique {h}" for h in ("2hop", "3hop1", "3hop2", "4hop1", "4hop2", "4hop3"))
TWO_WIKI = tuple(f"2wiki {t}" for t in ("compositional", "inference", "comparison", "bridge_comparison"))
FRESH_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hotpotqa bridge", ("hotpotqa bridge",)),
    ("hotpotqa comparison", ("hotpotqa comparison",)),
    ("2wiki compositional", ("2wiki compositional",)),
    ("2wiki inference", ("2wiki inference",)),
    ("2wiki comparison", ("2wiki comparison",)),
    ("2wiki bridge_comparison", ("2wiki bridge_comparison",)),
    ("musique 2hop", ("musique 2hop",)),
    ("musique 3hop", ("musique 3hop1", "musique 3hop2")),
    ("musique 4hop", ("musique 4hop1", "musique 4hop2", "musique 4hop3")),
    (
        "bridge-like (hotpotqa bridge, 2wiki compositional+inference, musique)",
        ("hotpotqa bridge", "2wiki compositional", "2wiki inference", *MUSIQUE),
    ),
    ("hotpotqa (all fresh)", ("hotpotqa bridge", "hotpotqa comparison")),
    ("2wiki (all)", TWO_WIKI),
    ("musique (all)", MUSIQUE),
    ("multi-hop (all fresh) [primary]", ("*multi-hop*",)),
    ("single-hop (SQuAD, large test split)", ("single-hop",)),
)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _question_key(text: str) -> str:
    return _norm(text).lower()


def _jsonl(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in raw.decode().splitlines() if line.strip()]


def seen_questions(folder: Path) -> tuple[set[str], set[str]]:
    """Ids and normalised question texts of every question ``--corpus large`` loads (tuned or tested)."""
    files = json.loads(MANIFEST.read_text())["files"]
    rows = _meve(_checked(folder, files["meve100"])) + _jsonl(_checked(folder, files["amor500"]))
    rows += _ircot(_checked(folder, files["ircot500"]))
    return {str(r["_id"]) for r in rows}, {_question_key(r["question"]) for r in rows}


class _Pool:
    """Document ids for (title, text) paragraphs: the title when it is free or holds the same text
    (whitespace aside), else ``"title ¶k"`` (k ≥ 2; the heading drops the suffix)."""

    def __init__(self, base: dict[str, str]) -> None:
        self.docs = base
        self.new: dict[str, str] = {}

    def id_for(self, title: str, text: str) -> str:
        candidates = [title] + [f"{title} ¶{k}" for k in range(2, 1000)]
        for doc_id in candidates:
            held = self.docs.get(doc_id)
            if held is None:
                self.docs[doc_id] = self.new[doc_id] = text
                return doc_id
            if _norm(held) == _norm(text):
                return doc_id
        raise ValueError(f"too many paragraphs titled {title!r}")


def _hotpot(r: dict[str, Any]) -> tuple[str, str, list[tuple[str, str]], set[str], str]:
    paragraphs = [(t, "".join(s).strip()) for t, s in r["context"]]
    return r["_id"], f"hotpotqa {r['type']}", paragraphs, {t for t, _ in r["supporting_facts"]}, r["answer"]


def _two_wiki(r: dict[str, Any]) -> tuple[str, str, list[tuple[str, str]], set[str], str]:
    paragraphs = [(t, " ".join(x.strip() for x in s).strip()) for t, s in r["context"]]
    return r["_id"], f"2wiki {r['type']}", paragraphs, {t for t, _ in r["supporting_facts"]}, r["answer"]


def _musique(r: dict[str, Any]) -> tuple[str, str, list[tuple[str, str]], set[str], str]:
    paragraphs = [(p["title"], p["paragraph_text"].strip()) for p in r["paragraphs"]]
    gold = {i for i, p in enumerate(r["paragraphs"]) if p["is_supporting"]}
    hops = r["id"].split("__")[0]
    return r["id"], f"musique {hops}", paragraphs, {f"#{i}" for i in gold}, r["answer"]


def load_fresh(folder: Path, base_docs: dict[str, str]) -> tuple[list[Question], dict[str, str], dict[str, int]]:
    """The fresh questions and the paragraphs they add to *base_docs* (the large corpus; not modified).

    Returns the questions, the new documents and a count of what was skipped and why."""
    files = json.loads(MANIFEST.read_text())["files"]
    ids, texts = seen_questions(folder)
    pool = _Pool(dict(base_docs))
    skipped: dict[str, int] = {}
    out: list[Question] = []
    readers = (("fresh_hotpot", _hotpot), ("fresh_2wiki", _two_wiki), ("fresh_musique", _musique))
    for name, read in readers:
        for r in _jsonl(_checked(folder, files[name])):
            if name == "fresh_2wiki" and "context" not in r:
                skipped[f"{name}: no paragraphs"] = skipped.get(f"{name}: no paragraphs", 0) + 1
                continue
            qid, kind, paragraphs, gold, answer = read(r)
            key = _question_key(r["question"])
            if qid in ids or key in texts:
                skipped[f"{name}: used by --corpus large"] = skipped.get(f"{name}: used by --corpus large", 0) + 1
                continue
            doc_ids = [pool.id_for(t, x) for t, x in paragraphs]
            if name == "fresh_musique":
                gold_ids = {doc_ids[int(g[1:])] for g in gold}
            else:
                gold_ids = {d for d, (t, _) in zip(doc_ids, paragraphs, strict=True) if t in gold}
                if not gold or not gold <= {t for t, _ in paragraphs}:
                    skipped[f"{name}: gold paragraph missing"] = skipped.get(f"{name}: gold paragraph missing", 0) + 1
                    continue
            ids.add(qid)
            texts.add(key)
            mine = tuple((d, pool.docs[d]) for d in dict.fromkeys(doc_ids))
            out.append(Question(f"{name}:{qid}", r["question"], str(answer), kind, frozenset(gold_ids), mine))
    return out, pool.new, skipped


def open_fresh_store(base_docs: dict[str, str], new_docs: dict[str, str], work: Path, options: GraphOptions) -> Rag:
    """A copy of the cached ``--corpus large`` store with *new_docs* ingested (once; cached under *work*)."""
    base_key = hashlib.sha256("\n".join(sorted(base_docs)).encode()).hexdigest()[:12]
    base = work / f"multihop-{len(base_docs)}-{base_key}.db"
    if not (work / f"multihop-{len(base_docs)}-{base_key}.done").exists():
        raise SystemExit(f"{base} not built: run --corpus large first")
    every = sorted([*base_docs, *new_docs])
    key = hashlib.sha256("\n".join(every).encode()).hexdigest()[:12]
    path, done = work / f"fresh-{len(every)}-{key}.db", work / f"fresh-{len(every)}-{key}.done"
    if done.exists():
        return Rag(SqliteStore(path), default_embedder(), graph=options)
    for stale in work.glob(f"fresh-{len(every)}-{key}.db*"):
        stale.unlink()
    src = sqlite3.connect(f"file:{base}?mode=ro&immutable=1", uri=True)  # never written, no -wal/-shm beside it
    dst = sqlite3.connect(path)
    src.backup(dst)
    src.close()
    dst.close()
    rag = Rag(SqliteStore(path), default_embedder(), graph=options)
    started = time.perf_counter()
    report = rag.ingest(source(new_docs), sync=False)
    seconds = time.perf_counter() - started
    done.write_text(json.dumps({"seconds": seconds, "chunks": report.chunks, "documents": len(new_docs)}))
    print(f"ingested {len(new_docs)} new documents ({report.chunks} chunks) in {seconds:.0f}s", flush=True)
    return rag


def groups_for(questions: Iterable[Question]) -> list[tuple[str, Sequence[str]]]:
    """FRESH_GROUPS with the primary pool (every fresh multi-hop kind present) spelled out."""
    multi = tuple(sorted({q.kind for q in questions if q.kind != "single-hop"}))
    return [(n, multi if kinds == ("*multi-hop*",) else kinds) for n, kinds in FRESH_GROUPS]


def describe(questions: Sequence[Question], new_docs: dict[str, str], skipped: dict[str, int]) -> str:
    kinds: dict[str, int] = {}
    for q in questions:
        kinds[q.kind] = kinds.get(q.kind, 0) + 1
    listed = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
    dropped = "; ".join(f"{k} {n}" for k, n in sorted(skipped.items())) or "none"
    suffixed = sum(bool(re.search(r" ¶\d+$", d)) for d in new_docs)
    return (
        f"fresh questions {len(questions)} ({listed}); skipped: {dropped}; "
        f"{len(new_docs)} new documents ({suffixed} titled 'title ¶k': a title already held other text)"
    )
