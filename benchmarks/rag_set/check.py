"""Validate the RAG evaluation set (corpus.jsonl + items.jsonl).

Usage: python benchmarks/rag_set/check.py [--shared DIR]

DIR is the folder that holds ``docs-corpus/`` (default: $RAG_SET_SHARED or /work/shared).
Checks field types, id formats and uniqueness, that relevant documents exist in the corpus and are
visible to the item's identity, that every key fact of an answerable item occurs (case-insensitively,
whitespace-normalised) in at least one of its grade-2 documents, the shape of unanswerable and
permission items, and the minimum counts. Prints a summary; exits 1 with the problems on failure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TYPE_TAGS = {"factoid", "numeric", "table", "permission", "unanswerable", "multilingual"}
DOC_ID = re.compile(r"^[a-z0-9_]+$")
ITEM_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
PUBLIC = "*"
MIN = {
    "documents": 8,
    "restricted_documents": 2,
    "items": 45,
    "answerable": 30,
    "answerable_documents": 7,
    "unanswerable": 10,
    "permission": 6,
    "multilingual": 3,
}
MAX_FACT_CHARS = 60


def norm(text: str) -> str:
    """NFC, case-folded, every whitespace run collapsed to one space."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip().casefold()


def read_jsonl(path: Path, errors: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        errors.append(f"{path.name}: cannot read: {exc}")
        return rows
    for n, line in enumerate(lines, 1):
        if not line.strip():
            errors.append(f"{path.name}:{n}: blank line")
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"{path.name}:{n}: invalid JSON: {exc}")
            continue
        if not isinstance(row, dict):
            errors.append(f"{path.name}:{n}: not a JSON object")
            continue
        rows.append(row)
    return rows


def visible(doc: dict[str, Any], identity: dict[str, Any]) -> bool:
    if doc["tenant"] != identity["tenant"]:
        return False
    return bool(set(doc["acl"]) & ({PUBLIC} | set(identity["groups"])))


def is_str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) and x.strip() for x in v)


def check_corpus(rows: list[dict[str, Any]], shared: Path, errors: list[str]) -> dict[str, dict[str, Any]]:
    docs: dict[str, dict[str, Any]] = {}
    for r in rows:
        where = f"corpus {r.get('id')!r}"
        extra = set(r) - {"id", "path", "tenant", "acl", "metadata"}
        if extra:
            errors.append(f"{where}: unknown fields {sorted(extra)}")
        if not isinstance(r.get("id"), str) or not DOC_ID.match(r["id"]):
            errors.append(f"{where}: id must match [a-z0-9_]+")
            continue
        if r["id"] in docs:
            errors.append(f"{where}: duplicate id")
            continue
        if not isinstance(r.get("path"), str) or not r["path"]:
            errors.append(f"{where}: path must be a non-empty string")
            continue
        if not isinstance(r.get("tenant"), str) or not r["tenant"].strip():
            errors.append(f"{where}: tenant must be a non-empty string")
            continue
        if not is_str_list(r.get("acl")) or not r["acl"]:
            errors.append(f"{where}: acl must be a non-empty list of strings")
            continue
        if not isinstance(r.get("metadata", {}), dict):
            errors.append(f"{where}: metadata must be an object")
            continue
        file = shared / r["path"]
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            errors.append(f"{where}: cannot read {file}: {exc}")
            continue
        if file.suffix.lower() not in {".md", ".markdown", ".txt"}:
            errors.append(f"{where}: {file.name} is not Markdown or plain text")
        docs[r["id"]] = {**r, "text": norm(text)}
    return docs


def check_items(rows: list[dict[str, Any]], docs: dict[str, dict[str, Any]], errors: list[str]) -> None:
    seen: set[str] = set()
    topics = {d.get("metadata", {}).get("topic") for d in docs.values()}
    for r in rows:
        where = f"item {r.get('id')!r}"
        required = {"id", "question", "relevant", "key_facts", "reference_answer", "tags", "unanswerable", "identity"}
        missing = required - set(r)
        if missing:
            errors.append(f"{where}: missing fields {sorted(missing)}")
            continue
        if set(r) - required:
            errors.append(f"{where}: unknown fields {sorted(set(r) - required)}")
        if not isinstance(r["id"], str) or not ITEM_ID.match(r["id"]):
            errors.append(f"{where}: bad id")
            continue
        if r["id"] in seen:
            errors.append(f"{where}: duplicate id")
        seen.add(r["id"])
        for field in ("question", "reference_answer"):
            if not isinstance(r[field], str) or not r[field].strip():
                errors.append(f"{where}: {field} must be a non-empty string")
        if not isinstance(r["unanswerable"], bool):
            errors.append(f"{where}: unanswerable must be true/false")
            continue
        ident = r["identity"]
        if (
            not isinstance(ident, dict)
            or set(ident) != {"tenant", "groups"}
            or not isinstance(ident["tenant"], str)
            or not ident["tenant"].strip()
            or not (isinstance(ident["groups"], list) and all(isinstance(g, str) for g in ident["groups"]))
        ):
            errors.append(f"{where}: identity must be {{tenant: str, groups: [str]}}")
            continue
        tags = r["tags"]
        if not is_str_list(tags) or len(set(tags)) != len(tags):
            errors.append(f"{where}: tags must be a list of distinct strings")
            continue
        type_tags = [t for t in tags if t in TYPE_TAGS]
        if len(type_tags) != 1:
            errors.append(f"{where}: needs exactly one of {sorted(TYPE_TAGS)}, has {type_tags}")
        if not any(t in topics for t in tags):
            errors.append(f"{where}: no topic tag (one of {sorted(t for t in topics if t)})")
        rel, facts = r["relevant"], r["key_facts"]
        if not isinstance(rel, dict) or not all(isinstance(v, int) and not isinstance(v, bool) for v in rel.values()):
            errors.append(f"{where}: relevant must map document ids to integer grades")
            continue
        if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
            errors.append(f"{where}: key_facts must be a list of strings")
            continue
        if r["unanswerable"]:
            if rel or facts:
                errors.append(f"{where}: unanswerable items need relevant {{}} and key_facts []")
            if not ({"unanswerable", "permission"} & set(tags)):
                errors.append(f"{where}: unanswerable item must be tagged unanswerable or permission")
            continue
        if "unanswerable" in tags:
            errors.append(f"{where}: tagged unanswerable but unanswerable is false")
        for doc_id, grade in rel.items():
            if doc_id not in docs:
                errors.append(f"{where}: relevant document {doc_id!r} is not in corpus.jsonl")
            elif grade not in (1, 2):
                errors.append(f"{where}: grade for {doc_id!r} must be 1 or 2")
            elif not visible(docs[doc_id], ident):
                errors.append(f"{where}: relevant document {doc_id!r} is not visible to identity {ident}")
        grade2 = [d for d, g in rel.items() if g == 2 and d in docs]
        if not grade2:
            errors.append(f"{where}: answerable item needs at least one grade-2 document in the corpus")
            continue
        if not 1 <= len(facts) <= 3:
            errors.append(f"{where}: needs 1-3 key facts, has {len(facts)}")
        for fact in facts:
            if not fact.strip() or len(fact) > MAX_FACT_CHARS:
                errors.append(f"{where}: key fact {fact!r} must be non-empty and at most {MAX_FACT_CHARS} chars")
            elif not any(norm(fact) in docs[d]["text"] for d in grade2):
                errors.append(f"{where}: key fact {fact!r} occurs in none of {grade2}")


def check_permissions(rows: list[dict[str, Any]], docs: dict[str, dict[str, Any]], errors: list[str]) -> None:
    """A permission negative needs a positive twin whose answer documents the negative's caller cannot see."""
    positives: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if not r.get("unanswerable") and isinstance(r.get("relevant"), dict):
            positives.setdefault(norm(str(r.get("question", ""))), []).append(r)
    for r in rows:
        if not (r.get("unanswerable") and "permission" in r.get("tags", [])):
            continue
        twins = positives.get(norm(str(r["question"])), [])
        if not twins:
            errors.append(f"item {r['id']!r}: permission negative has no answerable twin with the same question")
            continue
        for twin in twins:
            leaked = [d for d, g in twin["relevant"].items() if d in docs and visible(docs[d], r["identity"])]
            if leaked:
                errors.append(
                    f"item {r['id']!r}: caller {r['identity']} can see {leaked}, so it is not a permission negative"
                )


def summarise(rows: list[dict[str, Any]], docs: dict[str, dict[str, Any]], errors: list[str]) -> list[str]:
    answerable = [r for r in rows if r.get("unanswerable") is False]
    answer_docs = {d for r in answerable for d, g in r.get("relevant", {}).items() if g == 2}
    tags = Counter(t for r in rows for t in r.get("tags", []))
    restricted = [d for d in docs.values() if d["tenant"] != "default" or PUBLIC not in d["acl"]]
    perm = [r for r in rows if "permission" in r.get("tags", [])]
    counts = {
        "documents": len(docs),
        "restricted_documents": len(restricted),
        "items": len(rows),
        "answerable": len(answerable),
        "answerable_documents": len(answer_docs),
        "unanswerable": tags["unanswerable"],
        "permission": len(perm),
        "multilingual": tags["multilingual"],
    }
    for key, minimum in MIN.items():
        if counts[key] < minimum:
            errors.append(f"count {key} = {counts[key]} < {minimum}")
    if perm and not any(r.get("unanswerable") for r in perm):
        errors.append("no permission item asked by a caller without access")
    if perm and not any(not r.get("unanswerable") for r in perm):
        errors.append("no permission item asked by a caller with access")
    lines = [f"{k}: {v} (min {MIN[k]})" for k, v in counts.items()]
    lines.append(
        f"unanswerable items (all, incl. permission negatives): {sum(1 for r in rows if r.get('unanswerable'))}"
    )
    lines.append("tags: " + ", ".join(f"{t}={n}" for t, n in sorted(tags.items())))
    per_doc = Counter(d for r in answerable for d, g in r.get("relevant", {}).items() if g == 2)
    lines.append("answerable items per document: " + ", ".join(f"{d}={n}" for d, n in sorted(per_doc.items())))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=Path(os.environ.get("RAG_SET_SHARED", "/work/shared")))
    ap.add_argument("--dir", type=Path, default=HERE, help="folder with corpus.jsonl and items.jsonl")
    args = ap.parse_args(argv)
    errors: list[str] = []
    docs = check_corpus(read_jsonl(args.dir / "corpus.jsonl", errors), args.shared, errors)
    rows = read_jsonl(args.dir / "items.jsonl", errors)
    check_items(rows, docs, errors)
    check_permissions(rows, docs, errors)
    summary = summarise(rows, docs, errors)
    print("\n".join(summary))
    if errors:
        print(f"\nFAILED: {len(errors)} problem(s)", file=sys.stderr)
        for e in errors:
            print(f"  - {e}", file=sys.stderr)
        return 1
    print("\nOK: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
