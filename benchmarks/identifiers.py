"""Exact identifiers: near-duplicate records that differ only in a code, number, version or name.

Users search for invoice numbers, error codes, part numbers, versions and people constantly. A
generated corpus of record families (ledger notes, invoices, releases, error codes, part numbers,
tickets, standards, hosts, SKUs, meeting minutes, orders, policies), 40 records per family, every
record of a family the same text but for its identifier (and a second, shared slot such as an item
number), so that the dense arm cannot tell them apart. Each query names one record by its identifier,
with a few of the family's words around it (or the identifier alone, or quoted); the right answer is
that one record.

For each configuration: the share of queries whose right record is ranked first (top-1) and in the
top 5, with the failures listed. The default configuration (``Rag`` with no options) must rank the
right record first for at least 99 % of the queries.

Usage::

    python benchmarks/identifiers.py [--seed 7] [--per-family 40] [--queries-per-family 8]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

FIRST = ["John", "Jane", "Maria", "Mario", "Ahmed", "Aisha", "Wei", "Wen", "Olga", "Oleg", "Priya", "Pavel"]
LAST = ["Smith", "Smyth", "Schmidt", "Garcia", "Garza", "Khan", "Kahn", "Chen", "Cheng", "Novak", "Nowak", "Patel"]
MATERIALS = ["cobalt", "nickel", "copper", "lithium", "zinc"]
SITES = ["Rotterdam", "Antwerp", "Hamburg", "Gdansk"]
PRODUCTS = ["Atlas", "Beacon", "Cobalt", "Delta"]


@dataclass(frozen=True)
class Record:
    id: str
    text: str
    family: str
    key: str  # the identifier that tells this record from its family


@dataclass(frozen=True)
class Query:
    text: str
    answer: str  # the record id


#: family -> (record text template, query templates); ``{key}`` is the identifier, ``{slot}`` a second
#: field every record of the family draws from a small set (so it never identifies a record).
FAMILIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "ledger": (
        "Item {slot}: {material} shipment number {key} received at the {site} warehouse; inspected and "
        "logged by the receiving clerk with no damage noted.",
        ("{material} shipment {key}", "shipment number {key}", "{key}"),
    ),
    "invoice": (
        "Invoice {key} issued to the customer for consulting services rendered in {slot}. Payment terms "
        "are net 30 days; late payments accrue interest.",
        ("invoice {key}", "{key}", "payment terms of invoice {key}"),
    ),
    "release": (
        "Release notes for {product} {key}: improved startup time, fixed several crash reports and updated "
        "the bundled certificates. Build {slot}.",
        ("{product} {key} release notes", "what changed in {key}", "{product} {key}"),
    ),
    "error": (
        "Error {key}: the service could not connect to the database. Check the connection string, the "
        "network route and the credentials, then retry. Seen on node {slot}.",
        ("error {key}", "{key} database connection", "what does {key} mean"),
    ),
    "part": (
        "Part {key} is the replacement gasket for the pump assembly, stainless steel, pack of {slot}. "
        "Fits the standard housing.",
        ("gasket part {key}", "{key}", "replacement part {key} pump"),
    ),
    "ticket": (
        "Ticket #{key}: the customer reports that the mobile app logs out after an update. Assigned to "
        "support team {slot}; priority normal.",
        ("ticket {key}", "#{key} app logs out", "ticket #{key}"),
    ),
    "standard": (
        "Compliance checklist for ISO {key}: document the controls, assign owners and schedule the "
        "internal audit for quarter {slot}.",
        ("ISO {key} checklist", "ISO {key}", "compliance checklist ISO {key}"),
    ),
    "host": (
        "Server {key} failed its health check at {slot}:00; the load balancer removed it from the pool "
        "and paged the on-call engineer.",
        ("{key} health check", "server {key}", "why was {key} removed from the pool"),
    ),
    "sku": (
        "SKU {key} is a ceramic coffee mug, 350 ml, dishwasher safe, sold in boxes of {slot}.",
        ("SKU {key}", "{key} mug", "ceramic mug {key}"),
    ),
    "minutes": (
        "Meeting minutes recorded by {key}. The committee approved the budget and scheduled the next "
        "review for week {slot}.",
        ("minutes recorded by {key}", "{key} meeting minutes", '"{key}"'),
    ),
    "order": (
        "Purchase order {key} for office chairs was approved by procurement and sent to the supplier on day {slot}.",
        ("purchase order {key}", "{key}", "order {key} office chairs"),
    ),
    "policy": (
        "Policy {key} governs remote access: multi-factor authentication is required and sessions expire "
        "after {slot} hours of inactivity.",
        ("policy {key}", "{key} remote access", "what does policy {key} require"),
    ),
}


def _keys(family: str, rng: random.Random, n: int) -> list[str]:
    """*n* distinct identifiers of *family*'s shape (near each other, as real ones are)."""
    makers: dict[str, Callable[[], str]] = {
        "ledger": lambda: f"{rng.randrange(100, 999):05d}",
        "invoice": lambda: f"INV-2024-{rng.randrange(1, 200):04d}",
        "release": lambda: f"v{rng.randrange(1, 4)}.{rng.randrange(0, 6)}.{rng.randrange(0, 12)}",
        "error": lambda: rng.choice(["E", "ERR-", "0x"]) + f"{rng.randrange(1000, 1100)}",
        "part": lambda: f"{rng.choice(['KX', 'KY', 'LX'])}-{rng.randrange(2200, 2240)}-{rng.choice('ABC')}",
        "ticket": lambda: f"{rng.randrange(48000, 48300)}",
        "standard": lambda: (
            rng.choice(["27001", "27002", "27017", "27018", "9001", "14001", "45001", "22301", "50001", "31000"])
            + rng.choice([":2013", ":2015", ":2018", ":2022"])
        ),
        "host": lambda: f"10.0.{rng.randrange(10, 14)}.{rng.randrange(1, 40)}",
        "sku": lambda: f"{rng.randrange(4400, 4420)}/{rng.randrange(10, 30)}",
        "minutes": lambda: f"{rng.choice(FIRST)} {rng.choice(LAST)}",
        "order": lambda: f"PO-{rng.randrange(7700, 7800)}",
        "policy": lambda: f"SEC-{rng.randrange(1, 4)}.{rng.randrange(1, 15)}",
    }
    make = makers[family]
    out: list[str] = []
    seen: set[str] = set()
    for _ in range(1000 * n):
        key = make()
        if key not in seen:
            seen.add(key)
            out.append(key)
            if len(out) == n:
                return out
    raise ValueError(f"family {family!r} cannot make {n} distinct identifiers")


def generate(seed: int = 7, per_family: int = 40, queries_per_family: int = 8) -> tuple[list[Record], list[Query]]:
    """The records and the queries naming one of them (deterministic for a seed)."""
    rng = random.Random(seed)
    records: list[Record] = []
    queries: list[Query] = []
    for family, (template, query_templates) in FAMILIES.items():
        keys = _keys(family, rng, per_family)
        fill = {"material": rng.choice(MATERIALS), "site": rng.choice(SITES), "product": rng.choice(PRODUCTS)}
        family_records = []
        for i, key in enumerate(keys):
            slot = str(rng.randrange(1, 30))
            rec = Record(f"{family}-{i:03d}", template.format(key=key, slot=slot, **fill), family, key)
            family_records.append(rec)
        records.extend(family_records)
        for rec in rng.sample(family_records, min(queries_per_family, len(family_records))):
            q = rng.choice(query_templates).format(key=rec.key, **fill)
            queries.append(Query(q, rec.id))
    return records, queries


# -- the run ----------------------------------------------------------------------------------------------
CONFIGS: dict[str, dict[str, object]] = {
    "default": {},
    "bm25": {"use_dense_search": False, "use_keyword_search": True},
    "dense": {"use_hybrid_search": False},
    "rrf (k 60)": {"use_hybrid_search": True, "ensemble": "rrf"},
}


def run(seed: int, per_family: int, queries_per_family: int) -> int:
    from ragwright.options import EnsembleOptions, RetrievalOptions
    from ragwright.rag import Rag
    from ragwright.sources import JsonlSource
    from ragwright.stores.sqlite import SqliteStore

    records, queries = generate(seed, per_family, queries_per_family)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "records.jsonl"
        corpus.write_text("".join(json.dumps({"_id": r.id, "text": r.text}) + "\n" for r in records))
        started = time.perf_counter()
        with Rag(SqliteStore(Path(tmp) / "store.db")) as rag:
            rag.ingest(JsonlSource(corpus))
            print(
                f"{len(records)} records in {len(FAMILIES)} families, {len(queries)} queries "
                f"(seed {seed}); ingested in {time.perf_counter() - started:.1f} s"
            )
            print(f"{'config':16s} {'top-1':>8s} {'top-5':>8s}")
            failures: dict[str, list[str]] = {}
            for name, overrides in CONFIGS.items():
                opts: RetrievalOptions | None = None
                if overrides:
                    values = dict(overrides)
                    if values.get("ensemble") == "rrf":
                        values["ensemble"] = EnsembleOptions(method="rrf")
                    opts = RetrievalOptions(top_k=5, **values)  # type: ignore[arg-type]
                top1 = top5 = 0
                for q in queries:
                    results = rag.search(q.text, options=opts) if opts else rag.search(q.text, top_k=5)
                    ids = [r.chunk.document_id for r in results]
                    top1 += bool(ids) and ids[0] == q.answer
                    top5 += q.answer in ids[:5]
                    if not ids or ids[0] != q.answer:
                        failures.setdefault(name, []).append(f"{q.text!r} -> {ids[:3]} (want {q.answer})")
                n = len(queries)
                print(f"{name:16s} {top1 / n:8.1%} {top5 / n:8.1%}")
            for name, items in failures.items():
                print(f"\n{name}: {len(items)} queries without the right record first")
                for line in items[:12]:
                    print("  " + line)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--per-family", type=int, default=40)
    parser.add_argument("--queries-per-family", type=int, default=8)
    args = parser.parse_args(argv)
    return run(args.seed, args.per_family, args.queries_per_family)


if __name__ == "__main__":
    raise SystemExit(main())
