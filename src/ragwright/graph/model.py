"""Grounded graph data: every entity mention and relation points at the chunk and span it came from.

Nothing enters the graph without evidence: a :class:`Mention` is a character span of one chunk's
text, a :class:`Relation` names two mentions' keys and the span (usually the sentence) that states
it. Entity *keys* are normalised surface forms (:func:`entity_key`); resolution maps keys onto one
another (aliases) without ever crossing tenants.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol, runtime_checkable

#: Entity types the extractors emit (OntoNotes-style names, so a statistical NER maps onto them).
ENTITY_TYPES: Final = (
    "PERSON",
    "ORG",
    "GPE",
    "LOC",
    "DATE",
    "MONEY",
    "PERCENT",
    "QUANTITY",
    "PRODUCT",
    "EVENT",
    "MISC",
)

_SUFFIXES: Final = frozenset(
    {"inc", "ltd", "llc", "plc", "corp", "corporation", "co", "gmbh", "ag", "sa", "limited", "incorporated"}
)
_PUNCT = re.compile(r"[^\w\s&+]")


def entity_key(surface: str) -> str:
    """The normalised key of an entity name: NFKC, casefolded, punctuation and a leading article and
    trailing company suffixes dropped, whitespace collapsed (``"The Contoso Ltd."`` → ``"contoso"``)."""
    text = unicodedata.normalize("NFKC", surface).casefold().replace("’", "'")
    text = re.sub(r"'s\b", "", text)
    words = _PUNCT.sub(" ", text).split()
    if len(words) > 1 and words[0] in ("the", "a", "an"):
        words = words[1:]
    while len(words) > 1 and words[-1] in _SUFFIXES:
        words = words[:-1]
    return " ".join(words)


@dataclass(frozen=True, slots=True)
class Mention:
    """An entity as written in a chunk: ``chunk_text[start:end] == surface``."""

    chunk_id: str
    start: int
    end: int
    surface: str
    type: str
    key: str

    @classmethod
    def of(cls, chunk_id: str, text: str, start: int, end: int, type_: str) -> Mention:
        surface = text[start:end]
        return cls(chunk_id, start, end, surface, type_, entity_key(surface))


@dataclass(frozen=True, slots=True)
class Relation:
    """``source`` —type→ ``target`` (entity keys), stated by ``chunk_text[start:end]``."""

    chunk_id: str
    source: str
    target: str
    type: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Alias:
    """``alias`` (a key) names the same entity as ``key`` in this chunk (``European Central Bank (ECB)``)."""

    chunk_id: str
    alias: str
    key: str
    reason: str = "acronym"


@dataclass(frozen=True, slots=True)
class Extraction:
    """What one extractor found in one chunk."""

    chunk_id: str
    mentions: tuple[Mention, ...] = ()
    relations: tuple[Relation, ...] = ()
    aliases: tuple[Alias, ...] = ()

    def names(self, limit: int = 32) -> list[str]:
        """The distinct entity names (first surface of each key), for ``metadata["entities"]``."""
        seen: dict[str, str] = {}
        for m in self.mentions:
            if m.type not in ("DATE", "MONEY", "PERCENT", "QUANTITY"):
                seen.setdefault(m.key, m.surface)
        return list(seen.values())[:limit]


@dataclass(frozen=True, slots=True)
class ChunkText:
    """The part of a chunk an extractor reads."""

    id: str
    text: str
    section_path: tuple[str, ...] = field(default=())


@runtime_checkable
class Extractor(Protocol):
    """Finds grounded entities and relations in chunks. ``version`` is recorded per document, so a new
    extractor (or new settings) re-extracts exactly what it changes."""

    @property
    def version(self) -> str: ...

    def extract(self, chunks: Sequence[ChunkText]) -> list[Extraction]:
        """One :class:`Extraction` per chunk, in order; every span lies inside its chunk's text."""
        ...


def grounded(extraction: Extraction, text: str) -> Extraction:
    """Drop anything whose span is outside *text* or does not read what it claims (a model's invention)."""
    n = len(text)
    mentions = tuple(
        m for m in extraction.mentions if 0 <= m.start < m.end <= n and text[m.start : m.end] == m.surface and m.key
    )
    keys = {m.key for m in mentions}
    relations = tuple(
        r
        for r in extraction.relations
        if 0 <= r.start < r.end <= n and r.source in keys and r.target in keys and r.source != r.target
    )
    aliases = tuple(a for a in extraction.aliases if a.alias in keys and a.key in keys and a.alias != a.key)
    return Extraction(extraction.chunk_id, mentions, relations, aliases)
