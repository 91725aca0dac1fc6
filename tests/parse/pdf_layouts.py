"""Seeded random PDF layouts for differential tests of the PDF parser (reportlab).

Each seed gives one document: either a flowing report (one to three columns, headings with section
numbers, paragraphs with diacritics and hyphenated words, bulleted/numbered/lettered/roman lists, ruled
and gridded tables with or without a caption, Japanese text, table-of-contents leader lines, a running
header and page numbers) or a free page of scattered text (rotated 90/180/270/45 degrees, mixed fonts
and sizes, rules and boxes). The layouts are not meant to be parsed "right"; they exercise every branch
of the layout code so that two implementations of it can be compared.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, letter
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas
from reportlab.platypus import (
    BaseDocTemplate,
    Frame,
    ListFlowable,
    ListItem,
    PageBreak,
    PageTemplate,
    Paragraph,
    Table,
    TableStyle,
)

__all__ = ["write_layout"]

_VOCABULARY = """
the of and information retrieval system document index query ranking dense sparse hybrid evaluation
benchmark table column row header footer section chapter figure measure Straße naïve café coöperate
résumé über-long hyphen-ated words like inter- national co-operation
"""
_WORDS = _VOCABULARY.split()
_CJK_FONT = "HeiseiMin-W3"  # one of reportlab's built-in CID fonts: no font file needed
pdfmetrics.registerFont(UnicodeCIDFont(_CJK_FONT))


def write_layout(path: Path, seed: int) -> None:
    """Write the layout of *seed* to *path*."""
    rng = random.Random(seed)
    if rng.random() < 0.75:
        _report(path, rng)
    else:
        _scattered(path, rng)


def _sentence(rng: random.Random, n: int | None = None) -> str:
    words = [rng.choice(_WORDS) for _ in range(n or rng.randint(5, 25))]
    words[0] = words[0].capitalize()
    return " ".join(words) + rng.choice([".", ".", "?", ":", ";", "!"])


def _story(rng: random.Random) -> list[Any]:
    styles = getSampleStyleSheet()
    out: list[Any] = []
    for _ in range(rng.randint(5, 30)):
        r = rng.random()
        if r < 0.12:
            title = f"{rng.randint(1, 9)}.{rng.randint(1, 9)} " + _sentence(rng, 4)[:-1]
            out.append(Paragraph(title, styles[rng.choice(["Heading1", "Heading2", "Heading3"])]))
        elif r < 0.22:
            items = [ListItem(Paragraph(_sentence(rng), styles["Normal"])) for _ in range(rng.randint(2, 6))]
            out.append(ListFlowable(items, bulletType=rng.choice(["bullet", "1", "a", "i"])))
        elif r < 0.32:
            out.extend(_table(rng, styles))
        elif r < 0.36:
            out.append(
                Paragraph(
                    f'<font name="{_CJK_FONT}">日本語のテキストです。検索システムの評価。</font>', styles["Normal"]
                )
            )
        elif r < 0.40:
            leader = "Contents " + ". " * rng.randint(4, 30) + str(rng.randint(1, 300))
            out.append(Paragraph(leader, styles["Normal"]))
        else:
            out.append(Paragraph(" ".join(_sentence(rng) for _ in range(rng.randint(1, 6))), styles["Normal"]))
        if rng.random() < 0.05:
            out.append(PageBreak())
    return out


def _table(rng: random.Random, styles: Any) -> list[Any]:
    width, height = rng.randint(2, 6), rng.randint(2, 12)
    cells = [[rng.choice(_WORDS).title() for _ in range(width)]]
    for _ in range(height):
        cells.append([str(rng.randint(0, 9999)) if rng.random() < 0.5 else rng.choice(_WORDS) for _ in range(width)])
    rules: list[Any] = [
        ("LINEABOVE", (0, 0), (-1, 0), 1, colors.black),
        ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black),
        ("LINEBELOW", (0, -1), (-1, -1), 1, colors.black),
    ]
    if rng.random() < 0.5:
        rules.append(("GRID", (0, 0), (-1, -1), 0.5, colors.grey))
    table = Table(cells)
    table.setStyle(TableStyle(rules))
    if rng.random() < 0.5:
        return [Paragraph(f"Table {rng.randint(1, 20)}: " + _sentence(rng, 6), styles["Normal"]), table]
    return [table]


def _report(path: Path, rng: random.Random) -> None:
    size = rng.choice([A4, letter])
    doc = BaseDocTemplate(str(path), pagesize=size)
    columns = rng.choice([1, 1, 2, 3])
    width = (size[0] - 144) / columns
    frames = [Frame(72 + i * width, 72, width - 6, size[1] - 144, id=f"c{i}") for i in range(columns)]

    def running(c: Any, d: Any) -> None:
        c.saveState()
        c.setFont("Helvetica", 8)
        c.drawString(72, d.pagesize[1] - 40, "Running header of the generated report")
        c.drawString(d.pagesize[0] / 2, 30, f"Page {d.page}")
        c.restoreState()

    extra = {"onPage": running} if rng.random() < 0.7 else {}
    doc.addPageTemplates([PageTemplate(id="page", frames=frames, **extra)])
    doc.build(_story(rng))


def _scattered(path: Path, rng: random.Random) -> None:
    c = canvas.Canvas(str(path), pagesize=A4)
    for _ in range(rng.randint(1, 3)):
        for _ in range(rng.randint(5, 40)):
            c.saveState()
            c.translate(rng.uniform(20, 500), rng.uniform(20, 800))
            c.rotate(rng.choice([0, 0, 0, 90, 270, 45, 180]))
            c.setFont(
                rng.choice(["Helvetica", "Times-Bold", "Courier", "Helvetica-BoldOblique"]), rng.choice([6, 8, 12, 24])
            )
            c.drawString(0, 0, _sentence(rng, rng.randint(1, 8)))
            c.restoreState()
            if rng.random() < 0.3:
                y = rng.uniform(50, 800)
                c.line(rng.uniform(20, 200), y, rng.uniform(300, 580), y)
            if rng.random() < 0.1:
                c.rect(rng.uniform(20, 300), rng.uniform(20, 700), rng.uniform(20, 200), rng.uniform(5, 50))
        c.showPage()
    c.save()
