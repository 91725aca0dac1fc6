"""The default chunker: structure-aware, within a token budget the embedder can hold.

A heading starts a new chunk; the section path ("A > B") is carried on the chunk and prefixed to
the text that is embedded (the displayed text stays the chunk alone). Tables, code blocks and lists
are never split mid-structure unless one alone exceeds the budget — then tables split by row groups
with the header repeated, code by lines, prose by sentences. Chunks are linked prev/next and carry
``page``/``page_end`` and heading metadata.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ragwright.chunk.split import TokenCounter, pack, sentences, split_code, split_table
from ragwright.model.chunk import Chunk
from ragwright.model.document import Document, Element, ElementKind
from ragwright.options import ChunkingOptions

VERSION = "structural/1"
_SKIPPED = (ElementKind.HEADER, ElementKind.FOOTER, ElementKind.IMAGE)


@dataclass
class _Buffer:
    parts: list[str] = field(default_factory=list)
    tokens: int = 0
    pages: list[int] = field(default_factory=list)


class StructuralChunker:
    """Chunk a :class:`Document` by its structure.

    ``count_tokens`` and ``window`` come from the embedder, so a chunk (with its prefix) never exceeds
    what the embedder reads: the budget is ``min(options.max_tokens, window)``.
    """

    version = VERSION

    def __init__(
        self,
        count_tokens: TokenCounter,
        window: int,
        options: ChunkingOptions | None = None,
    ) -> None:
        self.options = options or ChunkingOptions()
        self.count: Callable[[str], int] = count_tokens
        self.budget = min(self.options.max_tokens, window)

    def chunk(self, document: Document) -> list[Chunk]:
        path: list[tuple[int, str]] = []
        texts: list[tuple[str, tuple[str, ...], list[int], int | None]] = []
        buf = _Buffer()

        def section() -> tuple[str, ...]:
            return tuple(t for _, t in path)

        def flush() -> None:
            if buf.parts:
                level = path[-1][0] if path else None
                texts.append(("\n\n".join(buf.parts), section(), list(buf.pages), level))
            buf.parts, buf.tokens, buf.pages = [], 0, []

        for element in document.elements:
            if element.kind in _SKIPPED or not element.text.strip():
                continue
            if element.kind in (ElementKind.HEADING, ElementKind.TITLE):
                flush()
                level = 0 if element.kind is ElementKind.TITLE else (element.level or 1)
                while path and path[-1][0] >= level:
                    path.pop()
                path.append((level, " ".join(element.text.split())))
                continue
            room = self._room(section())
            for piece in self._pieces(element, room):
                n = self.count(piece)
                if buf.parts and buf.tokens + n + 2 > room:
                    flush()
                buf.parts.append(piece)
                buf.tokens += n + 2
                if element.page is not None:
                    buf.pages.append(element.page)
        flush()
        if not texts and path:  # a document of headings only: keep them searchable
            texts.append(("\n".join(t for _, t in path), (), [], None))
        return self._link(document, texts)

    def _room(self, section_path: tuple[str, ...]) -> int:
        """Budget left for the chunk body once the section prefix is paid for."""
        if not self.options.prefix_section_path or not section_path:
            return self.budget
        prefix_tokens = self.count(" > ".join(section_path)) + 2
        return max(self.budget // 2, self.budget - prefix_tokens)

    def _pieces(self, element: Element, room: int) -> list[str]:
        text = element.text.strip()
        if self.count(text) <= room:
            return [text]
        if element.kind is ElementKind.TABLE:
            return split_table(text, room, self.count)
        if element.kind is ElementKind.CODE:
            return split_code(text, room, self.count)
        return pack(sentences(text), room, self.count)

    def _prefix(self, section_path: tuple[str, ...], body: str) -> str | None:
        if not self.options.prefix_section_path or not section_path:
            return None
        prefix = " > ".join(section_path)
        if self.count(prefix) + 2 + self.count(body) > self.budget:  # a very long path: keep the leaf
            prefix = section_path[-1]
            if self.count(prefix) + 2 + self.count(body) > self.budget:
                return None
        return f"{prefix}\n\n{body}"

    def _link(self, document: Document, texts: list[tuple[str, tuple[str, ...], list[int], int | None]]) -> list[Chunk]:
        chunks: list[Chunk] = []
        for position, (body, section_path, pages, level) in enumerate(texts):
            page = min(pages) if pages else None
            page_end = max(pages) if pages else None
            metadata: dict[str, object] = {}
            if section_path:
                metadata["heading"] = section_path[-1]
                metadata["heading_breadcrumb"] = " > ".join(section_path)
                if level is not None:
                    metadata["heading_level"] = level
            if page is not None:
                metadata["page"] = page
                metadata["page_end"] = page_end
            chunks.append(
                Chunk.create(
                    document.id,
                    body,
                    position,
                    section_path=section_path,
                    page=page,
                    page_end=page_end,
                    metadata=metadata,
                    embed_text=self._prefix(section_path, body),
                )
            )
        linked = []
        for i, c in enumerate(chunks):
            prev_id = chunks[i - 1].id if i > 0 else None
            next_id = chunks[i + 1].id if i + 1 < len(chunks) else None
            linked.append(replace(c, prev_id=prev_id, next_id=next_id))
        return linked
