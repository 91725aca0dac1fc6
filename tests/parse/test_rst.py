from ragwright.model.document import ElementKind
from ragwright.parse import parse_bytes
from ragwright.parse.detect import detect
from ragwright.parse.rst import parse_rst

DOC = """\
###############
 Configuration
###############

Every setting is an environment variable. See :doc:`Configure paths <../how-to/configure-paths>` and
:class:`~tool.config.Settings`.

*********
 Settings
*********

.. list-table::
    :header-rows: 1

    - - Variable
      - Meaning and default
    - - ``TOOL_HOME``
      - Root directory. Default: ``~/.local/share/tool``.
    - - ``TOOL_MAX_LOGS``
      - Log files to keep. Default: ``10``.

- first item
- second item

.. code-block:: console

    $ tool pin black

.. versionadded:: 1.5
   The pin command keeps an app at its version.

.. mermaid::

    flowchart LR
        A --> B

:Default: 10
"""


def kinds_and_texts(text: str) -> list[tuple[ElementKind, str]]:
    return [(e.kind, e.text) for e in parse_rst("d", text).elements]


def test_sections_become_headings_with_levels_and_the_first_is_the_title() -> None:
    doc = parse_rst("d", DOC)
    headings = [(e.level, e.text) for e in doc.elements if e.kind is ElementKind.HEADING]
    assert headings == [(1, "Configuration"), (2, "Settings")]
    assert doc.title == "Configuration" and doc.mime_type == "text/x-rst"


def test_a_list_table_is_one_table_with_its_header_and_rows_never_run_together() -> None:
    tables = [t for k, t in kinds_and_texts(DOC) if k is ElementKind.TABLE]
    assert tables == [
        "| Variable | Meaning and default |\n| --- | --- |\n"
        "| TOOL_HOME | Root directory. Default: ~/.local/share/tool. |\n"
        "| TOOL_MAX_LOGS | Log files to keep. Default: 10. |"
    ]


def test_sphinx_roles_read_as_their_titles_and_literals_lose_their_backquotes() -> None:
    paragraph = kinds_and_texts(DOC)[1]
    assert paragraph == (
        ElementKind.PARAGRAPH,
        "Every setting is an environment variable. See Configure paths and Settings.",
    )


def test_lists_code_unknown_directives_and_fields() -> None:
    elements = kinds_and_texts(DOC)
    assert (ElementKind.LIST_ITEM, "first item") in elements
    assert (ElementKind.CODE, "$ tool pin black") in elements
    # a Sphinx directive docutils does not know keeps its prose; a diagram directive is dropped
    assert (ElementKind.PARAGRAPH, "The pin command keeps an app at its version.") in elements
    assert not any("flowchart" in text for _, text in elements)
    assert (ElementKind.PARAGRAPH, "Default: 10") in elements
    code = next(e for e in parse_rst("d", DOC).elements if e.kind is ElementKind.CODE)
    assert code.attributes == {"language": "console"}


def test_include_and_raw_directives_read_nothing_from_disk_or_through() -> None:
    hostile = "Intro text here.\n\n.. include:: /etc/passwd\n\n.. raw:: html\n\n   <script>x()</script>\n"
    elements = kinds_and_texts(hostile)
    assert elements == [(ElementKind.PARAGRAPH, "Intro text here.")]


def test_text_docutils_cannot_parse_is_read_as_plain_text_with_a_warning(monkeypatch) -> None:
    from docutils.parsers.rst import Parser

    def boom(self, text, document):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(Parser, "parse", boom)
    doc = parse_rst("d", "First paragraph.\n\nSecond paragraph.")
    assert [e.text for e in doc.elements] == ["First paragraph.", "Second paragraph."]
    assert doc.warnings and "read as plain text" in doc.warnings[0]


def test_rst_files_are_detected_by_suffix_and_parsed_as_rst() -> None:
    data = DOC.encode()
    assert detect(data, "config.rst") == "rst" and detect(data, "notes.txt") == "text"
    doc = parse_bytes("d", data, name_hint="config.rst")
    assert doc.mime_type == "text/x-rst"
    assert any(e.kind is ElementKind.TABLE for e in doc.elements)


def test_role_titles() -> None:
    from ragwright.parse.rst import role_title

    assert [role_title(b) for b in ("~Settings", "~tool.config.Settings", "Guide <guide>", "!HOME", "x.y")] == [
        "Settings",
        "Settings",
        "Guide",
        "HOME",
        "x.y",
    ]
