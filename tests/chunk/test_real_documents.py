"""Chunkers on real documents from ../shared/docs-corpus (Markdown, and docling's Markdown of DOCX/PDF/XLSX).

Bounds are checked with the real default embedder's tokenizer (MiniLM, 254 word pieces) and cl100k;
the semantic chunker gets its vectors from the hashing double (its bounds come from MiniLM).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ragwright.chunk import BaseChunker, RecursiveChunker, SemanticChunker, StructuralChunker
from ragwright.chunk.split import header_forms, table_header
from ragwright.chunk.structural import lead_in, sections
from ragwright.chunk.tokens import count_tokens as cl100k
from ragwright.model.chunk import Chunk
from ragwright.model.document import Document, ElementKind
from ragwright.models.embedders import load_embedder
from ragwright.options import ChunkingOptions, ParseOptions
from ragwright.parse.markdown import parse_markdown
from ragwright.parse.registry import parse_bytes
from ragwright.parse.text import parse_text
from ragwright.testing.doubles import HashingEmbedder

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "docs-corpus"
MARKDOWN = sorted([*(CORPUS / "md").glob("*.md"), *(CORPUS / "reference-outputs").glob("*.md")])
#: Binary documents parsed by ragwright's own parsers (in process: the chunker is under test here).
BINARY = [
    "docx/word_sample.docx",
    "docx/word_tables.docx",
    "pdf/nics-background-checks-2015-11.pdf",
    "pdf/redp5110_sampled.pdf",
    "xlsx/test-01.xlsx",
    "xlsx/stanley-cups.xlsx",
    "pptx/powerpoint_sample.pptx",
]
E = ElementKind


class MiniLmBoundedHashing(HashingEmbedder):
    """MiniLM's token counter and window with hashing vectors: real bounds, fast topic signal."""

    def __init__(self) -> None:
        super().__init__()
        self.real = load_embedder("default")

    @property
    def max_tokens(self) -> int:
        return self.real.max_tokens

    def count_tokens(self, text: str) -> int:
        return self.real.count_tokens(text)


@pytest.fixture(scope="module")
def embedder() -> MiniLmBoundedHashing:
    return MiniLmBoundedHashing()


def load(path: Path) -> Document:
    if path.suffix in (".docx", ".pdf", ".xlsx", ".pptx"):
        return parse_bytes(path.name, path.read_bytes(), name_hint=path.name, options=ParseOptions(isolate=False))
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".txt":
        return parse_text(path.name, text)
    return parse_markdown(path.name, text)


def chunkers(embedder: MiniLmBoundedHashing, options: ChunkingOptions) -> list[BaseChunker]:
    return [
        StructuralChunker.for_embedder(embedder, options),
        RecursiveChunker.for_embedder(embedder, options),
        SemanticChunker(embedder, options),
    ]


def expected_paths(document: Document) -> list[tuple[str, ...]]:
    """The heading path of every content element, by an independent walk."""
    stack: list[tuple[int, str]] = []
    out = []
    for element in document.elements:
        if element.kind in (E.HEADING, E.TITLE):
            level = 0 if element.kind is E.TITLE else element.level or 1
            stack = [s for s in stack if s[0] < level] + [(level, " ".join(element.text.split()))]
        elif element.kind not in (E.HEADER, E.FOOTER, E.IMAGE) and element.text.strip():
            out.append(tuple(t for _, t in stack))
    return out


def check(document: Document, chunks: Sequence[Chunk], options: ChunkingOptions, window: int, count: Any) -> None:
    # bounds
    for c in chunks:
        for text in (c.text, c.text_for_embedding):
            assert cl100k(text) <= options.max_tokens, (document.id, c.position)
            assert count(text) <= window, (document.id, c.position)
    # section paths: each chunk carries the path of its elements, in document order
    paths = expected_paths(document)
    if paths:
        order = list(dict.fromkeys(paths))
        assert all(c.section_path in order for c in chunks)
        positions = [order.index(c.section_path) for c in chunks]
        assert positions == sorted(positions)
        assert set(positions) == set(range(len(order)))  # every section has a chunk

    # tables: a row is split only when it cannot fit with its header; the header (or, under a sparse
    # title row, a shorter form of it: header_forms) opens every row group unless it is too large to
    # repeat (a necessary condition checked in both counters)
    def big(text: str, share: float = 0.5) -> bool:
        return cl100k(text) > options.max_tokens * share or count(text) > window * share

    tables = [table_header(e.text) for e in document.elements if e.kind is E.TABLE]
    forms = {table_header(e.text)[0]: header_forms(e.text) for e in document.elements if e.kind is E.TABLE}
    headers = {f for fs in forms.values() for f in fs} - {""}
    for c in chunks:
        for line in c.text.split("\n"):
            if not tables or not line.startswith("|") or any(line in h.split("\n") or line in r for h, r in tables):
                continue
            owners = [
                (h, row)
                for h, rs in tables
                for row in [*h.split("\n"), *rs]
                if re.sub(r"\s+", "", line) in re.sub(r"\s+", "", row)
            ]
            if owners:  # a piece of a row: only a row too large to fit with its header is split
                assert any(big(f"{h}\n{row}") for h, row in owners), (document.id, line)
        for block in re.findall(r"(?:^\|.*(?:\n|$))+", c.text, flags=re.M):
            lines = block.rstrip("\n").split("\n")
            owners2 = [(h, rs) for h, rs in tables if all(line in rs or line in h.split("\n") for line in lines)]
            opened = {f for h, _ in owners2 for f in forms[h] if lines[: f.count("\n") + 1] == f.split("\n")}
            if not owners2 or opened or any(not h for h, _ in owners2):
                continue
            assert any(big(h, 0.375) or any(big(f"{h}\n{row}") for row in rs) for h, rs in owners2), (
                document.id,
                lines[:2],
            )
    # no text lost (whitespace ignored, repeated table headers counted once)
    flat = lambda s: re.sub(r"\s+", "", s)
    got = flat("".join(c.text[int(c.metadata.get("overlap_chars", 0) or 0) :] for c in chunks))
    want = flat("".join(e.text for e in document.elements if e.kind not in (E.HEADING, E.TITLE) and e.text.strip()))
    # a table's lead-in opens each of its row groups (structural chunker): counted once too
    leads = {lead for s in sections(document) for i in range(len(s.blocks)) if (lead := lead_in(s.blocks, i))}
    for header in sorted(headers | leads, key=len, reverse=True):
        got, want = got.replace(flat(header), ""), want.replace(flat(header), "")
    assert got == want, document.id


@pytest.mark.parametrize(
    "path", [*MARKDOWN, CORPUS / "reference-outputs" / "py-pdf-benchmarks__GeoTopo-book.txt"], ids=lambda p: p.name
)
@pytest.mark.parametrize(
    "options",
    [
        ChunkingOptions(),
        ChunkingOptions(max_tokens=64, overlap="sentences"),
        ChunkingOptions(max_tokens=128, overlap="tokens"),
    ],
    ids=["default", "tight-sentences", "small-tokens"],
)
def test_real_documents(path: Path, options: ChunkingOptions, embedder: MiniLmBoundedHashing) -> None:
    document = load(path)
    for chunker in chunkers(embedder, options):
        chunks = chunker.chunk(document)
        assert chunks, (path.name, chunker.version)
        check(document, chunks, options, embedder.max_tokens, embedder.count_tokens)
        assert [c.id for c in chunker.chunk(document)] == [c.id for c in chunks]


@pytest.mark.parametrize("name", BINARY)
def test_parsed_office_and_pdf_documents(name: str, embedder: MiniLmBoundedHashing) -> None:
    document = load(CORPUS / name)
    for options in (ChunkingOptions(), ChunkingOptions(max_tokens=96, overlap="sentences")):
        for chunker in chunkers(embedder, options):
            chunks = chunker.chunk(document)
            assert chunks, (name, chunker.version)
            check(document, chunks, options, embedder.max_tokens, embedder.count_tokens)
            starts = [c.page for c in chunks if c.page is not None]
            assert starts == sorted(starts)  # reading order
            assert all(c.page_end is not None and c.page_end >= c.page for c in chunks if c.page is not None)
            if name.endswith(".pdf"):
                assert starts and all(c.metadata["page"] == c.page for c in chunks if c.page is not None)


def test_nics_table_row_groups_carry_the_header(embedder: MiniLmBoundedHashing) -> None:
    document = load(CORPUS / "pdf" / "nics-background-checks-2015-11.pdf")
    (table,) = [e.text for e in document.elements if e.kind is E.TABLE]
    header, rows = table_header(table)
    # the column labels sit under a sparse row of group labels (merged header cells): they are header
    whole, labels, _ = header_forms(table)
    assert whole == header and header.split("\n")[2].startswith("| State / Territory | Permit |")
    assert labels == "\n".join([header.split("\n")[2], header.split("\n")[1]])
    chunks = StructuralChunker.for_embedder(embedder).chunk(document)
    parts = [c for c in chunks if labels.split("\n")[0] in c.text]
    assert len(parts) >= 5 and header in parts[0].text  # the whole header once, then the labels
    got_rows = [line for c in parts[1:] for line in c.text[c.text.index(labels) + len(labels) :].split("\n") if line]
    first = [line for line in parts[0].text[parts[0].text.index(header) + len(header) :].split("\n") if line]
    assert first + got_rows == [r for r in rows if r.strip()]  # every row once, whole, in order
    assert any(row.startswith("| Alabama |") for row in got_rows) and any("| Wyoming |" in row for row in got_rows)
    assert all(c.page == 1 for c in parts)


def test_word_sample_sections_lists_and_table(embedder: MiniLmBoundedHashing) -> None:
    document = load(CORPUS / "reference-outputs" / "docling-v2__word_sample.docx.md")
    chunks = StructuralChunker.for_embedder(embedder).chunk(document)
    by_text = {c.text: c for c in chunks}
    swim = next(c for t, c in by_text.items() if "Paddle about" in t)
    assert swim.section_path == ("Swimming in the lake", "Let’s swim!")
    assert "You can relax and look around\nPaddle about\nEnjoy summer warmth" in swim.text
    eat = next(c for t, c in by_text.items() if "| Berries |" in t.replace("  ", " ") or "Berries" in t)
    assert eat.section_path == ("Swimming in the lake", "Let’s swim!", "Let’s eat")
    assert eat.metadata["heading"] == "Let’s eat" and eat.metadata["heading_level"] == 3
    assert eat.embed_text is not None and eat.embed_text.startswith(
        "Swimming in the lake > Let’s swim! > Let’s eat\n\n"
    )


def test_large_table_row_groups_repeat_the_header(embedder: MiniLmBoundedHashing) -> None:
    document = load(CORPUS / "reference-outputs" / "docling-v2__2305.03393v1-pg9.md")
    options = ChunkingOptions(max_tokens=120)
    chunks = StructuralChunker.for_embedder(embedder, options).chunk(document)
    header = "| # enc-layers | # dec-layers | Language | TEDs | TEDs | TEDs | mAP | Inference |\n| --- |"
    parts = [c for c in chunks if header in c.text]
    assert len(parts) >= 2
    assert all(c.section_path == ("5.1 Hyper Parameter Optimization",) for c in parts)


_CHILD = """
import json, sys
from pathlib import Path
from ragwright.chunk import make_chunker
from ragwright.options import ChunkingOptions, ParseOptions
from ragwright.parse.markdown import parse_markdown
from ragwright.parse.registry import parse_bytes
from ragwright.testing.doubles import HashingEmbedder
doc = parse_markdown("redp", Path(sys.argv[1]).read_text(encoding="utf-8"))
out = {}
for strategy in ("structural", "recursive", "semantic"):
    options = ChunkingOptions(strategy=strategy, overlap="tokens")
    out[strategy] = [c.id for c in make_chunker(HashingEmbedder(max_tokens=200), options).chunk(doc)]
print(json.dumps(out))
"""


def test_ids_are_stable_across_processes() -> None:
    path = CORPUS / "reference-outputs" / "docling-v2__redp5110_sampled.md"
    runs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(path)], env=env, capture_output=True, text=True, check=True
        )
        runs.append(json.loads(done.stdout))
    assert runs[0] == runs[1]
    assert all(len(ids) > 10 for ids in runs[0].values())
