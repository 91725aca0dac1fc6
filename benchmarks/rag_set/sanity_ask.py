"""Run every item of the set through ragwright's default pipeline and report how it fares.

Usage: python benchmarks/rag_set/sanity_ask.py [--shared DIR] [--verbose]

Ingests corpus.jsonl into an in-memory Rag (default embedder, extractive answers) with each
document's tenant and ACL, asks every question as the item's identity, and counts:
answerable items answered (not declined) with a key fact in the answer and a grade-2 document cited;
unanswerable items declined; permission negatives that cite a document the caller may not see (must be 0).
This is a sanity check of the set, not a tuned benchmark.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from ragwright import Identity, Rag
from ragwright.sources import SourceItem

HERE = Path(__file__).resolve().parent


class _Docs:
    """A source of ``(document_id, bytes, name_hint)``; the hint keeps Markdown detection by suffix."""

    def __init__(self, docs: list[tuple[str, bytes, str]]) -> None:
        self.docs = docs

    @property
    def root(self) -> str | None:
        return None

    def items(self) -> Iterator[SourceItem]:
        for doc_id, data, hint in self.docs:
            yield SourceItem(
                document_id=doc_id, uri=f"memory:{doc_id}", load=functools.partial(bytes, data), name_hint=hint
            )

    def __len__(self) -> int:
        return len(self.docs)


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", type=Path, default=Path(os.environ.get("RAG_SET_SHARED", "/work/shared")))
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    corpus = [json.loads(line) for line in (HERE / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    items = [json.loads(line) for line in (HERE / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    by_id = {d["id"]: d for d in corpus}

    rag = Rag()
    for d in corpus:
        p = args.shared / d["path"]
        rep = rag.ingest(
            _Docs([(d["id"], p.read_bytes(), p.name)]), tenant=d["tenant"], acl=d["acl"], metadata=d.get("metadata")
        )
        if rep.failed:
            print(f"ingest failed for {d['id']}: {rep.failed}", file=sys.stderr)
        elif args.verbose:
            print(f"ingested {d['id']}: {rep.chunks} chunks (tenant={d['tenant']}, acl={d['acl']})")

    stats: Counter[str] = Counter({"LEAK": 0})
    for it in items:
        ident = Identity(it["identity"]["tenant"], groups=tuple(it["identity"]["groups"]))
        r = rag.ask(it["question"], identity=ident)
        cited = {c.document_id for c in r.citations}
        answer = norm(r.answer or "")
        hidden = {
            c
            for c in cited
            if c in by_id
            and (by_id[c]["tenant"] != ident.tenant or not set(by_id[c]["acl"]) & set(ident.visible_groups))
        }
        if hidden:
            stats["LEAK"] += 1
        if it["unanswerable"]:
            kind = "permission_neg" if "permission" in it["tags"] else "unanswerable"
            stats[f"{kind}_total"] += 1
            stats[f"{kind}_declined"] += r.declined
            ok = r.declined
        else:
            stats["answerable_total"] += 1
            grade2 = {d for d, g in it["relevant"].items() if g == 2}
            has_fact = any(norm(f) in answer for f in it["key_facts"])
            ok = (not r.declined) and has_fact
            stats["answerable_not_declined"] += not r.declined
            stats["answerable_with_key_fact"] += ok
            stats["answerable_all_key_facts"] += (not r.declined) and all(norm(f) in answer for f in it["key_facts"])
            stats["answerable_cites_grade2"] += bool(cited & grade2)
        if args.verbose or not ok:
            mark = "ok " if ok else "MISS"
            print(
                f"{mark} {it['id']:<10} declined={r.declined!s:<5} cited={sorted(cited)} :: {(r.answer or '')[:160]!r}"
            )
    print()
    for k in sorted(stats):
        print(f"{k}: {stats[k]}")
    return 1 if stats["LEAK"] else 0


if __name__ == "__main__":
    sys.exit(main())
