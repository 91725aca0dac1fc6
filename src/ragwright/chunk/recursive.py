"""Recursive (boundary-aware) chunking: the largest boundary that fits.

A section (the text between two headings) that fits the budget is one chunk. Otherwise it is split
into its blocks (paragraphs, lists, tables, code), and every block that is still too large is split
at the next boundary down — lines, then sentences, then words, then characters (tables by row
groups with the header repeated, code by lines, lists by items). At each level the pieces that fit
are packed in order into chunks of even size (no tiny tail), and chunks under ``min_tokens`` are
merged into a neighbour when the result fits. This suits text whose structure is weak (long
paragraphs, transcripts, plain text), while the chunk output — ids, links, section paths, pages,
prefixes, overlap — is the same as the structural chunker's.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragwright.chunk.overlap import PROSE
from ragwright.chunk.split import Budget, Cost, add, sentences, split_chars, split_table
from ragwright.chunk.structural import BaseChunker, Section, Unit, join_units, merge_small, pack_units
from ragwright.model.document import ElementKind

VERSION = "recursive/2"


class RecursiveChunker(BaseChunker):
    """Split on the largest boundary that fits: section → block → line → sentence → word → character."""

    version = VERSION

    def _plan(self, section: Section, room: Cost, budget: Budget) -> list[list[Unit]]:
        if not section.blocks:
            return []
        if budget.fits(join_units(section.blocks), room):
            return [list(section.blocks)]
        prose_room = self._pack_room(section, room, budget)
        groups = self._recurse(section.blocks, room, prose_room, budget)
        return merge_small(groups, prose_room, budget, self.options.min_tokens)

    def _recurse(self, units: Sequence[Unit], room: Cost, prose_room: Cost, budget: Budget) -> list[list[Unit]]:
        """Runs of units that fit are packed evenly; a unit that does not fit is split one level down.

        Prose must fit *prose_room* (room left for overlap); tables, code and lists may fill *room*.
        """
        groups: list[list[Unit]] = []
        run: list[Unit] = []
        for unit in units:
            own = prose_room if unit.kind in PROSE else room
            if budget.fits(unit.text, own):
                run.append(unit)
                continue
            groups.extend(_balanced(run, prose_room, budget))
            run = []
            groups.extend(self._recurse(_finer(unit, own, budget), room, prose_room, budget))
        groups.extend(_balanced(run, prose_room, budget))
        return groups


def _finer(unit: Unit, room: Cost, budget: Budget) -> list[Unit]:
    """*unit* split at the next boundary down (each step strictly smaller, so recursion ends)."""
    text = unit.text

    def make(pieces: list[str], joiner: str) -> list[Unit]:
        return [Unit(p, unit.kind, unit.pages, unit.joiner if i == 0 else joiner) for i, p in enumerate(pieces)]

    if unit.kind is ElementKind.TABLE:
        return make(split_table(text, room, budget), "\n")
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) > 1:
        if unit.kind is not ElementKind.CODE:
            lines = [line.strip() for line in lines]
        return make(lines, "\n")
    if unit.kind is not ElementKind.CODE:
        parts = sentences(text)
        if len(parts) > 1:
            return make(parts, " ")
    words = text.split()
    if len(words) > 1:
        return make(words, " ")
    return make(split_chars(text.strip(), room, budget), "")


def _balanced(units: list[Unit], room: Cost, budget: Budget) -> list[list[Unit]]:
    """Pack units (each within *room*) into the fewest groups, of roughly even size."""
    if not units:
        return []
    greedy = pack_units(units, room, budget)
    n = len(greedy)
    if n <= 1:
        return greedy
    total = add(*(budget.cost(u.text) for u in units), *(budget.cost(u.joiner) for u in units[1:]))
    for stretch in (1.0, 1.05, 1.1, 1.2, 1.35):
        target = tuple(min(r, int(t / n * stretch) + 1) for r, t in zip(room, total, strict=True))
        even = pack_units(units, target, budget)
        if len(even) <= n:
            return even
    return greedy
