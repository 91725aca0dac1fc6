"""The fast default extractor: capitalisation statistics, patterns and a small gazetteer, no model.

Entities (spans of one chunk's text):

* runs of capitalised words, joined by ``of``/``the``/``and``/``de``/``&`` inside (``Bank of England``),
  a leading article left out; a single capitalised word that starts a sentence counts only when the
  chunk also writes it capitalised mid-sentence, or the gazetteer knows it (sentence-initial
  capitals are grammar, not names);
* acronyms and CamelCase words (``ECB``, ``GraphRAG``), with ``Long Name (LN)`` recorded as an alias;
* dates, money, percentages (patterns).

Types come from the span's words (``… Bank`` → ORG, ``Mr …``/a first name → PERSON, a gazetteer place
→ GPE, ``… River`` → LOC), else ``MISC``. Relations: two entities of one sentence with at most 80
characters between them are related, typed by the verb between them when one is there
(``founded``), else ``related_to``; the evidence span is the sentence.

Measured on two shared cores it runs at tens of thousands of characters a second — far below the
embedder's cost, so ingestion with the graph stays within the issue's 1.5× budget.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ragwright.graph.gazetteer import (
    EVENT_WORDS,
    FIRST_NAMES,
    GPE,
    LOC_WORDS,
    MONTHS,
    ORG_WORDS,
    PERSON_TITLES,
    RELATION_VERBS,
    STOP_WORDS,
)
from ragwright.graph.model import Alias, ChunkText, Extraction, Mention, Relation, entity_key

VERSION: Final = "rules/1"
_CAP = r"(?:[A-Z][\w'’\-]*\w|[A-Z]\.)"
_JOIN = r"(?:of|the|and|de|du|la|le|von|van|der|del|da|for|on|&)"
_NAME = re.compile(rf"{_CAP}(?:[ \t]+(?:{_JOIN}[ \t]+)?{_CAP})*")
_ACRONYM_DEF = re.compile(r"\(\s*([A-Z][A-Za-z0-9&]{1,9})\s*\)")
_DATE = re.compile(
    rf"\b(?:\d{{1,2}}\s+(?:{MONTHS})\.?,?\s+\d{{4}}|(?:{MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    rf"|(?:{MONTHS})\.?\s+\d{{4}}|\d{{4}}-\d{{2}}-\d{{2}}|(?:1[5-9]|20)\d{{2}}s?)\b"
)
_MONEY = re.compile(r"(?:[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:million|billion|trillion|[mbk]n?)\b)?)")
_PERCENT = re.compile(r"\b\d+(?:\.\d+)?\s?(?:%|percent\b)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n\s*\n|\n(?=\s*[#*\-•]|\s*\d+\.)")
_HEADING_LINE = re.compile(r"(?m)^#{1,6} [^\n]*(\n)")
_WORD = re.compile(r"[A-Za-z][\w'’\-]*")
_MAX_GAP = 80
_NOT_NODES: Final = frozenset({"DATE", "MONEY", "PERCENT", "QUANTITY"})  # values: metadata, not graph nodes
_AUX: Final = frozenset({"is", "was", "are", "were"})


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    cuts = sorted(
        [*(m.span() for m in _SENTENCE_END.finditer(text)), *(m.span(1) for m in _HEADING_LINE.finditer(text))]
    )
    for cut_start, cut_end in cuts:
        if cut_start < start:
            continue
        if cut_start > start:
            spans.append((start, cut_start))
        start = cut_end
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def _type_of(words: list[str]) -> str:
    lower = [w.casefold().rstrip(".") for w in words]
    if lower[-1] in ORG_WORDS or (len(lower) > 1 and lower[0] in ORG_WORDS and lower[1] == "of"):
        return "ORG"
    if lower[0] in PERSON_TITLES and len(lower) > 1:
        return "PERSON"
    if lower[-1] in LOC_WORDS or lower[0] in ("mount", "lake", "river"):
        return "LOC"
    if lower[-1] in EVENT_WORDS:
        return "EVENT"
    if all(w in GPE for w in lower):
        return "GPE"
    if lower[0] in FIRST_NAMES and 2 <= len(lower) <= 4:
        return "PERSON"
    if len(words) == 1 and words[0].isupper() and len(words[0]) >= 2:
        return "ORG"
    return "MISC"


class RuleExtractor:
    """See the module docstring. ``max_entities`` bounds what one chunk contributes."""

    def __init__(self, *, max_entities: int = 64, relations: bool = True) -> None:
        self.max_entities, self.relations = max_entities, relations

    @property
    def version(self) -> str:
        return f"{VERSION}:{self.max_entities}:{int(self.relations)}"

    def extract(self, chunks: Sequence[ChunkText]) -> list[Extraction]:
        return [self._one(c) for c in chunks]

    def _one(self, chunk: ChunkText) -> Extraction:
        text = chunk.text
        sentences = _sentences(text)
        starts = {s for s, _ in sentences}
        for s, _ in sentences:  # a heading/list marker before the first word still starts the sentence
            m = _WORD.search(text, s, min(len(text), s + 6))
            if m is not None:
                starts.add(m.start())
        mid_caps = {
            m.group(0)
            for m in re.finditer(r"(?<=[a-z,;:] )[A-Z][\w'’\-]*", text)
            if m.group(0).casefold() not in STOP_WORDS
        }
        spans: list[tuple[int, int, str]] = []
        taken = bytearray(len(text) + 1)

        def add(start: int, end: int, type_: str) -> None:
            if end <= start or any(taken[start:end]):
                return
            spans.append((start, end, type_))
            taken[start:end] = b"\x01" * (end - start)

        for pattern, type_ in ((_DATE, "DATE"), (_MONEY, "MONEY"), (_PERCENT, "PERCENT")):
            for m in pattern.finditer(text):
                add(m.start(), m.end(), type_)
        masked = "".join(" " if taken[i] else ch for i, ch in enumerate(text))  # names never span a date
        for m in _NAME.finditer(masked):
            start, end = m.start(), m.end()
            words = m.group(0).split()
            # trim function words and sentence-initial capitals at the edges
            while words and words[0].casefold().rstrip(".") in STOP_WORDS:
                start = text.index(words[1], start + len(words[0])) if len(words) > 1 else end
                words = words[1:]
            while words and words[-1].casefold().rstrip(".") in STOP_WORDS | {"of", "and", "&", "for", "on"}:
                words = words[:-1]
            if not words:
                continue
            end = start + len(" ".join(words)) if text[start:end].startswith(" ".join(words)) else end
            surface = text[start:end]
            if len(words) == 1:
                word = words[0].rstrip(".")
                lower = word.casefold()
                if len(word) < 2 or lower in STOP_WORDS or word.isdigit():
                    continue
                special = word.isupper() or any(c.isupper() for c in word[1:]) or lower in GPE
                if start in starts and not special and word not in mid_caps:
                    continue
            add(start, end, _type_of(surface.split()))
        spans.sort()
        spans = spans[: self.max_entities]
        mentions = tuple(Mention.of(chunk.id, text, s, e, t) for s, e, t in spans)
        aliases = self._aliases(chunk.id, text, mentions)
        relations = self._relations(chunk.id, text, mentions, sentences) if self.relations else ()
        return Extraction(chunk.id, mentions, relations, aliases)

    @staticmethod
    def _aliases(chunk_id: str, text: str, mentions: tuple[Mention, ...]) -> tuple[Alias, ...]:
        """``European Central Bank (ECB)``: the acronym in brackets right after a name whose initials it is."""
        out: list[Alias] = []
        by_end = {m.end: m for m in mentions}
        by_start = {m.start: m for m in mentions}
        for m in _ACRONYM_DEF.finditer(text):
            name = by_end.get(m.start() - 1) or by_end.get(m.start())
            acronym = by_start.get(m.start(1))
            if name is None or acronym is None or name.key == acronym.key:
                continue
            initials = "".join(w[0] for w in name.surface.split() if w[0].isupper())
            if initials.casefold() == entity_key(m.group(1)).replace(" ", "") or len(m.group(1)) <= len(initials):
                out.append(Alias(chunk_id, acronym.key, name.key))
        return tuple(out)

    @staticmethod
    def _relations(
        chunk_id: str, text: str, mentions: tuple[Mention, ...], sentences: list[tuple[int, int]]
    ) -> tuple[Relation, ...]:
        out: dict[tuple[str, str], Relation] = {}
        named = [m for m in mentions if m.type not in _NOT_NODES]
        for s, e in sentences:
            inside = [m for m in named if s <= m.start and m.end <= e]
            for i, a in enumerate(inside):
                for b in inside[i + 1 :]:
                    if b.start - a.end > _MAX_GAP or a.key == b.key:
                        continue
                    between = text[a.end : b.start].casefold()
                    verbs = [w for w in _WORD.findall(between) if w in RELATION_VERBS]
                    verb = next((w for w in verbs if w not in _AUX), verbs[0] if verbs else None)
                    pair = (a.key, b.key)
                    if pair not in out or (verb and out[pair].type == "related_to"):
                        out[pair] = Relation(chunk_id, a.key, b.key, verb or "related_to", s, e)
        return tuple(out.values())
