"""Opposites: a question term whose opposite the evidence writes ("imports" asked, "exports" written).

SQuAD's unanswerable questions are often the paragraph's own sentence with one word turned into its
opposite; :func:`contradicting_swaps` finds such a word in a question and its best evidence unit (the
answerability model's ``antonym_swap`` feature).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Final

from ragwright.generate.question import all_stems, content_stems, stem, words

_ANTONYM_PAIRS: Final = (
    "increase decrease|import export|before after|first last|most least|largest smallest|biggest smallest|"
    "highest lowest|higher lower|more less|more fewer|rise fall|rose fell|win lose|won lost|victory defeat|"
    "north south|east west|northern southern|eastern western|early late|earlier later|earliest latest|"
    "positive negative|open close|opened closed|begin end|began ended|start end|started ended|accept reject|"
    "allow forbid|allow prohibit|legal illegal|public private|major minor|maximum minimum|internal external|"
    "inner outer|old new|older newer|young old|strong weak|success failure|succeed fail|true false|"
    "permanent temporary|upper lower|above below|inside outside|entry exit|gain loss|add remove|"
    "include exclude|support oppose|friend enemy|ally enemy|buy sell|bought sold|give take|gave took|"
    "send receive|sent received|attack defend|birth death|born died|male female|man woman|men women|"
    "father mother|son daughter|king queen|rich poor|wealthy poor|cheap expensive|easy difficult|"
    "same different|similar different|common rare|frequent rare|rural urban|ancient modern|past future|"
    "domestic foreign|national international|light heavy|light dark|hot cold|wet dry|fast slow|long short|"
    "wide narrow|deep shallow|high low|large small|big small|many few|always never|all none|lead follow|"
    "leader follower|employer employee|teacher student|primary secondary|direct indirect|active passive|"
    "official unofficial|formal informal|cause effect|input output|old current|former current|"
    "previous current|previous next|below above|under over|after before"
)


@functools.cache
def antonyms() -> dict[str, frozenset[str]]:
    """Stem → the stems of its opposites (a small hand list of common English pairs)."""
    out: dict[str, set[str]] = {}
    for pair in _ANTONYM_PAIRS.split("|"):
        a, b = (stem(w) for w in pair.split())
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return {k: frozenset(v) for k, v in out.items()}


def swapped_terms(question_terms: Iterable[str], evidence: frozenset[str]) -> list[str]:
    """Question terms missing from *evidence* whose opposite is there ("imports" asked, "exports"
    written), or that are a negated form of a word there ("non-imperialism", "imperialism")."""
    table = antonyms()
    out = []
    for t in question_terms:
        if t in evidence:
            continue
        base = (
            t[4:]
            if t.startswith("non-")
            else t[3:]
            if t.startswith(("non", "dis"))
            else t[2:]
            if t.startswith(("un", "in", "im", "il", "ir"))
            else None
        )
        if table.get(t, frozenset()) & evidence or (base and len(base) > 3 and base in evidence):
            out.append(t)
    return out


#: Opposites that relate something to an object ("before the siege", "above the dam"): "before raising X"
#: asked and "after 5 seconds" written speak of different things and contradict nothing.
_RELATIONS: Final = ("before", "after", "above", "below", "inside", "outside")


def contradicting_swaps(question: str, evidence: str) -> list[str]:
    """:func:`swapped_terms` of *question* in *evidence*, less a relation word (before/after, above/below …)
    whose object differs on the two sides ("before raising a TimeoutException" / "after 5 seconds"); with
    the same object ("before the siege" / "after the siege"), or no content word after it on one side
    ("immediately before what?"), the swap stands."""
    swaps = swapped_terms(all_stems(question), all_stems(evidence))
    relations = {stem(w) for w in _RELATIONS}
    return [t for t in swaps if t not in relations or _same_object(t, question, evidence)]


def _objects(text: str, relation_stems: frozenset[str]) -> set[str]:
    """The first two content stems after each relation word of *text* (its object: "the siege of Paris")."""
    ws = words(text)
    out: set[str] = set()
    for i, w in enumerate(ws):
        if stem(w) in relation_stems:
            out.update(content_stems(" ".join(ws[i + 1 : i + 5]))[:2])
    return out


def _same_object(term: str, question: str, evidence: str) -> bool:
    asked = _objects(question, frozenset({term}))
    written = _objects(evidence, antonyms().get(term, frozenset()))
    return not asked or not written or bool(asked & written)
