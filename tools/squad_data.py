"""SQuAD 2.0 articles as a RAG corpus: load, split by article, ingest, and write QA records.

Shared by ``tools/train_answerability.py`` (training) and ``benchmarks/qa_squad.py`` (the held-out
evaluation). The data itself stays out of the repository: ``tools/answerability_data.json`` names
where it comes from (repository, commit, path, sha256) and :func:`load_squad` checks the hash.

Three SQuAD 2.0 dev articles are reserved for acceptance ("Normans", "Rhine",
"Computational_complexity_theory"): :func:`articles` drops them unless ``reserved=True`` is asked
for explicitly (the one final check), so nothing trains, tunes or tests on them by accident.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST = Path(__file__).with_name("answerability_data.json")
RESERVED = frozenset({"Normans", "Rhine", "Computational_complexity_theory"})


@dataclass(frozen=True)
class Qa:
    id: str
    article: str
    question: str
    answers: tuple[str, ...]
    unanswerable: bool
    context: str


@dataclass(frozen=True)
class Article:
    title: str
    paragraphs: tuple[str, ...]
    questions: tuple[Qa, ...]


def manifest() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(MANIFEST.read_text(encoding="utf-8"))
    return data


def load_squad(path: Path, *, check: bool = True) -> list[Article]:
    """Every article of a SQuAD 2.0 JSON file (its sha256 checked against the manifest)."""
    raw = path.read_bytes()
    if check:
        expected = manifest()["sha256"]
        actual = hashlib.sha256(raw).hexdigest()
        if actual != expected:
            raise SystemExit(f"{path}: sha256 {actual} is not the manifest's {expected}")
    out = []
    for art in json.loads(raw)["data"]:
        paragraphs, questions = [], []
        for para in art["paragraphs"]:
            context = " ".join(para["context"].split())
            paragraphs.append(context)
            for qa in para["qas"]:
                answers = tuple(dict.fromkeys(a["text"] for a in qa.get("answers", []) if a["text"].strip()))
                impossible = bool(qa.get("is_impossible", not answers))
                questions.append(Qa(qa["id"], art["title"], qa["question"].strip(), answers, impossible, context))
        out.append(Article(art["title"], tuple(paragraphs), tuple(questions)))
    return out


def load_offcorpus(path: Path, *, sample: int | None = None, seed: int = 7) -> list[Qa]:
    """Questions of the manifest's unlabelled file (other articles), as off-corpus questions (label:
    unanswerable for a store without their articles); the reserved articles are dropped."""
    spec = manifest()["offcorpus"]
    raw = path.read_bytes()
    actual = hashlib.sha256(raw).hexdigest()
    if actual != spec["sha256"]:
        raise SystemExit(f"{path}: sha256 {actual} is not the manifest's {spec['sha256']}")
    out = []
    for art in json.loads(raw)["data"]:
        if art["title"] in RESERVED:
            continue
        for para in art["paragraphs"]:
            for qa in para["qas"]:
                out.append(Qa(qa["id"], "off:" + art["title"], qa["question"].strip(), (), True, ""))
    n = sample if sample is not None else int(spec["sample"])
    return random.Random(seed).sample(out, min(n, len(out)))


def articles(data: list[Article], *, reserved: bool = False) -> list[Article]:
    """The usable articles: the reserved three are dropped unless *reserved* (then only they are kept)."""
    if reserved:
        return [a for a in data if a.title in RESERVED]
    return [a for a in data if a.title not in RESERVED]


def split(data: list[Article]) -> tuple[list[Article], list[Article]]:
    """(train, held-out) by article, as fixed in the manifest (``heldout_articles``)."""
    heldout = set(manifest()["heldout_articles"])
    usable = articles(data)
    return [a for a in usable if a.title not in heldout], [a for a in usable if a.title in heldout]


def document(article: Article) -> str:
    """An article as a Markdown document: its title as the heading, one paragraph per block."""
    return f"# {article.title.replace('_', ' ')}\n\n" + "\n\n".join(article.paragraphs) + "\n"


def write_corpus(arts: list[Article], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for art in arts:
        (folder / f"{art.title}.md").write_text(document(art), encoding="utf-8")


def balanced_sample(arts: list[Article], per_class: int | None, seed: int = 13) -> list[Qa]:
    """Half answerable, half unanswerable (*per_class* each, or as many as the smaller class has)."""
    pos = [q for a in arts for q in a.questions if not q.unanswerable]
    neg = [q for a in arts for q in a.questions if q.unanswerable]
    n = min(len(pos), len(neg)) if per_class is None else min(per_class, len(pos), len(neg))
    rng = random.Random(seed)
    chosen = rng.sample(pos, n) + rng.sample(neg, n)
    rng.shuffle(chosen)
    return chosen


def write_qa(questions: list[Qa], path: Path) -> None:
    """QA records for ``ragwright eval``: ``{id, question, answers, unanswerable}``."""
    with path.open("w", encoding="utf-8") as fh:
        for q in questions:
            rec = {"id": q.id, "question": q.question, "answers": list(q.answers), "unanswerable": q.unanswerable}
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def open_store(arts: list[Article], work: Path, name: str) -> Any:
    """A ``Rag`` over *arts* in ``work/name.db`` with the defaults (ingested once, reused after)."""
    from ragwright.models.embedders import default_embedder
    from ragwright.rag import Rag
    from ragwright.sources import FolderSource
    from ragwright.stores.sqlite import SqliteStore

    folder = work / name
    write_corpus(arts, folder)
    rag = Rag(SqliteStore(work / f"{name}.db"), default_embedder())
    rag.ingest(FolderSource(folder, include=("*.md",)))
    return rag
