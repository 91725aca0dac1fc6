from pathlib import Path

import pytest

from ragwright.errors import ParseError
from ragwright.model.document import ElementKind
from ragwright.parse import parse_bytes
from ragwright.parse.detect import detect


def test_headings_lists_code_tables_front_matter() -> None:
    md = b"""---
title: Front Title
owner: ops
---
# Top

Intro paragraph with *emphasis* and a [link](http://x).

## Sub

- item one
- item two

```python
print("hi")
```

| a | b |
|---|---|
| 1 | 2 |
"""
    doc = parse_bytes("d", md, name_hint="x.md")
    kinds = [e.kind for e in doc.elements]
    assert kinds == [
        ElementKind.HEADING,
        ElementKind.PARAGRAPH,
        ElementKind.HEADING,
        ElementKind.LIST_ITEM,
        ElementKind.LIST_ITEM,
        ElementKind.CODE,
        ElementKind.TABLE,
    ]
    assert doc.elements[0].level == 1 and doc.elements[2].level == 2
    assert doc.elements[1].text == "Intro paragraph with emphasis and a link."
    assert doc.elements[5].attributes == {"language": "python"}
    assert doc.elements[6].text.splitlines()[0] == "| a | b |"
    assert doc.title == "Front Title" and doc.metadata == {"title": "Front Title", "owner": "ops"}


def test_real_markdown_files(shared: Path) -> None:
    doc = parse_bytes("wiki", (shared / "docs-corpus/md/wiki.md").read_bytes(), name_hint="wiki.md")
    headings = [e.text for e in doc.elements if e.kind is ElementKind.HEADING]
    assert headings and doc.title == headings[0]
    code = parse_bytes("c", (shared / "docs-corpus/md/codeblock.md").read_bytes(), name_hint="codeblock.md")
    assert any(e.kind is ElementKind.CODE for e in code.elements)


def test_plain_text_paragraphs() -> None:
    doc = parse_bytes("t", b"first para\nwrapped line\n\nsecond para\n", name_hint="notes.txt")
    assert [e.text for e in doc.elements] == ["first para wrapped line", "second para"]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        (b"PK\x03\x04zipdata", "ZIP"),
        (b"\x00\x01\x02\x03" * 50, "binary"),
    ],
)
def test_unsupported_or_empty_input_raises_parse_error(data: bytes, reason: str) -> None:
    with pytest.raises(ParseError, match=reason):
        parse_bytes("x", data, name_hint="x.md")


def test_detect_by_content_not_extension() -> None:
    assert detect(b"%PDF-1.4", "looks.md") == "pdf"
    assert detect(b"# hi", "notes.md") == "markdown"
    assert detect(b"# hi", "notes.txt") == "text"
    assert detect("ünïcode".encode("utf-16"), "x.txt") == "text"


def test_hugo_shortcodes_around_prose_are_stripped_but_kept_in_code() -> None:
    from ragwright.parse.markdown import parse_markdown

    md = (
        "{{% note %}}\nLooking for `tool shell`? It moved to a plugin: [`tool-plugin-shell`](https://x)\n"
        '{{% /note %}}\n\n{{< tabs tabTotal="2" tabName1="Bash/Zsh" >}}\n\n{{< tab tabID="bash" >}}\n\n'
        'Text in a tab.\n\n```go\n{{< tab tabID="x" >}} stays in code\n```\n'
    )
    assert [(e.kind.value, e.text) for e in parse_markdown("d", md).elements] == [
        ("paragraph", "Looking for tool shell? It moved to a plugin: tool-plugin-shell"),
        ("paragraph", "Text in a tab."),
        ("code", '{{< tab tabID="x" >}} stays in code'),
    ]


def test_mkdocs_admonitions_and_content_tabs_read_as_their_prose() -> None:
    """Python-Markdown admonitions and Material's tabs indent their body: read as Markdown, not as code, under
    their title (none when untitled); fenced code keeps a marker-like line; nesting is read the same way."""
    from ragwright.parse.markdown import parse_markdown

    md = (
        "# Settings\n\n### `timeout`\n\n**Default:** `30`\n\n"
        "!!! note\n    Workers silent for **longer** are killed.\n\n    - a list item\n\n"
        '!!! info "Added in 19.2"\n\n??? tip "More"\n    !!! warning "Careful"\n        Nested text.\n\n'
        '=== "Sync"\n\n    The **default** worker.\n\n    ```bash\n    gunicorn app:app\n    ```\n\n'
        '```text\n!!! note "kept"\n    as code\n```\n\nAfter the blocks.\n\n<div class="icon">⚖️</div>\n'
    )
    assert [(e.kind.value, e.text) for e in parse_markdown("d", md).elements] == [
        ("heading", "Settings"),
        ("heading", "timeout"),
        ("paragraph", "Default: 30"),
        ("paragraph", "Workers silent for longer are killed."),
        ("list_item", "a list item"),
        ("paragraph", "Added in 19.2"),
        ("paragraph", "More"),
        ("paragraph", "Careful"),
        ("paragraph", "Nested text."),
        ("paragraph", "Sync"),
        ("paragraph", "The default worker."),
        ("code", "gunicorn app:app"),
        ("code", '!!! note "kept"\n    as code'),
        ("paragraph", "After the blocks."),
    ]


def test_myst_roles_directives_and_targets_read_as_a_sphinx_reader_sees_them() -> None:
    from ragwright.parse.markdown import parse_markdown

    md = (
        "(exit-codes)=\n\n# Exit Codes\n\n"
        "It handles {exc}`EOFError` as {exc}`~click.exceptions.Abort`; see {doc}`Entry points <entry-points>`.\n\n"
        "```{warning}\nThese tools are not thread-safe.\n```\n\n"
        "```{code-block} python\n:caption: hello.py\n\nprint('hi')\n```\n\n"
        "```{contents}\n---\ndepth: 2\n---\n```\n\n"
        "```{eval-rst}\n.. note::\n\n   An rst note inside.\n```\n\n"
        "```python\nplain = 'code'\n```\n"
    )
    doc = parse_markdown("d", md)
    assert [(e.kind.value, e.text) for e in doc.elements] == [
        ("heading", "Exit Codes"),
        ("paragraph", "It handles EOFError as Abort; see Entry points."),
        ("paragraph", "These tools are not thread-safe."),
        ("code", "print('hi')"),
        ("paragraph", "An rst note inside."),
        ("code", "plain = 'code'"),
    ]
    assert doc.elements[3].attributes == {"language": "python"}
    assert doc.title == "Exit Codes"


def test_myst_directives_nested_past_reason_keep_their_text() -> None:
    from ragwright.parse.markdown import parse_markdown

    depth = 30
    md = "".join("`" * (depth + 10 - i) + "{note}\n" for i in range(depth)) + "deep text\n"
    md += "".join("`" * (11 + i) + "\n" for i in range(depth))
    assert any("deep text" in e.text for e in parse_markdown("d", md).elements)


def test_mkdocs_blocks_nested_past_reason_keep_their_text() -> None:
    from ragwright.parse.markdown import parse_markdown

    md = "\n".join("    " * i + f'!!! note "level {i}"' for i in range(25)) + "\n" + "    " * 25 + "deepest text"
    text = " ".join(e.text for e in parse_markdown("d", md).elements)
    assert "level 0" in text and "level 20" in text and "deepest text" in text
