"""Expansion questions ("What does IAEA stand for?") on Wikipedia paragraphs no ragwright choice was made on.

The paragraphs are the GraphRAG benchmark's large corpus (HotpotQA / 2WikiMultiHopQA / MuSiQue, built by
``benchmarks/graph_multihop.py --corpus fresh``; manifests in ``benchmarks/graph_multihop_data.json``), read
from its store. The questions are made by rule, with a pattern of this script's own (not the library's
acronym code): an acronym in parentheses right after capitalised words whose initials spell it defines it
("International Atomic Energy Agency (IAEA)"); "What does X stand for?" is answerable, its gold answer the
words. Unanswerable questions ask about an acronym that the sampled paragraphs use but never define that way
and whose initials no run of words there spells, in any case (they look answerable: the acronym is in the
documents). A fixed seed picks the questions and the paragraphs around them; the store holds the defining
and using paragraphs and as many random others.

    python benchmarks/expansions_wiki.py [--store PATH] [--n 40] [--seed 7]

Prints the share of answerable questions answered with the expansion (cited), of unanswerable ones declined,
and the balanced decline accuracy, with 95 % bootstrap intervals.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
import sys
import tempfile
from pathlib import Path

from ragwright import Rag
from ragwright.eval.stats import bootstrap_ci
from ragwright.sources import BytesSource

SOURCE = Path.home() / ".cache/ragwright/bench/graph_multihop/fresh-15522-a745320cff9e.db"
_SMALL = {"of", "and", "the", "for", "in", "on", "de", "du", "des", "la", "le", "a", "an", "&"}
_WORD = r"(?:[A-Z][\w'-]*|of|and|the|for|in|on|de|du|des|la|le|&)"  # a capitalised word or a small one
_DEFINED = re.compile(rf"({_WORD}(?:\s+{_WORD}){{1,9}})\s+\(([A-Z]{{2,6}})\)")
_ACRONYM = re.compile(r"\b([A-Z]{2,6})\b")


def _expansion(words: str, acronym: str) -> str | None:
    """The tail of *words* whose capitalised initials spell *acronym* (small words inside allowed)."""
    tokens = words.split()
    for start in range(len(tokens)):
        run = tokens[start:]
        if run[0].casefold() in _SMALL:
            continue
        initials = "".join(t[0] for t in run if t.casefold() not in _SMALL)
        if initials.upper() == acronym and all(t[0].isupper() for t in run if t.casefold() not in _SMALL):
            return " ".join(run)
    return None


def build(texts: list[tuple[str, str]], n: int, seed: int) -> tuple[list[dict], list[tuple[str, str]]]:
    rng = random.Random(seed)
    defined: dict[str, list[tuple[str, str]]] = {}
    used: dict[str, set[str]] = {}
    for doc, text in texts:
        for m in _DEFINED.finditer(text):
            exp = _expansion(m.group(1), m.group(2))
            if exp:
                defined.setdefault(m.group(2), []).append((doc, exp))
        for a in set(_ACRONYM.findall(text)):
            used.setdefault(a, set()).add(doc)
    # answerable: acronyms defined in exactly one paragraph, one expansion
    single = sorted(a for a, d in defined.items() if len({doc for doc, _ in d}) == 1 and len({e for _, e in d}) == 1)
    answerable = rng.sample(single, min(n, len(single)))
    keep = {defined[a][0][0] for a in answerable}
    # unanswerable: acronyms used (≥ 2 paragraphs) but defined nowhere in the corpus
    never = sorted(a for a, docs in used.items() if a not in defined and len(docs) >= 2 and len(a) >= 3)
    by_id = dict(texts)
    unanswerable = []
    for a in rng.sample(never, len(never)):
        docs = sorted(used[a])[:3]
        if not any(_spelled_somewhere(a, by_id[d]) for d in docs):
            unanswerable.append(a)
            keep |= set(docs)
        if len(unanswerable) == n:
            break
    others = rng.sample(sorted(set(by_id) - keep), len(keep))
    store = [(d, by_id[d]) for d in sorted(keep | set(others))]
    items = [
        {"id": f"a-{a}", "question": f"What does {a} stand for?", "answers": [defined[a][0][1]], "unanswerable": False}
        for a in answerable
    ] + [
        {"id": f"u-{a}", "question": f"What does {a} stand for?", "answers": [], "unanswerable": True}
        for a in unanswerable
    ]
    return items, store


def _spelled_somewhere(acronym: str, text: str) -> bool:
    """Whether any run of *text*'s words (any case; small words skipped) has the acronym's initials: such
    an acronym may be spelt out ("automated teller machine (ATM)", "… Association of Australia – SPAA"),
    so it is not used as an unanswerable question."""
    tokens = [w for w in re.findall(r"[\w'’-]+", text) if w.casefold() not in _SMALL]
    n = len(acronym)
    return any("".join(w[0] for w in tokens[i : i + n]).upper() == acronym for i in range(len(tokens) - n + 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", type=Path, default=SOURCE)
    ap.add_argument("--store", type=Path, default=None)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--dump", type=Path, default=None, help="write the QA records here (JSONL)")
    args = ap.parse_args()
    if not args.source.exists():
        sys.exit(f"{args.source} is missing: build it with python benchmarks/graph_multihop.py --corpus fresh")
    con = sqlite3.connect(args.source)
    texts = sorted({(d, t) for d, t in con.execute("select document_id, text from chunks where position = 0")})
    items, docs = build(texts, args.n, args.seed)
    if args.dump:
        args.dump.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    path = args.store or Path(tempfile.mkdtemp()) / "expansions.db"
    rag = Rag.open(path)
    rag.ingest(BytesSource({f"{i:05d}.txt": t.encode() for i, (_, t) in enumerate(docs)}))
    answered, declined = [], []
    for item in items:
        r = rag.ask(item["question"])
        if item["unanswerable"]:
            declined.append(float(r.declined))
        else:
            ok = not r.declined and bool(r.citations) and item["answers"][0].casefold() in r.answer.casefold()
            answered.append(float(ok))
            if not ok:
                got = f"declined ({r.decline_reason})" if r.declined else repr(r.answer[:100])
                print(f"  miss {item['question']!r} gold {item['answers'][0]!r}: {got}")
    for item, d in zip([i for i in items if i["unanswerable"]], declined, strict=True):
        if not d:
            print(f"  answered unanswerable {item['question']!r}")
    a, d = bootstrap_ci(answered), bootstrap_ci(declined)
    print(f"store: {len(docs)} paragraphs; {len(answered)} answerable, {len(declined)} unanswerable questions")
    print(f"answered with the expansion, cited  {a.mean:.3f} [{a.low:.3f}, {a.high:.3f}]")
    print(f"unanswerable declined               {d.mean:.3f} [{d.low:.3f}, {d.high:.3f}]")
    print(f"balanced (answered-with-fact + declined) / 2  {(a.mean + d.mean) / 2:.3f}")


if __name__ == "__main__":
    main()
