"""Extras that exist (issue 22 item 6): every ``ragwright[X]`` an error message, the README or the docs
name is an extra of ``pyproject.toml``, and the module an error blames is one that extra installs."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import tomllib
from pathlib import Path

from ragwright.errors import MissingDependencyError
from tests.conftest import REPO

SRC = REPO / "src" / "ragwright"
NAMED = re.compile(r"ragwright\[([A-Za-z0-9_,\- ]+)\]")


def _project() -> dict:  # type: ignore[type-arg]
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]  # type: ignore[no-any-return]


def _dist(requirement: str) -> set[str]:
    """The distributions a requirement brings: ``psycopg[binary,pool]`` → psycopg, psycopg-binary, psycopg-pool."""
    match = re.match(r"\s*([A-Za-z0-9_.\-]+)(?:\[([^\]]*)\])?", requirement)
    assert match, requirement
    name = match.group(1).lower().replace("_", "-")
    extras = [e.strip() for e in (match.group(2) or "").split(",") if e.strip()]
    return {name, *(f"{name}-{e}" for e in extras if e)}


def _calls() -> list[tuple[Path, int, str | None, str]]:
    """``(file, line, module, extra)`` of every ``require(module, extra)`` / ``MissingDependencyError(module,
    extra)`` with a literal (or module-constant) extra, and every ``extra="…"`` keyword."""
    found: list[tuple[Path, int, str | None, str]] = []
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = {
            t.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            for t in node.targets
            if isinstance(t, ast.Name) and isinstance(node.value.value, str)
        }

        def text(node: ast.AST, constants: dict[str, str] = constants) -> str | None:
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                return node.value
            if isinstance(node, ast.Name):
                return constants.get(node.id)
            return None

        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name in ("require", "MissingDependencyError") and len(node.args) >= 2:
                extra = text(node.args[1])
                if extra is not None:
                    found.append((path, node.lineno, text(node.args[0]), extra))
            for kw in node.keywords if name != "ConfigDict" else ():  # pydantic's extra="forbid" is no extra
                if kw.arg == "extra" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    found.append((path, node.lineno, None, kw.value.value))
    return found


def test_every_extra_an_error_names_exists() -> None:
    extras = set(_project()["optional-dependencies"])
    calls = _calls()
    assert len(calls) > 20  # the scan sees the code
    for path, line, module, extra in calls:
        shown = NAMED.findall(str(MissingDependencyError(module or "x", extra)))
        for name in shown:
            assert name in extras, f"{path.relative_to(REPO)}:{line} names ragwright[{name}], which is no extra"


def test_every_ragwright_bracket_in_text_is_an_extra() -> None:
    extras = set(_project()["optional-dependencies"])
    files = [*SRC.rglob("*.py"), REPO / "README.md", *(REPO / "docs").rglob("*.md")]
    for path in files:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for group in NAMED.findall(line):
                for name in (g.strip() for g in group.split(",")):
                    assert name in extras, f"{path.relative_to(REPO)}:{n} names ragwright[{name}]"


def test_the_extra_an_error_names_installs_the_missing_module() -> None:
    """``require("pytesseract", "ocr")`` named an extra that does not bring pytesseract."""
    project = _project()
    base = set().union(*(_dist(r) for r in project["dependencies"]))
    extras = {name: set().union(*(_dist(r) for r in reqs)) for name, reqs in project["optional-dependencies"].items()}
    owners = importlib.metadata.packages_distributions()
    for path, line, module, extra in _calls():
        if module is None:
            continue
        top = module.split(".")[0]
        dists = {d.lower().replace("_", "-") for d in owners.get(top, [])}
        if not dists:
            continue  # not an importable module (a program such as tesseract): its error says how to install it
        brings = base | (extras.get(extra, set()) if extra not in ("", "base") else set())
        assert dists & brings, f"{path.relative_to(REPO)}:{line}: ragwright[{extra}] does not install {module}"
