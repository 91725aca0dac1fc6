"""Source-code parser: Python split by ast, other languages by a bracket-aware block scanner."""

from __future__ import annotations

from typing import Any

import pytest

from ragwright.errors import LimitExceeded, ParseError
from ragwright.model.document import Document, ElementKind
from ragwright.options import ParseOptions
from ragwright.parse.code import MAX_CLASS_LINES, language_for, parse_code

MODULE = b'''"""Widget helpers.

Second paragraph."""

import os
from typing import Any

CONSTANT = 3


# Adds things.
@decorator
def add(a, b):
    return a + b


async def fetch(url: str) -> bytes:
    return b""


class Widget:
    """A widget."""

    size = 1

    def grow(self) -> None:
        self.size += 1


if __name__ == "__main__":
    print(add(1, 2))
'''


def summary(doc: Document) -> list[tuple[str, Any, Any, Any, Any]]:
    return [
        (e.kind.value, e.attributes.get("symbol"), e.attributes.get("kind"), e.attributes.get("start_line"),
         e.attributes.get("end_line"))
        for e in doc.elements
    ]  # fmt: skip


def test_python_split_by_definitions() -> None:
    doc = parse_code("m", MODULE, name_hint="pkg/widgets.py")
    assert summary(doc) == [
        ("paragraph", None, "docstring", None, None),
        ("code", None, "statements", 5, 8),
        ("code", "add", "function", 11, 14),
        ("code", "fetch", "function", 17, 18),
        ("code", "Widget", "class", 21, 27),
        ("code", None, "statements", 30, 31),
    ]
    assert doc.elements[0].text == "Widget helpers.\n\nSecond paragraph."
    add = doc.elements[2]
    assert add.text == "# Adds things.\n@decorator\ndef add(a, b):\n    return a + b"
    assert all(e.attributes["language"] == "python" for e in doc.elements)
    assert doc.metadata == {"language": "python", "lines": 32, "symbols": ["add", "fetch", "Widget"]}
    assert doc.title == "widgets.py"
    assert doc.warnings == ()


def test_long_class_split_into_methods() -> None:
    methods = "".join(f"    def m{n}(self) -> int:\n        x = {n}\n        return x\n\n" for n in range(30))
    source = f"class Big:\n    '''Big.'''\n\n    attr = 1\n\n{methods}".encode()
    assert source.count(b"\n") > MAX_CLASS_LINES
    doc = parse_code("b", source, language="python")
    symbols = [e.attributes["symbol"] for e in doc.elements]
    assert symbols[:3] == ["Big", "Big.m0", "Big.m1"]
    assert len(symbols) == 31
    assert doc.elements[0].text == "class Big:\n    '''Big.'''\n\n    attr = 1"
    assert doc.elements[1].attributes["kind"] == "method"
    assert doc.elements[1].attributes["parent"] == "Big"
    assert doc.elements[1].text == "    def m0(self) -> int:\n        x = 0\n        return x"


def test_python_syntax_error_falls_back_with_warning() -> None:
    broken = MODULE.replace(b"return a + b", b"return a +")
    doc = parse_code("m", broken, language="python")
    assert len(doc.warnings) == 1
    assert doc.warnings[0].startswith("Python syntax error at line 14")
    symbols = [e.attributes.get("symbol") for e in doc.elements]
    assert symbols == [None, "add", "fetch", "Widget", None]
    assert "return a +" in doc.text


JS = b"""import { x } from "y";
import z from "z";

// Adds.
export function add(a, b) {
  const s = "}{";

  return a + b;
}

export const mul = (a, b) => {
  return a * b;
};

class Box extends Base {
  constructor() {
    super();
  }

  size() { return 1; }
}

module.exports = { add };
"""


def test_javascript_blocks_are_bracket_balanced() -> None:
    doc = parse_code("j", JS, name_hint="src/a.js")
    assert summary(doc) == [
        ("code", None, "statements", 1, 2),
        ("code", "add", "function", 4, 9),
        ("code", "mul", "function", 11, 13),
        ("code", "Box", "class", 15, 21),
        ("code", None, "statements", 23, 23),
    ]
    assert doc.metadata["language"] == "javascript"
    assert doc.elements[1].attributes["language"] == "javascript"


@pytest.mark.parametrize(
    ("name", "source", "expected"),
    [
        (
            "a.c",
            b"#include <stdio.h>\n\nstatic int add(int a, int b)\n{\n    return a + b;\n}\n\n"
            b"struct point {\n    int x;\n};\n\nint main(void) {\n    if (add(1, 2)) {\n\n        return 1;\n"
            b"    }\n    return 0;\n}\n",
            [(None, "statements"), ("add", "function"), ("point", "struct"), ("main", "function")],
        ),
        (
            "a.go",
            b'package main\n\nimport "fmt"\n\ntype Point struct {\n\tX int\n}\n\n'
            b"func (p *Point) Move(dx int) {\n\tp.X += dx\n}\n",
            [(None, "statements"), ("Point", "type"), ("Move", "function")],
        ),
        (
            "a.rs",
            b"use std::io;\n\npub struct A { x: i32 }\n\nimpl A {\n    pub fn new() -> Self { A { x: 1 } }\n}\n\n"
            b"pub(crate) async fn run() {}\n",
            [(None, "statements"), ("A", "struct"), ("A", "impl"), ("run", "function")],
        ),
        (
            "Foo.java",
            b"package a;\n\nimport java.util.List;\n\n/** Doc. */\n@Service\npublic class Foo extends Bar {\n"
            b"    public static void main(String[] args) {\n    }\n\n    void other() {}\n}\n",
            [(None, "statements"), ("Foo", "class")],
        ),
        (
            "schema.sql",
            b"-- schema\nCREATE TABLE IF NOT EXISTS users (\n  id INT,\n\n  name TEXT\n);\n\n"
            b"CREATE OR REPLACE VIEW v AS SELECT * FROM users;\n\nSELECT 1;\n",
            [("users", "table"), ("v", "view"), (None, "statements")],
        ),
        (
            "run.sh",
            b"#!/bin/bash\nset -e\n\ngreet() {\n  echo hi\n}\n\nfunction other {\n  :\n}\n",
            [(None, "statements"), ("greet", "function"), ("other", "function")],
        ),
        (
            "app.rb",
            b"require 'x'\n\ndef hello(name)\n  puts name\nend\n",
            [(None, "statements"), ("hello", "function")],
        ),
    ],
)
def test_other_languages(name: str, source: bytes, expected: list[tuple[str | None, str]]) -> None:
    doc = parse_code("x", source, name_hint=name)
    assert [(e.attributes.get("symbol"), e.attributes["kind"]) for e in doc.elements] == expected
    assert all(e.kind is ElementKind.CODE for e in doc.elements)
    # every non-blank source line is kept exactly once
    lines = [ln for e in doc.elements for ln in e.text.split("\n") if ln.strip()]
    assert lines == [ln.expandtabs(4) for ln in source.decode().split("\n") if ln.strip()]


def test_language_resolution() -> None:
    assert language_for("src/app.TS") == "typescript"
    assert language_for("x.unknown") is None
    assert language_for(None) is None
    doc = parse_code("x", b"fn main() {}\n", language="rust", name_hint="weird.txt")
    assert doc.metadata["language"] == "rust"
    doc = parse_code("x", b"print(1)\n", source="/repo/tool.py")
    assert doc.metadata["language"] == "python"
    plain = parse_code("x", b"some words\n")
    assert "language" not in plain.metadata
    assert "language" not in plain.elements[0].attributes


def test_errors() -> None:
    with pytest.raises(ParseError, match="binary"):
        parse_code("x", b"\x00\x01\x02", name_hint="a.py")
    with pytest.raises(ParseError, match="empty"):
        parse_code("x", b"\n\n  \n", name_hint="a.py")
    with pytest.raises(LimitExceeded, match="max_file_bytes"):
        parse_code("x", b"x = 1\n" * 100, name_hint="a.py", options=ParseOptions(max_file_bytes=10))


def test_registry_routes_source_files() -> None:
    from ragwright.parse import parse_bytes

    doc = parse_bytes("r", MODULE, name_hint="widgets.py", options=ParseOptions(isolate=False))
    assert doc.metadata["language"] == "python"
    assert [e.attributes.get("symbol") for e in doc.elements if e.attributes.get("symbol")] == [
        "add",
        "fetch",
        "Widget",
    ]
