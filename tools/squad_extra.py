"""More labelled SQuAD 2.0 articles for the answerability model: where they come from and how they load.

``tools/answerability_data.json`` names, under ``extra``, two more public copies of SQuAD 2.0 data
(CC BY-SA 4.0), each small enough to fetch here, with a sha256 per file:

* ``explorer`` — the official SQuAD 2.0 explorer pages (rajpurkar/SQuAD-explorer, branch gh-pages,
  ``explore/v2.0/dev/<title>.html``): one page per dev article with every paragraph, every question and
  its ground-truth answers or ``<No Answer>``. They give labels to the 19 dev articles whose questions
  the CS224N copy ships without answers. Only the manifest's ``articles`` are read: the reserved, the
  held-out and the nine original training articles are never parsed from these pages.
* ``train_prefix`` — the first ten articles of the official ``train-v2.0.json`` as a 1.4 MB file
  (PhongNTDo/guide_train_MRC_transformers); two of them (``The_Legend_of_Zelda:_Twilight_Princess``,
  ``Spectre_(2015_film)``) carry unanswerable questions, the other eight only answerable ones.

Nothing here is kept in the repository: the files live under ``~/.cache/ragwright/squad-extra/`` (see
:func:`fetch_hint`), and every load checks the manifest's hash and that no title or paragraph of the
held-out or reserved articles is among them (:func:`check_disjoint`).
"""

from __future__ import annotations

import hashlib
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import squad_data

DEFAULT_DIR = Path.home() / ".cache" / "ragwright" / "squad-extra"


def spec() -> dict[str, Any]:
    extra: dict[str, Any] = squad_data.manifest()["extra"]
    return extra


def fetch_hint() -> str:
    s = spec()
    ex, tp = s["explorer"], s["train_prefix"]
    return (
        f"put the explorer pages of {ex['repository']}@{ex['commit'][:10]} ({ex['folder']}/<title>.html) in "
        f"DIR/explorer/ and {tp['repository']}@{tp['commit'][:10]}:{tp['path']} as DIR/{tp['file']}"
    )


def _check(path: Path, expected: str) -> bytes:
    if not path.exists():
        raise SystemExit(f"{path} is missing: {fetch_hint()}")
    raw = path.read_bytes()
    actual = hashlib.sha256(raw).hexdigest()
    if actual != expected:
        raise SystemExit(f"{path}: sha256 {actual} is not the manifest's {expected}")
    return raw


class _ExplorerPage(HTMLParser):
    """Paragraphs (``<pre>``), questions (``strong.question`` inside ``div.qa-wrap[data-id]``) and their
    answers (``span.answer``; ``span.no-answer`` marks an unanswerable question) of one explorer page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.paragraphs: list[dict[str, Any]] = []
        self._field: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        cls = a.get("class") or ""
        if tag == "h1" and a.get("id") == "title":
            self._begin("title")
        elif tag == "pre":
            self.paragraphs.append({"context": "", "qas": []})
            self._begin("context")
        elif tag == "div" and "qa-wrap" in cls.split():
            self.paragraphs[-1]["qas"].append({"id": a.get("data-id") or "", "answers": [], "impossible": False})
        elif tag == "strong" and cls == "question":
            self._begin("question")
        elif tag == "span" and cls == "answer":
            self._begin("answer")
        elif tag == "span" and cls == "no-answer":
            self.paragraphs[-1]["qas"][-1]["impossible"] = True

    def _begin(self, field: str) -> None:
        self._field, self._text = field, []

    def handle_data(self, data: str) -> None:
        if self._field is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._field is None or tag not in ("h1", "pre", "strong", "span"):
            return
        text, field = "".join(self._text), self._field
        self._field = None
        if field == "title":
            self.title = text.strip()
        elif field == "context":
            self.paragraphs[-1]["context"] = text
        elif field == "question":
            self.paragraphs[-1]["qas"][-1]["question"] = text
        else:
            self.paragraphs[-1]["qas"][-1]["answers"].append(text)


def parse_explorer(html: str, title: str) -> squad_data.Article:
    """One explorer page as an :class:`squad_data.Article` (ids are the official SQuAD ids)."""
    page = _ExplorerPage()
    page.feed(html)
    page.close()
    if page.title.replace(" ", "_") != title.replace(" ", "_"):
        raise SystemExit(f"explorer page for {title!r} is titled {page.title!r}")
    paragraphs, questions = [], []
    for para in page.paragraphs:
        context = " ".join(para["context"].split())
        paragraphs.append(context)
        for qa in para["qas"]:
            answers = tuple(dict.fromkeys(a.strip() for a in qa["answers"] if a.strip()))
            impossible = qa["impossible"] or not answers
            questions.append(squad_data.Qa(qa["id"], title, qa["question"].strip(), answers, impossible, context))
    return squad_data.Article(title, tuple(paragraphs), tuple(questions))


def load_explorer(folder: Path) -> list[squad_data.Article]:
    """The manifest's explorer articles (each page's sha256 checked; no other page is opened)."""
    ex = spec()["explorer"]
    out = []
    for title in ex["articles"]:
        if title in squad_data.RESERVED:
            raise SystemExit(f"the manifest lists a reserved article: {title}")
        raw = _check(folder / f"{title}.html", ex["sha256"][title])
        out.append(parse_explorer(raw.decode("utf-8"), title))
    return out


def load_train_prefix(path: Path) -> list[squad_data.Article]:
    """The first articles of SQuAD 2.0 train (sha256 checked), parsed like the dev file."""
    tp = spec()["train_prefix"]
    _check(path, tp["sha256"])
    return squad_data.load_squad(path, check=False)


def check_disjoint(extra: list[squad_data.Article], guarded: list[squad_data.Article]) -> None:
    """Fail if an extra article shares a title, a paragraph or a question id with a *guarded* one (the
    held-out and reserved articles). Paragraphs are compared by hash, so nothing is printed or read."""
    titles = {a.title for a in guarded} | squad_data.RESERVED | set(squad_data.manifest()["heldout_articles"])
    clash = sorted(a.title for a in extra if a.title in titles)
    if clash:
        raise SystemExit(f"extra data holds held-out or reserved articles: {clash}")

    def digest(text: str) -> str:
        return hashlib.sha256(" ".join(text.lower().split()).encode()).hexdigest()

    guarded_paras = {digest(p) for a in guarded for p in a.paragraphs}
    shared = sum(digest(p) in guarded_paras for a in extra for p in a.paragraphs)
    if shared:
        raise SystemExit(f"extra data shares {shared} paragraphs with held-out or reserved articles")


def load_extra(folder: Path, parts: tuple[str, ...]) -> list[squad_data.Article]:
    """The extra articles of *parts* (``explorer``, ``train_prefix``) from *folder*."""
    arts: list[squad_data.Article] = []
    if "explorer" in parts:
        arts += load_explorer(folder / "explorer")
    if "train_prefix" in parts:
        arts += load_train_prefix(folder / spec()["train_prefix"]["file"])
    return arts


def summary(arts: list[squad_data.Article]) -> str:
    n = sum(len(a.questions) for a in arts)
    neg = sum(q.unanswerable for a in arts for q in a.questions)
    return f"{len(arts)} articles, {n} questions ({neg} unanswerable)"


if __name__ == "__main__":  # a check of the downloaded files: python tools/squad_extra.py [DIR]
    import sys

    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DIR
    arts = load_extra(folder, ("explorer", "train_prefix"))
    print(json.dumps({a.title: [len(a.questions), sum(q.unanswerable for q in a.questions)] for a in arts}))
    print(summary(arts))
