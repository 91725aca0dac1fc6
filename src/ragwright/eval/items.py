"""RAG benchmark sets: a corpus manifest and question items, both JSONL.

``corpus.jsonl``: ``{"id", "path" (relative to the set's ``base`` folder), "tenant", "acl", "metadata"}``
``items.jsonl``: ``{"id", "question", "relevant": {doc_id: grade}, "key_facts": [...],
"reference_answer", "tags": [...], "unanswerable": bool, "identity": {"tenant", "groups"}}``
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragwright.errors import ConfigError
from ragwright.model.identity import DEFAULT_TENANT, Identity


@dataclass(frozen=True)
class CorpusDocument:
    id: str
    path: Path
    tenant: str = DEFAULT_TENANT
    acl: tuple[str, ...] = ("*",)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BenchmarkItem:
    id: str
    question: str
    relevant: dict[str, int] = field(default_factory=dict)
    key_facts: tuple[str, ...] = ()
    reference_answer: str | None = None
    tags: tuple[str, ...] = ()
    unanswerable: bool = False
    identity: Identity = field(default_factory=Identity)


@dataclass(frozen=True)
class RagBenchmark:
    root: Path
    documents: tuple[CorpusDocument, ...]
    items: tuple[BenchmarkItem, ...]


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as exc:
                raise ConfigError(f"{path}:{n}: not valid JSON ({exc})") from exc
            if not isinstance(rec, dict):
                raise ConfigError(f"{path}:{n}: each line must be a JSON object")
            out.append((n, rec))
    return out


def load_rag_benchmark(root: str | Path, *, base: str | Path | None = None) -> RagBenchmark:
    """Load a set from *root*; document paths resolve against *base* (default: ``../shared`` of the repo,
    else *root*)."""
    root = Path(root)
    for name in ("corpus.jsonl", "items.jsonl"):
        if not (root / name).is_file():
            raise ConfigError(f"{root} is not a RAG benchmark set: {name} is missing")
    base_dir = Path(base) if base is not None else root
    docs = []
    for n, rec in _lines(root / "corpus.jsonl"):
        try:
            docs.append(
                CorpusDocument(
                    id=str(rec["id"]),
                    path=base_dir / str(rec["path"]),
                    tenant=str(rec.get("tenant", DEFAULT_TENANT)),
                    acl=tuple(rec.get("acl", ["*"])),
                    metadata=dict(rec.get("metadata", {})),
                )
            )
        except KeyError as exc:
            raise ConfigError(f"{root / 'corpus.jsonl'}:{n}: missing field {exc}") from exc
    known = {d.id for d in docs}
    items = []
    for n, rec in _lines(root / "items.jsonl"):
        try:
            ident = rec.get("identity") or {}
            item = BenchmarkItem(
                id=str(rec["id"]),
                question=str(rec["question"]),
                relevant={str(k): int(v) for k, v in (rec.get("relevant") or {}).items()},
                key_facts=tuple(rec.get("key_facts") or ()),
                reference_answer=rec.get("reference_answer"),
                tags=tuple(rec.get("tags") or ()),
                unanswerable=bool(rec.get("unanswerable", False)),
                identity=Identity(str(ident.get("tenant", DEFAULT_TENANT)), tuple(ident.get("groups", ()))),
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise ConfigError(f"{root / 'items.jsonl'}:{n}: invalid item ({exc})") from exc
        unknown = set(item.relevant) - known
        if unknown:
            raise ConfigError(f"{root / 'items.jsonl'}:{n}: relevant documents not in the corpus: {sorted(unknown)}")
        items.append(item)
    return RagBenchmark(root, tuple(docs), tuple(items))
