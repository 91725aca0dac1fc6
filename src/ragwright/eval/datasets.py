"""BEIR-layout datasets: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv`` (graded)."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from ragwright.errors import ConfigError

Qrels = dict[str, dict[str, int]]


@dataclass(frozen=True)
class BeirDataset:
    """Queries and graded judgments of one split; the corpus is read by ingestion (JsonlSource)."""

    root: Path
    split: str
    queries: dict[str, str]
    qrels: Qrels

    @property
    def corpus_path(self) -> Path:
        return self.root / "corpus.jsonl"

    @property
    def judged_queries(self) -> dict[str, str]:
        """The queries that have judgments in this split, in file order."""
        return {qid: text for qid, text in self.queries.items() if qid in self.qrels}


def load_qrels(path: Path) -> Qrels:
    qrels: Qrels = {}
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh, delimiter="\t")
        for row in reader:
            if not row or row[0] == "query-id":
                continue
            if len(row) < 3:
                raise ConfigError(f"{path}: line {reader.line_num} needs query-id, corpus-id and score")
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    return qrels


def load_beir(root: str | Path, split: str = "test") -> BeirDataset:
    root = Path(root)
    for required in ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"):
        if not (root / required).is_file():
            raise ConfigError(f"{root} is not a BEIR dataset: {required} is missing")
    queries: dict[str, str] = {}
    with (root / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                queries[str(rec["_id"])] = str(rec["text"])
    return BeirDataset(root, split, queries, load_qrels(root / "qrels" / f"{split}.tsv"))
