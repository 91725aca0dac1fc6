"""DOCX parser: the MANIFEST facts of the real corpus, options, limits and hostile packages."""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

import pytest

from ragwright.errors import LimitExceeded, MissingDependencyError, ParseError
from ragwright.model.document import Document, ElementKind
from ragwright.options import ParseOptions

pytest.importorskip("docx")

from ragwright.parse.office.docx import VERSION, parse_docx

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "docs-corpus"
W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def parse(name: str, **options: object) -> Document:
    data = (CORPUS / "docx" / name).read_bytes()
    return parse_docx("d", data, source=name, options=ParseOptions(**options))  # type: ignore[arg-type]


def tables(doc: Document) -> list[str]:
    return [e.text for e in doc.elements if e.kind is ElementKind.TABLE]


# --- the corpus (MANIFEST "check" column) --------------------------------------------------------


def test_word_sample_title_table_lists_metadata() -> None:
    doc = parse("word_sample.docx")
    assert VERSION == "docx/4"
    assert doc.title == "Swimming in the lake"
    assert [e.text for e in doc.elements if e.kind is ElementKind.TITLE] == ["Swimming in the lake"]
    table = tables(doc)[0]
    assert "| Leaves | Ash, Elm, Maple | 50 |" in table.splitlines()
    assert table.splitlines()[1] == "| --- | --- | --- |"
    bullets = [e.text for e in doc.elements if e.kind is ElementKind.LIST_ITEM]
    assert bullets[:3] == ["You can relax and look around", "Paddle about", "Enjoy summer warmth"]
    assert "Also, don’t forget:" not in bullets  # numbering switched off (numId 0): a plain paragraph
    headings = [(e.level, e.text) for e in doc.elements if e.kind is ElementKind.HEADING]
    assert headings == [(1, "Let’s swim!"), (2, "Let’s eat")]
    # the table sits in body order between its surrounding paragraphs
    texts = [e.text for e in doc.elements]
    at = texts.index(table)
    assert texts[at - 1].startswith("Here are some interesting things") and texts[at + 1].startswith("And let’s")
    assert doc.metadata["author"] == "Christoph Auer"
    assert doc.metadata["created_at"] == "2024-10-09T12:43:00+00:00"
    assert doc.metadata["language"] == "en-US"
    assert doc.mime_type and doc.mime_type.endswith("wordprocessingml.document")


def test_unit_test_headers_levels() -> None:
    doc = parse("unit_test_headers.docx")
    structure = [(e.kind, e.level, e.text) for e in doc.elements if e.kind in (ElementKind.TITLE, ElementKind.HEADING)]
    assert structure[:6] == [
        (ElementKind.TITLE, None, "Test Document"),
        (ElementKind.HEADING, 1, "Section 1"),
        (ElementKind.HEADING, 2, "Section 1.1"),
        (ElementKind.HEADING, 2, "Section 1.2"),
        (ElementKind.HEADING, 3, "Section 1.2.3"),
        (ElementKind.HEADING, 1, "Section 2"),
    ]
    assert doc.title == "Test Document"
    assert "Paragraph 1.1" in [e.text for e in doc.elements if e.kind is ElementKind.PARAGRAPH]


def test_unit_test_lists_items_and_levels() -> None:
    elements = parse("unit_test_lists.docx").elements
    texts = [e.text for e in elements]
    start = texts.index("Test 1:")
    assert elements[start].kind is ElementKind.HEADING
    items = elements[start + 1 : start + 4]
    assert [(e.kind, e.level, e.text) for e in items] == [
        (ElementKind.LIST_ITEM, 1, f"List item {n}") for n in (1, 2, 3)
    ]
    nested = elements[texts.index("Test 3:") + 1 : texts.index("Test 4:")]
    assert [(e.level, e.text) for e in nested] == [
        (1, "List item 1"),
        (1, "List item 2"),
        (2, "List item 1.1"),
        (2, "List item 1.2"),
        (2, "List item 1.3"),
        (1, "List item 3"),
    ]
    assert (3, "List item 1.1.1") in [(e.level, e.text) for e in elements if e.kind is ElementKind.LIST_ITEM]


def test_word_tables_rows_and_merged_cells() -> None:
    found = tables(parse("word_tables.docx"))
    assert len(found) == 5
    assert found[0].splitlines()[2] == "| Cell 1.0 | Cell 1.1 | Cell 1.2 |"
    # horizontal span: the merged text repeated in every grid column it covers
    assert "| Cell 1.0 | Merged Cell 1.1 1.2 | Merged Cell 1.1 1.2 |" in found[1].splitlines()
    # vertical span: repeated down
    rows = found[3].splitlines()
    assert rows[2].startswith("| Cell 1.0 | Merged Cell 1.1 2.1 |")
    assert rows[3].startswith("| Cell 2.0 | Merged Cell 1.1 2.1 |")


def test_docx_tables_header_and_nested_table() -> None:
    found = tables(parse("docx-tables.docx"))
    assert len(found) == 3
    assert found[0].splitlines()[:2] == ["| Header Col 1 | Header Col 2 |", "| --- | --- |"]
    assert all("\n\n" not in t for t in found)  # cell newlines flattened: one line per row
    assert found[2].splitlines()[2:] == ["| a | c | d |", "| e | e | d |"]


def test_headers_and_footers_dropped() -> None:
    raw = zipfile.ZipFile(CORPUS / "docx" / "hdr-header-footer.docx")
    assert b"Header for section-1" in raw.read("word/header1.xml") + raw.read("word/header2.xml") + raw.read(
        "word/header3.xml"
    )
    text = parse("hdr-header-footer.docx").text
    assert "section with header" in text
    assert "Header for section" not in text and "Footer for section" not in text


def test_comments_excluded_by_default_and_included_on_request() -> None:
    plain = parse("comments-rich-para.docx")
    assert "google.com" not in plain.text
    assert not [e for e in plain.elements if e.kind is ElementKind.QUOTE]
    rich = parse("comments-rich-para.docx", include_comments=True)
    quotes = [e for e in rich.elements if e.kind is ElementKind.QUOTE]
    steve = [q for q in quotes if q.attributes["author"] == "Steve Canny"]
    assert steve and "https://google.com" in steve[0].text
    # the comment follows the paragraph it is anchored to
    texts = [e.text for e in rich.elements]
    assert texts[texts.index(steve[0].text) - 1] == "Some text worthy of note."


def test_comment_thread_replies() -> None:
    assert "A comment." not in parse("comment-thread.docx").text
    quotes = [e for e in parse("comment-thread.docx", include_comments=True).elements if e.kind is ElementKind.QUOTE]
    assert [q.text for q in quotes] == ["A comment.", "A reply comment."]
    assert quotes[1].attributes["reply_to"] == quotes[0].attributes["comment_id"]


def test_tracked_changes_accepted_and_deleted_on_request() -> None:
    raw = zipfile.ZipFile(CORPUS / "docx" / "mixed-insert-delete.docx").read("word/document.xml")
    assert b"<w:delText" in raw and b"<w:ins " in raw
    text = parse("mixed-insert-delete.docx").elements[0].text
    assert text.startswith("Lorem dolor sit amet ipsum, consectetuer")
    assert text.count("dolor sit amet") == 1
    with_deleted = parse("mixed-insert-delete.docx", include_deleted=True).elements[0].text
    assert with_deleted.startswith("Lorem dolor sit amet ipsum dolor sit amet, consectetuer")


# --- synthetic documents for what the corpus lacks -------------------------------------------------

_CT = (
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    '<Override PartName="/word/styles.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>'
    '<Override PartName="/word/footnotes.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/>'
    "</Types>"
)
_ROOT_RELS = (
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Target="word/document.xml" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"/>'
    "</Relationships>"
)
_DOC_RELS = (
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Target="styles.xml" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles"/>'
    '<Relationship Id="rId2" Target="footnotes.xml" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes"/>'
    "</Relationships>"
)
_STYLES = f"""<w:styles xmlns:w="{W_NS}">
<w:style w:type="paragraph" w:default="1" w:styleId="Standard"><w:name w:val="Normal"/></w:style>
<w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/></w:style>
<w:style w:type="paragraph" w:styleId="Kapitel"><w:name w:val="Kapitel"/>
  <w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>
<w:style w:type="paragraph" w:styleId="Unterkapitel"><w:name w:val="Unterkapitel"/>
  <w:basedOn w:val="Kapitel"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>
<w:style w:type="paragraph" w:styleId="Aufzaehlung"><w:name w:val="Aufzaehlung"/>
  <w:pPr><w:numPr><w:ilvl w:val="1"/><w:numId w:val="3"/></w:numPr></w:pPr></w:style>
</w:styles>"""
_FOOTNOTES = f"""<w:footnotes xmlns:w="{W_NS}">
<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>
<w:footnote w:id="5"><w:p><w:r><w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> Source: the 2024 survey.</w:t>
</w:r></w:p></w:footnote></w:footnotes>"""


def p(text: str, style: str | None = None, extra: str = "") -> str:
    ppr = (
        f'<w:pPr><w:pStyle w:val="{style}"/>{extra}</w:pPr>' if style else (f"<w:pPr>{extra}</w:pPr>" if extra else "")
    )
    return f'<w:p>{ppr}<w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def make_docx(body: str, *, document_xml: str | None = None) -> bytes:
    xml = document_xml or f'<w:document xmlns:w="{W_NS}"><w:body>{body}</w:body></w:document>'
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", _CT)
        z.writestr("_rels/.rels", _ROOT_RELS)
        z.writestr("word/document.xml", xml)
        z.writestr("word/_rels/document.xml.rels", _DOC_RELS)
        z.writestr("word/styles.xml", _STYLES)
        z.writestr("word/footnotes.xml", _FOOTNOTES)
    return buf.getvalue()


def synth(body: str, **options: object) -> Document:
    return parse_docx("s", make_docx(body), source=None, options=ParseOptions(**options))  # type: ignore[arg-type]


def test_heading_from_display_name_and_outline_level_fallback() -> None:
    doc = synth(
        p("Localised heading", "berschrift1")
        + p("Custom chapter", "Kapitel")
        + p("Inherited sub-chapter", "Unterkapitel")
        + p("Direct outline", extra='<w:outlineLvl w:val="2"/>')
        + p("Body text")
    )
    assert [(e.kind, e.level) for e in doc.elements] == [
        (ElementKind.HEADING, 1),
        (ElementKind.HEADING, 1),
        (ElementKind.HEADING, 2),
        (ElementKind.HEADING, 3),
        (ElementKind.PARAGRAPH, None),
    ]


def test_list_numbering_from_paragraph_and_style() -> None:
    numpr = '<w:numPr><w:ilvl w:val="2"/><w:numId w:val="1"/></w:numPr>'
    doc = synth(p("deep item", extra=numpr) + p("style item", "Aufzaehlung"))
    assert [(e.kind, e.level) for e in doc.elements] == [(ElementKind.LIST_ITEM, 3), (ElementKind.LIST_ITEM, 2)]


def test_moves_insertions_deletions_and_hidden_runs() -> None:
    body = (
        "<w:p><w:r><w:t>Alpha </w:t></w:r>"
        '<w:moveFrom w:id="1"><w:r><w:t>moved-away </w:t></w:r></w:moveFrom>'
        '<w:ins w:id="2"><w:r><w:t>inserted </w:t></w:r></w:ins>'
        '<w:del w:id="3"><w:r><w:delText>deleted </w:delText></w:r></w:del>'
        "<w:r><w:rPr><w:vanish/></w:rPr><w:t>secret </w:t></w:r>"
        "<w:r><w:t>Omega</w:t></w:r></w:p>"
        '<w:moveTo w:id="4"><w:p><w:r><w:t>moved-here</w:t></w:r></w:p></w:moveTo>'
    )
    doc = synth(body)
    assert [e.text for e in doc.elements] == ["Alpha inserted Omega", "moved-here"]
    assert doc.warnings and "hidden" in doc.warnings[0]
    assert synth(body, include_deleted=True).elements[0].text == "Alpha inserted deleted Omega"


def test_footnotes_kept_with_markers() -> None:
    body = '<w:p><w:r><w:t>Claim</w:t></w:r><w:r><w:footnoteReference w:id="5"/></w:r></w:p>'
    doc = synth(body)
    assert doc.elements[0].text == "Claim[^1]"
    note = doc.elements[-1]
    assert note.text == "[^1]: Source: the 2024 survey."
    assert note.attributes == {"footnote": 1}


def test_synthetic_table_spans_content_controls_and_alternate_content() -> None:
    def tc(text: str, props: str = "") -> str:
        return f"<w:tc><w:tcPr>{props}</w:tcPr>{p(text)}</w:tc>"

    span, restart, cont = '<w:gridSpan w:val="2"/>', '<w:vMerge w:val="restart"/>', "<w:vMerge/>"
    table = (
        "<w:tbl><w:tblGrid><w:gridCol/><w:gridCol/><w:gridCol/></w:tblGrid>"
        f"<w:tr>{tc('H1')}{tc('H2 | wide', span)}</w:tr>"
        f"<w:tr>{tc('a', restart)}{tc('b')}{tc('c')}</w:tr>"
        f"<w:tr>{tc('', cont)}{tc('line1</w:t><w:br/><w:t>line2')}{tc('d')}</w:tr>"
        "</w:tbl>"
    )
    alt = (
        '<w:p><w:r><mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">'
        "<mc:Choice><w:t>choice</w:t></mc:Choice><mc:Fallback><w:t>fallback</w:t></mc:Fallback>"
        "</mc:AlternateContent></w:r></w:p>"
    )
    sdt = f"<w:sdt><w:sdtContent>{p('in a content control')}</w:sdtContent></w:sdt>"
    doc = synth(table + sdt + alt)
    assert doc.elements[0].text.splitlines() == [
        "| H1 | H2 \\| wide | H2 \\| wide |",
        "| --- | --- | --- |",
        "| a | b | c |",
        "| a | line1 line2 | d |",
    ]
    assert [e.text for e in doc.elements[1:]] == ["in a content control", "choice"]


# --- errors, limits and hostile input ------------------------------------------------------------


def test_not_a_docx() -> None:
    with pytest.raises(ParseError, match="not a DOCX"):
        parse_docx("x", b"plain text, not a zip", source=None, options=ParseOptions())
    xlsx = (CORPUS / "xlsx" / "stanley-cups.xlsx").read_bytes()
    with pytest.raises(ParseError, match=r"not a DOCX: the package has no word/document.xml"):
        parse_docx("x", xlsx, source=None, options=ParseOptions())


def test_encrypted_ooxml_is_reported() -> None:
    data = (CORPUS / "xlsx" / "password_protected.xlsx").read_bytes()  # an encrypted OLE container
    with pytest.raises(ParseError, match=r"^encrypted: "):
        parse_docx("x", data, source=None, options=ParseOptions())


def test_zip_bomb_docx_refused_before_extraction() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("[Content_Types].xml", _CT)
        with z.open("word/document.xml", "w", force_zip64=True) as member:
            member.write(f'<w:document xmlns:w="{W_NS}"><w:body><w:p><w:r><w:t>'.encode())
            chunk = b" " * (4 << 20)
            for _ in range(150):  # 600 MiB of spaces, ~3 MB compressed
                member.write(chunk)
    data = buf.getvalue()
    assert len(data) < 5_000_000
    with pytest.raises(LimitExceeded, match="zip bomb"):
        parse_docx("bomb", data, source=None, options=ParseOptions())


def declare_size(data: bytes, name: str, size: int) -> bytes:
    """Rewrite the uncompressed size a zip declares for *name* (local header and central directory)."""
    raw = bytearray(data)
    fake = size.to_bytes(4, "little")
    local = zipfile.ZipFile(io.BytesIO(data)).getinfo(name).header_offset
    raw[local + 22 : local + 26] = fake
    pos = 0
    while True:
        pos = raw.index(b"PK\x01\x02", pos)
        length = int.from_bytes(raw[pos + 28 : pos + 30], "little")
        if raw[pos + 46 : pos + 46 + length] == name.encode():
            raw[pos + 24 : pos + 28] = fake
            return bytes(raw)
        pos += 4


def test_member_larger_than_declared_is_never_inflated_past_it() -> None:
    # A member that inflates to 200 kB but declares 100 bytes: check_zip trusts the declaration,
    # so reading must stop there (zipfile does, then fails the CRC) — a clean "corrupt" error.
    liar = declare_size(make_docx(p("x" * 200_000)), "word/document.xml", 100)
    assert zipfile.ZipFile(io.BytesIO(liar)).getinfo("word/document.xml").file_size == 100
    with pytest.raises(ParseError, match="corrupt"):
        parse_docx("liar", liar, source=None, options=ParseOptions())


@pytest.mark.parametrize(
    "prolog",
    [
        '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>',
        '<!DOCTYPE w:document [<!ENTITY xxe SYSTEM "http://example.invalid/secret">]>',
        "<!-- " + "padding " * 40_000 + '--><!DOCTYPE x [<!ENTITY a "b">]>',  # past a naive 4 KB window
    ],
)
def test_dtd_in_any_member_refused(prolog: str) -> None:
    xml = f'<?xml version="1.0"?>{prolog}<w:document xmlns:w="{W_NS}"><w:body>{p("&lol2;")}</w:body></w:document>'
    with pytest.raises(ParseError, match="unsafe XML"):
        parse_docx("x", make_docx("", document_xml=xml), source=None, options=ParseOptions())


def test_utf16_member_with_dtd_refused() -> None:
    xml = f'<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE d [<!ENTITY a "b">]><w:document xmlns:w="{W_NS}"/>'
    data = make_docx("", document_xml="")
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(buf, "w") as dst:
        for item in src.infolist():
            body = xml.encode("utf-16") if item.filename == "word/document.xml" else src.read(item)
            dst.writestr(item.filename, body)
    with pytest.raises(ParseError, match="unsafe XML"):
        parse_docx("x", buf.getvalue(), source=None, options=ParseOptions())


def test_file_size_limit() -> None:
    with pytest.raises(LimitExceeded, match="max_file_bytes"):
        parse_docx("x", make_docx(p("hello")), source=None, options=ParseOptions(max_file_bytes=100))


def test_missing_dependency_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "docx", None)
    with pytest.raises(MissingDependencyError, match=r"ragwright\[office\]"):
        parse_docx("x", make_docx(p("hello")), source=None, options=ParseOptions())


def test_overlong_prolog_refused() -> None:
    xml = f'<?xml version="1.0"?><!-- {"padding " * 140_000} --><w:document xmlns:w="{W_NS}"><w:body/></w:document>'
    options = ParseOptions(max_compression_ratio=1_000_000.0)
    with pytest.raises(ParseError, match="unsafe XML refused: a prolog longer than"):
        parse_docx("x", make_docx("", document_xml=xml), source=None, options=options)
