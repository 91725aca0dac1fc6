"""The default chunker: structure-aware, within a token budget the embedder can hold.

A heading starts a new chunk; the section path ("A > B") is carried on the chunk and prefixed to
the text that is embedded (the displayed text stays the chunk alone). Tables, code blocks and lists
are never split mid-structure unless one alone exceeds the budget — then tables split by row groups
with the header repeated, code by lines, lists between items, prose by sentences. Chunks are linked
prev/next and carry ``page``/``page_end`` and heading metadata.

Every chunk (with its prefix and overlap) satisfies two limits: ``cl100k_base`` tokens
≤ ``ChunkingOptions.max_tokens`` and the embedder's own tokens ≤ its window.

:class:`BaseChunker` holds what every chunker shares — sections, units, packing, prefixes,
overlap, links — and the recursive and semantic chunkers only plan how a section's units group.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Self

from ragwright.chunk import overlap, tokens
from ragwright.chunk.options import ChunkingOptions
from ragwright.chunk.split import (
    Budget,
    Cost,
    TokenCounter,
    add,
    pack,
    split_code,
    split_prose,
    split_table,
    within,
)
from ragwright.model.chunk import Chunk
from ragwright.model.document import Document, ElementKind
from ragwright.model.ids import canonical_json, sha256_text

if TYPE_CHECKING:
    from ragwright.models.embedders.base import Embedder

VERSION = "structural/4"
_SKIPPED = (ElementKind.HEADER, ElementKind.FOOTER, ElementKind.IMAGE)
#: Options of the stages after chunking (enrichment, late chunking): fingerprinted by those stages
#: (:mod:`ragwright.chunk.compose`), not here, so a store chunked before they existed stays current.
STAGE_FIELDS = frozenset({"context", "context_tokens", "late_chunking", "late_overlap_tokens", "propositions"})
#: Separator inside a unit of each kind when it has to be split (and between list items).
INNER = {ElementKind.TABLE: "\n", ElementKind.CODE: "\n", ElementKind.LIST_ITEM: "\n"}


@dataclass(frozen=True, slots=True)
class Unit:
    """A piece of a section that is never split further by packing.

    ``joiner`` separates it from the unit before it when both land in one chunk ("\\n\\n" between
    elements, " " between sentences of one paragraph, "\\n" between rows or lines). ``records``: a
    paragraph of one record a line (a spreadsheet's rows, element attribute ``records``), split
    between its lines, never inside one that fits.
    """

    text: str
    kind: ElementKind
    pages: tuple[int, ...] = ()
    joiner: str = "\n\n"
    records: bool = False


@dataclass
class Section:
    """The content between two headings: its path, its heading level and its block units."""

    path: tuple[str, ...]
    level: int | None
    blocks: list[Unit] = field(default_factory=list)


def join_units(units: Sequence[Unit]) -> str:
    """The text of units placed in one chunk."""
    return units[0].text + "".join(u.joiner + u.text for u in units[1:]) if units else ""


def sections(document: Document) -> list[Section]:
    """Split a document at headings; consecutive list items become one list block."""
    path: list[tuple[int, str]] = []
    headings: list[str] = []
    out: list[Section] = []
    current: Section | None = None
    for element in document.elements:
        if element.kind in _SKIPPED or not element.text.strip():
            continue
        if element.kind in (ElementKind.HEADING, ElementKind.TITLE):
            level = 0 if element.kind is ElementKind.TITLE else (element.level or 1)
            while path and path[-1][0] >= level:
                path.pop()
            title = " ".join(element.text.split())
            path.append((level, title))
            headings.append(title)
            current = None
            continue
        if current is None:
            current = Section(tuple(t for _, t in path), path[-1][0] if path else None)
            out.append(current)
        text = element.text.strip()
        pages = (element.page,) if element.page is not None else ()
        last = current.blocks[-1] if current.blocks else None
        if element.kind is ElementKind.LIST_ITEM and last is not None and last.kind is ElementKind.LIST_ITEM:
            current.blocks[-1] = replace(last, text=f"{last.text}\n{text}", pages=last.pages + pages)
        else:
            current.blocks.append(Unit(text, element.kind, pages, records=bool(element.attributes.get("records"))))
    if not out and headings:  # a document of headings only: keep them searchable
        out.append(Section((), None, [Unit("\n".join(headings), ElementKind.PARAGRAPH)]))
    return out


#: A paragraph of at most this many words just before a table is its lead-in (a title, a caption,
#: "Here are the results:"), repeated over the table's row groups.
LEAD_IN_WORDS = 25


def lead_in(blocks: Sequence[Unit], i: int) -> str | None:
    """The lead-in of the table *blocks[i]*: the one-line paragraph just before it, if short."""
    if i == 0 or blocks[i].kind is not ElementKind.TABLE:
        return None
    before = blocks[i - 1]
    if before.kind is not ElementKind.PARAGRAPH or "\n" in before.text or len(before.text.split()) > LEAD_IN_WORDS:
        return None
    return before.text


def split_unit(unit: Unit, room: Cost, budget: Budget, lead: str | None = None) -> list[Unit]:
    """A unit as is when it fits *room*, else its pieces split along its own structure.

    A table split into row groups repeats its header in each; with a *lead* (:func:`lead_in`), the
    groups after the first also open with it, so a row read in a later chunk still says what table it
    belongs to ("NICS Firearm Background Checks November - 2015" over the Alabama row). The first group
    follows the lead-in itself (:func:`~ragwright.chunk.split.split_table`)."""
    if budget.fits(unit.text, room):
        return [unit]
    if unit.kind is ElementKind.TABLE:
        pieces = split_table(unit.text, room, budget, lead)
    elif unit.kind is ElementKind.CODE:
        pieces = split_code(unit.text, room, budget)
    elif unit.kind is ElementKind.LIST_ITEM or unit.records:
        pieces = pack(unit.text.split("\n"), room, budget, joiner="\n")
    else:
        pieces = split_prose(unit.text, room, budget)
    inner = "\n" if unit.records else INNER.get(unit.kind, " ")
    return [
        Unit(p, unit.kind, unit.pages, unit.joiner if i == 0 else inner, unit.records) for i, p in enumerate(pieces)
    ]


def estimate(units: Sequence[Unit], budget: Budget) -> Cost:
    """Counts of units joined into one chunk, from their cached counts (an upper bound in practice;
    the chunk text is counted exactly when it is finished)."""
    if not units:
        return tuple(0 for _ in budget.limits)
    return add(*(budget.cost(u.text) for u in units), *(budget.cost(u.joiner) for u in units[1:]))


def pack_units(
    units: Sequence[Unit],
    room: Cost,
    budget: Budget,
    *,
    breaks: frozenset[int] = frozenset(),
    min_tokens: int = 0,
) -> list[list[Unit]]:
    """Greedy packing of units (each already within *room*) into groups that fit *room*.

    A group also ends before unit ``i`` when ``i`` is in *breaks* and the group has at least
    *min_tokens* cl100k tokens. Sizes are estimated from the units' counts; finishing a chunk counts
    it exactly and repairs the rare group the estimate overfilled (:func:`repair`).
    """
    groups: list[list[Unit]] = []
    current: list[Unit] = []
    used: Cost = tuple(0 for _ in room)
    for i, unit in enumerate(units):
        cost = budget.cost(unit.text)
        step = add(used, budget.cost(unit.joiner), cost) if current else cost
        topic = i in breaks and bool(current) and used[0] >= min_tokens
        if current and (topic or not within(step, room)):
            groups.append(current)
            current, step = [], cost
        current.append(unit)
        used = step
    if current:
        groups.append(current)
    return groups


def repair(group: list[Unit], room: Cost, budget: Budget) -> list[list[Unit]]:
    """Check a group exactly; units that do not fit are moved (in order) into groups after it."""
    tail: list[list[Unit]] = []
    while len(group) > 1 and not budget.fits(join_units(group), room):
        tail.insert(0, [group[-1]])
        group = group[:-1]
    return [group, *tail]


def merge_small(
    groups: list[list[Unit]],
    room: Cost,
    budget: Budget,
    min_tokens: int,
    gaps: Sequence[float] | None = None,
) -> list[list[Unit]]:
    """Merge groups under *min_tokens* cl100k tokens into a neighbour when the result fits *room*.

    ``gaps[i]`` is how different unit ``i + 1`` is from unit ``i`` (a semantic distance); a small
    group joins the neighbour across the smaller gap, else the previous one.
    """
    if min_tokens <= 0 or len(groups) < 2:
        return groups
    groups = [list(g) for g in groups]
    starts: list[int] = []
    offset = 0
    for g in groups:
        starts.append(offset)
        offset += len(g)

    def gap(k: int) -> float:  # between groups k-1 and k
        return gaps[starts[k] - 1] if gaps is not None else 0.0

    i = 0
    while i < len(groups) and len(groups) > 1:
        if estimate(groups[i], budget)[0] >= min_tokens:
            i += 1
            continue
        options: list[tuple[float, int]] = []
        if i > 0 and within(estimate(groups[i - 1] + groups[i], budget), room):
            options.append((gap(i), i - 1))
        if i + 1 < len(groups) and within(estimate(groups[i] + groups[i + 1], budget), room):
            options.append((gap(i + 1) + (0.0 if gaps is not None else 1.0), i))
        if not options:
            i += 1
            continue
        _, k = min(options)
        groups[k : k + 2] = [groups[k] + groups[k + 1]]
        del starts[k + 1]
        i = k
    return groups


@dataclass
class _Draft:
    text: str
    embed_text: str | None
    section: Section
    pages: tuple[int, ...]
    overlap_chars: int


class BaseChunker:
    """Sections, units, bounds, prefixes, overlap and links; subclasses decide how units group."""

    version = "base/0"

    def __init__(self, count_tokens: TokenCounter, window: int, options: ChunkingOptions | None = None) -> None:
        self.options = options or ChunkingOptions()
        self.count: TokenCounter = count_tokens
        self.window = window
        self.budget = Budget([tokens.count_tokens, count_tokens], [self.options.max_tokens, window])

    @classmethod
    def for_embedder(cls, embedder: Embedder, options: ChunkingOptions | None = None) -> Self:
        """A chunker counting in *embedder*'s tokens and bounded by its window."""
        return cls(embedder.count_tokens, embedder.max_tokens, options)

    @property
    def fingerprint(self) -> str:
        """``version`` plus a digest of everything else that changes the output (options, window):
        what a registry should record so that changing a chunking option re-chunks documents."""
        options = {k: v for k, v in dataclasses.asdict(self.options).items() if k not in STAGE_FIELDS}
        settings = {"options": options, "limits": list(self.budget.limits)}
        return f"{self.version}+{sha256_text(canonical_json(settings))[:12]}"

    def chunk(self, document: Document) -> list[Chunk]:
        """Chunk *document* into linked chunks within the budget."""
        budget = self.budget.fresh()
        drafts: list[_Draft] = []
        for section, groups in self._plan_document(sections(document), budget):
            drafts.extend(self._finish(section, groups, budget))
        return self._link(document, drafts)

    # -- planning (subclasses override _plan or _plan_document) ------------------------------------
    def _plan_document(self, parts: list[Section], budget: Budget) -> list[tuple[Section, list[list[Unit]]]]:
        return [(s, self._plan(s, self._room(s, budget), budget)) for s in parts]

    def _plan(self, section: Section, room: Cost, budget: Budget) -> list[list[Unit]]:
        raise NotImplementedError

    def _room(self, section: Section, budget: Budget) -> Cost:
        """Room for a chunk body once the section prefix is paid for."""
        if self.options.prefix_section_path and section.path:
            return budget.room_after(" > ".join(section.path))
        return budget.limits

    def _pack_room(self, section: Section, room: Cost, budget: Budget) -> Cost:
        """*room* less what the overlap usually needs: prose is packed into this, so the next chunk has
        space for the overlap; tables, code and lists may still fill *room* (then without overlap)."""
        keep = overlap.reserve(self.options, budget, [b.text for b in section.blocks if b.kind in overlap.PROSE])
        return tuple(max(r - k, lim // 4, 1) for r, k, lim in zip(room, keep, budget.limits, strict=True))

    def _units(self, section: Section, room: Cost, budget: Budget) -> list[Unit]:
        """The section's blocks, each split along its structure when larger than its room."""
        prose_room = self._pack_room(section, room, budget)
        blocks = section.blocks
        return [
            piece
            for i, block in enumerate(blocks)
            for piece in split_unit(
                block, prose_room if block.kind in overlap.PROSE else room, budget, lead_in(blocks, i)
            )
        ]

    # -- finishing ---------------------------------------------------------------------------------
    def _finish(self, section: Section, groups: list[list[Unit]], budget: Budget) -> list[_Draft]:
        out: list[_Draft] = []
        prefixes: list[str | None] = [None]
        if self.options.prefix_section_path and section.path:
            prefixes = [*dict.fromkeys([" > ".join(section.path), section.path[-1]]), None]
        full, room = prefixes[0], self._room(section, budget)
        checked: list[list[Unit]] = []
        for group in groups:  # usually the one exact count per chunk: the body with its full prefix
            body = join_units(group)
            prefixed = f"{full}\n\n{body}" if full else body
            if len(group) > 1 and not budget.fits(prefixed) and not budget.fits(body, room):
                checked.extend(repair(group, room, budget))
            else:
                checked.append(group)
        groups = checked
        for i, group in enumerate(groups):
            body = join_units(group)
            prefix = next((p for p in prefixes if p is None or budget.fits(f"{p}\n\n{body}")), None)
            text, shared = body, 0
            if i > 0:
                for candidate in overlap.candidates(groups[i - 1], self.options, budget):
                    joined = f"{candidate}{group[0].joiner}{body}"
                    if budget.fits(f"{prefix}\n\n{joined}" if prefix else joined):
                        text, shared = joined, len(candidate) + len(group[0].joiner)
                        break
            pages = tuple(sorted({p for u in group for p in u.pages}))
            embed = f"{prefix}\n\n{text}" if prefix else None
            out.append(_Draft(text, embed, section, pages, shared))
        return out

    def _link(self, document: Document, drafts: list[_Draft]) -> list[Chunk]:
        chunks: list[Chunk] = []
        for position, d in enumerate(drafts):
            page = d.pages[0] if d.pages else None
            page_end = d.pages[-1] if d.pages else None
            metadata: dict[str, object] = {}
            if d.section.path:
                metadata["heading"] = d.section.path[-1]
                metadata["heading_breadcrumb"] = " > ".join(d.section.path)
                if d.section.level is not None:
                    metadata["heading_level"] = d.section.level
            if page is not None:
                metadata["page"] = page
                metadata["page_end"] = page_end
            if self.options.overlap != "none":
                metadata["overlap_chars"] = d.overlap_chars
            chunks.append(
                Chunk.create(
                    document.id,
                    d.text,
                    position,
                    section_path=d.section.path,
                    page=page,
                    page_end=page_end,
                    metadata=metadata,
                    embed_text=d.embed_text,
                )
            )
        return [
            replace(
                c,
                prev_id=chunks[i - 1].id if i > 0 else None,
                next_id=chunks[i + 1].id if i + 1 < len(chunks) else None,
            )
            for i, c in enumerate(chunks)
        ]


class StructuralChunker(BaseChunker):
    """Chunk a :class:`Document` by its structure.

    ``count_tokens`` and ``window`` come from the embedder, so a chunk (with its prefix) never exceeds
    what the embedder reads; ``options.max_tokens`` bounds it in ``cl100k_base`` tokens as well.
    Elements are packed whole while they fit; an element too large alone is split along its own
    structure into pieces that fill a chunk each.
    """

    version = VERSION

    def _plan(self, section: Section, room: Cost, budget: Budget) -> list[list[Unit]]:
        return pack_units(self._units(section, room, budget), self._pack_room(section, room, budget), budget)
