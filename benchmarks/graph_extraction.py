"""GraphRAG extraction quality against Re-DocRED's gold entities and relations (issue 24).

    .venv/bin/python benchmarks/graph_extraction.py [--data PATH] [--extractors rules,spacy] [--limit 500]
        [--thresholds 0.70:0.98:0.01] [--min-precision 0.6] [--no-merge] [--llm local:0.5b]

``--extractors rules,spacy,llm --limit 20 --no-merge`` adds the chat-model extractor on a few documents
(one model call per document: slow on two cores).

Data: Re-DocRED's dev set (500 Wikipedia introductions with every named-entity mention, its type, the
mentions grouped into entities, and the relations between entities); ``graph_extraction_data.json``
names the file (repository, commit, path, sha256). The script reads a local copy (default
``~/.cache/ragwright/bench/redocred/dev_revised.json``), checks its sha256, and never the network.

Each document (its tokens joined back into text, character offsets kept) is one chunk for the
extractor. Measured, per extractor:

* **mentions**: precision / recall / F1 of the extracted entity spans against the gold mention spans,
  *exact* (same start and end) and *lenient* (overlapping; a prediction is right when it overlaps a gold
  mention, a gold mention found when a prediction overlaps it); *typed* = exact span and the type
  mapping below. ``named`` leaves out the value types (gold TIME/NUM; ours DATE/MONEY/PERCENT/QUANTITY,
  which never become graph nodes); ``all`` keeps them. Recall per gold type follows.
* **edges**: the graph's relations (two entities of one sentence, ``related_to`` or a verb) against the
  gold relations' entity pairs (unordered, relation type ignored: ours are verbs, theirs Wikidata
  properties). A predicted edge maps onto gold entities through the gold mentions its two ends overlap
  (inside the edge's evidence sentence); it is right when it joins a related gold pair. Recall over
  all gold pairs, and over the *same-sentence* ones (a mention of each in one sentence: the only ones a
  sentence co-occurrence rule can find). ``P (gold ends)``: precision among edges whose both ends are
  gold entities (what the edge rule costs, apart from the NER's spurious entities).

**Merge threshold** (``GraphOptions.merge_similarity``): the gold entity clusters give the names that
denote one entity ("Wilfried \"Willi\" Schneider", "Schneider"). The documents are split in halves
(tune = even positions, test = odd). Gold names (their ``entity_key``, longer than 2 characters, value
types left out) of one gold type form a pool, the most mentioned first, as a tenant's keys are; one
surface of each is embedded with the default embedder and the pool merged by
:func:`ragwright.graph.resolve.merge_targets` (the rule ``GraphIndex.resolve`` runs) at each threshold.
Pairwise precision / recall / F1 over the pairs of names put in one cluster, in two settings:

* ``document``: each document is a tenant. The gold is complete there (two names are one entity
  exactly when Re-DocRED clusters them), but a document holds few confusable names, so precision is
  higher than a real tenant's would be.
* ``pooled``: the whole half is one tenant (a realistic number of names). A pair is right when the
  two names are one entity in some document; names never clustered together count as different, so
  true aliases from different documents ("U.S. Navy" / "United States Navy") count as wrong:
  precision is a lower bound.

Two choices are made on tune and reported on test, in both settings, beside the default: the best
``document`` F1, and the lowest threshold whose ``document`` precision reaches ``--min-precision``
(0.6): a wrong merge joins two entities' neighbourhoods for every query of the tenant, a missed one
only leaves two nodes apart, so precision comes first.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragwright.graph.model import ChunkText, Extraction, Extractor, entity_key
from ragwright.graph.options import GraphOptions
from ragwright.graph.resolve import merge_targets, normalised

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "graph_extraction_data.json"
DEFAULT = Path.home() / ".cache" / "ragwright" / "bench" / "redocred" / "dev_revised.json"
#: our types → Re-DocRED's (PER, ORG, LOC, TIME, NUM, MISC)
TYPE_MAP = {
    "PERSON": "PER",
    "ORG": "ORG",
    "GPE": "LOC",
    "LOC": "LOC",
    "DATE": "TIME",
    "MONEY": "NUM",
    "PERCENT": "NUM",
    "QUANTITY": "NUM",
    "PRODUCT": "MISC",
    "EVENT": "MISC",
    "MISC": "MISC",
}
GOLD_VALUES = frozenset({"TIME", "NUM"})
_NO_SPACE_BEFORE = frozenset({",", ".", ":", ";", "!", "?", ")", "]", "}", "%", "'s", "'", "n't", "'re", "'ve", "'m"})
_NO_SPACE_AFTER = frozenset({"(", "[", "{", "$", "#"})


@dataclass(frozen=True)
class GoldMention:
    entity: int
    start: int
    end: int
    type: str
    sentence: int
    name: str


@dataclass(frozen=True)
class Doc:
    id: str
    text: str
    sentences: tuple[tuple[int, int], ...]
    mentions: tuple[GoldMention, ...]
    pairs: frozenset[tuple[int, int]]  # related gold entities, unordered (low, high)


def detokenize(sents: Sequence[Sequence[str]]) -> tuple[str, list[list[tuple[int, int]]], list[tuple[int, int]]]:
    """Text from Re-DocRED's tokens, the character span of every token, and every sentence's span."""
    out: list[str] = []
    spans: list[list[tuple[int, int]]] = []
    sentence_spans: list[tuple[int, int]] = []
    pos, glue, quote_open = 0, True, False
    for sent in sents:
        row: list[tuple[int, int]] = []
        first = pos + (0 if glue else 1)
        for tok in sent:
            closing_quote = tok == '"' and quote_open
            if not glue and tok not in _NO_SPACE_BEFORE and not closing_quote:
                out.append(" ")
                pos += 1
            row.append((pos, pos + len(tok)))
            out.append(tok)
            pos += len(tok)
            if tok == '"':
                quote_open = not quote_open
            glue = tok in _NO_SPACE_AFTER or (tok == '"' and quote_open)
        spans.append(row)
        sentence_spans.append((first, pos))
    return "".join(out), spans, sentence_spans


def load(path: Path, limit: int) -> list[Doc]:
    expected = json.loads(MANIFEST.read_text())["files"]["dev"]["sha256"]
    raw = path.read_bytes()
    if hashlib.sha256(raw).hexdigest() != expected:
        raise SystemExit(f"{path}: not the manifest's file (sha256 {expected}); see {MANIFEST.name}")
    docs: list[Doc] = []
    for n, rec in enumerate(json.loads(raw)[:limit]):
        text, spans, sentences = detokenize(rec["sents"])
        mentions = []
        for e, cluster in enumerate(rec["vertexSet"]):
            for m in cluster:
                a, b = m["pos"]
                row = spans[m["sent_id"]]
                start, end = row[a][0], row[b - 1][1]
                mentions.append(GoldMention(e, start, end, m["type"], m["sent_id"], text[start:end]))
        pairs = frozenset((min(r["h"], r["t"]), max(r["h"], r["t"])) for r in rec["labels"] if r["h"] != r["t"])
        docs.append(Doc(f"d{n}", text, tuple(sentences), tuple(mentions), pairs))
    return docs


def _prf(tp_p: int, n_p: int, tp_g: int, n_g: int) -> tuple[float, float, float]:
    p, r = tp_p / max(n_p, 1), tp_g / max(n_g, 1)
    return p, r, 2 * p * r / max(p + r, 1e-12)


def mention_scores(docs: Sequence[Doc], extractions: Sequence[Extraction], *, named: bool) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    per_type: Counter[str] = Counter()
    for doc, ex in zip(docs, extractions, strict=True):
        gold = {(m.start, m.end): m.type for m in doc.mentions if not (named and m.type in GOLD_VALUES)}
        pred = {(m.start, m.end): TYPE_MAP.get(m.type, "MISC") for m in ex.mentions}
        if named:
            pred = {s: t for s, t in pred.items() if t not in GOLD_VALUES}
        counts["gold"] += len(gold)
        counts["pred"] += len(pred)
        counts["exact"] += len(gold.keys() & pred.keys())
        counts["typed"] += sum(1 for s, t in pred.items() if gold.get(s) == t)
        counts["lenient_p"] += sum(1 for a, b in pred if any(a < d and c < b for c, d in gold))
        for (c, d), t in gold.items():
            hit = any(a < d and c < b for a, b in pred)
            counts["lenient_g"] += hit
            per_type[f"{t}:n"] += 1
            per_type[f"{t}:lenient"] += hit
            per_type[f"{t}:exact"] += (c, d) in pred
    return {
        "exact": _prf(counts["exact"], counts["pred"], counts["exact"], counts["gold"]),
        "lenient": _prf(counts["lenient_p"], counts["pred"], counts["lenient_g"], counts["gold"]),
        "typed": _prf(counts["typed"], counts["pred"], counts["typed"], counts["gold"]),
        "gold": counts["gold"],
        "pred": counts["pred"],
        "per_type": per_type,
    }


def _entity_of(doc: Doc, start: int, end: int) -> int | None:
    best, overlap = None, 0
    for m in doc.mentions:
        o = min(end, m.end) - max(start, m.start)
        if o > overlap:
            best, overlap = m.entity, o
    return best


def edge_scores(docs: Sequence[Doc], extractions: Sequence[Extraction]) -> dict[str, float]:
    counts: Counter[str] = Counter()
    for doc, ex in zip(docs, extractions, strict=True):
        sentence_of: dict[int, set[int]] = {}
        for m in doc.mentions:
            sentence_of.setdefault(m.entity, set()).add(m.sentence)
        same_sentence = {(h, t) for h, t in doc.pairs if sentence_of.get(h, set()) & sentence_of.get(t, set())}
        found: set[tuple[int, int]] = set()
        for r in ex.relations:
            ends = []
            for key in (r.source, r.target):
                mentions = [m for m in ex.mentions if m.key == key and r.start <= m.start and m.end <= r.end]
                ends.append({e for m in mentions if (e := _entity_of(doc, m.start, m.end)) is not None})
            pairs = {(min(a, b), max(a, b)) for a in ends[0] for b in ends[1] if a != b}
            hits = pairs & doc.pairs
            counts["pred"] += 1
            counts["gold_ends"] += bool(pairs)
            counts["right"] += bool(hits)
            found |= hits
        counts["gold"] += len(doc.pairs)
        counts["gold_same"] += len(same_sentence)
        counts["found"] += len(found)
        counts["found_same"] += len(found & same_sentence)
    return {
        "pred": counts["pred"],
        "gold": counts["gold"],
        "gold_same": counts["gold_same"],
        "P": counts["right"] / max(counts["pred"], 1),
        "R": counts["found"] / max(counts["gold"], 1),
        "R_same": counts["found_same"] / max(counts["gold_same"], 1),
        "P_gold_ends": counts["right"] / max(counts["gold_ends"], 1),
    }


def make(name: str, llm_spec: str = "local:0.5b") -> Extractor:
    if name == "rules":
        from ragwright.graph.rules import RuleExtractor

        return RuleExtractor()
    if name == "spacy":
        from ragwright.graph.statistical import SpacyExtractor

        return SpacyExtractor()
    if name == "llm":
        from ragwright.graph.llm_extract import LlmExtractor
        from ragwright.models.llms import load_chat

        llm = load_chat(llm_spec)
        if llm is None:
            raise SystemExit(f"--llm {llm_spec!r} is no chat model")
        return LlmExtractor(llm)
    raise SystemExit(f"unknown extractor {name!r}: rules | spacy | llm")


def extraction_tables(docs: Sequence[Doc], names: Sequence[str], llm_spec: str = "local:0.5b") -> None:
    print(f"\n{len(docs)} documents, {sum(len(d.text) for d in docs):,} characters, one chunk each")
    print("\n| extractor | set | gold | predicted | exact P / R / F1 | lenient P / R / F1 | typed P / R / F1 | s |")
    print("|---|---|---|---|---|---|---|---|")
    per_type: dict[str, Counter[str]] = {}
    edges: dict[str, dict[str, float]] = {}
    for name in names:
        extractor = make(name, llm_spec)
        started = time.perf_counter()
        extractions = extractor.extract([ChunkText(d.id, d.text) for d in docs])
        seconds = time.perf_counter() - started
        for named in (True, False):
            s = mention_scores(docs, extractions, named=named)
            cells = " | ".join("{:.2f} / {:.2f} / {:.2f}".format(*s[k]) for k in ("exact", "lenient", "typed"))
            label = "named" if named else "all"
            print(f"| {name} | {label} | {s['gold']} | {s['pred']} | {cells} | {seconds:.1f} |")
            if not named:
                per_type[name] = s["per_type"]
        edges[name] = edge_scores(docs, extractions)
    types = sorted({k.split(":")[0] for c in per_type.values() for k in c})
    print("\nRecall per gold type, exact / lenient:\n")
    print("| gold type | mentions | " + " | ".join(names) + " |\n|---|---|" + "---|" * len(names))
    for t in types:
        n = next(iter(per_type.values()))[f"{t}:n"]
        cells = " | ".join(
            f"{c[f'{t}:exact'] / max(n, 1):.2f} / {c[f'{t}:lenient'] / max(n, 1):.2f}" for c in per_type.values()
        )
        print(f"| {t} | {n} | {cells} |")
    print("\nEdges (gold: related entity pairs, unordered; same-sentence: a mention of each in one sentence):\n")
    print(
        "| extractor | predicted edges | gold pairs | same-sentence pairs | P | R (all) | R (same-sentence) |", end=""
    )
    print(" P (gold ends) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, e in edges.items():
        print(
            f"| {name} | {e['pred']:.0f} | {e['gold']:.0f} | {e['gold_same']:.0f} | {e['P']:.2f} | {e['R']:.2f} "
            f"| {e['R_same']:.2f} | {e['P_gold_ends']:.2f} |"
        )


@dataclass(frozen=True)
class Pool:
    """One tenant's gold names of one type: keys most mentioned first, a surface each, same-entity pairs."""

    keys: list[str]
    surfaces: list[str]
    positive: set[tuple[str, str]]


def name_pools(docs: Sequence[Doc]) -> list[Pool]:
    """The gold names of *docs* as one tenant's, one pool per gold type (value types left out)."""
    counts: dict[str, Counter[str]] = {}
    surface: dict[tuple[str, str], str] = {}
    positive: dict[str, set[tuple[str, str]]] = {}
    for doc in docs:
        clusters: dict[tuple[int, str], set[str]] = {}
        for m in doc.mentions:
            key = entity_key(m.name)
            if m.type in GOLD_VALUES or len(key) <= 2:
                continue
            counts.setdefault(m.type, Counter())[key] += 1
            surface[(m.type, key)] = min(surface.get((m.type, key), m.name), m.name)
            clusters.setdefault((m.entity, m.type), set()).add(key)
        for (_, type_), members in clusters.items():
            positive.setdefault(type_, set()).update((a, b) for a in members for b in members if a < b)
    pools = []
    for t, c in counts.items():
        keys = sorted(c, key=lambda k: (-c[k], k))
        pools.append(Pool(keys, [surface[(t, k)] for k in keys], positive.get(t, set())))
    return pools


def pair_counts(pools: Sequence[Pool], vectors: dict[str, Any], threshold: float) -> tuple[int, int, int]:
    """``(right, predicted, gold)`` same-entity pairs when the pools are merged at *threshold*."""
    right = predicted = gold = 0
    for pool in pools:
        gold += len(pool.positive)
        if len(pool.keys) < 2:
            continue
        matrix = [vectors[s] for s in pool.surfaces]
        stars: dict[int, list[int]] = {}
        for j, i in merge_targets(pool.keys, matrix, threshold).items():
            stars.setdefault(i, [i]).append(j)
        for members in stars.values():
            for x, a in enumerate(members):
                for b in members[x + 1 :]:
                    predicted += 1
                    right += (min(pool.keys[a], pool.keys[b]), max(pool.keys[a], pool.keys[b])) in pool.positive
    return right, predicted, gold


Sweep = dict[tuple[str, str], dict[float, tuple[float, float, float]]]  # (setting, half) → threshold → P/R/F1


def merge_sweep(docs: Sequence[Doc], thresholds: Sequence[float]) -> Sweep:
    from ragwright.models.embedders import default_embedder

    embedder = default_embedder()
    results: Sweep = {}
    for half, part in {"tune": docs[0::2], "test": docs[1::2]}.items():
        settings = {"document": [p for d in part for p in name_pools([d])], "pooled": name_pools(part)}
        surfaces = sorted({s for pools in settings.values() for p in pools for s in p.surfaces})
        vectors = dict(zip(surfaces, normalised(embedder.embed_documents(surfaces)), strict=True))
        for setting, pools in settings.items():
            n_keys, n_pos = sum(len(p.keys) for p in pools), sum(len(p.positive) for p in pools)
            print(f"{half}, {setting}: {len(part)} documents, {n_keys} names, {n_pos} same-entity name pairs")
            results[(setting, half)] = {}
            for threshold in thresholds:
                right, predicted, gold = pair_counts(pools, vectors, threshold)
                results[(setting, half)][threshold] = _prf(right, predicted, right, gold)
    return results


def merge_tables(results: Sweep, min_precision: float) -> None:
    default = GraphOptions().merge_similarity
    columns = [(s, h) for s in ("document", "pooled") for h in ("tune", "test")]
    print("\n| merge_similarity | " + " | ".join(f"{s} {h} P / R / F1" for s, h in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for threshold in results[columns[0]]:
        cells = " | ".join("{:.2f} / {:.2f} / {:.2f}".format(*results[c][threshold]) for c in columns)
        mark = " (default)" if default is not None and abs(threshold - default) < 1e-9 else ""
        print(f"| {threshold:.2f}{mark} | {cells} |")
    tune = results[("document", "tune")]
    best_f1 = max(tune, key=lambda th: (round(tune[th][2], 6), th))
    precise = [th for th in tune if tune[th][0] >= min_precision and tune[th][1] > 0]
    choices = {"best per-document F1 on tune": best_f1}
    if precise:
        choices[f"lowest threshold with per-document precision ≥ {min_precision:.2f} on tune"] = min(precise)
    for label, choice in choices.items():
        print(f"\n{label}: {choice:.2f}")
        for setting in ("document", "pooled"):
            test = results[(setting, "test")]
            line = f"  test, {setting}: {choice:.2f} → P/R/F1 " + "{:.3f} / {:.3f} / {:.3f}".format(*test[choice])
            if default is not None and default in test:
                line += f"; default {default:.2f} → " + "{:.3f} / {:.3f} / {:.3f}".format(*test[default])
            print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT)
    parser.add_argument("--extractors", default="rules,spacy")
    parser.add_argument("--limit", type=int, default=500)
    parser.add_argument("--llm", default="local:0.5b", help="the llm extractor's chat model (load_chat spec)")
    parser.add_argument("--thresholds", default="0.70:0.98:0.01", help="start:stop:step (inclusive)")
    parser.add_argument("--min-precision", type=float, default=0.6, help="the precision-first choice's floor")
    parser.add_argument("--no-merge", action="store_true", help="skip the merge-threshold sweep")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"{args.data}: missing; {json.loads(MANIFEST.read_text())['description']}")
    docs = load(args.data, args.limit)
    names = [n for n in args.extractors.split(",") if n]
    if names:
        extraction_tables(docs, names, args.llm)
    if not args.no_merge:
        start, stop, step = (float(x) for x in args.thresholds.split(":"))
        thresholds = [round(start + i * step, 4) for i in range(round((stop - start) / step) + 1)]
        print()
        merge_tables(merge_sweep(docs, thresholds), args.min_precision)


if __name__ == "__main__":
    main()
