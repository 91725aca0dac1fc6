"""Imports flow one way (DESIGN.md §2): no import cycle, no module importing a higher layer.

Read from the source with ``ast`` (nothing is imported): every ``import ragwright…`` / ``from ragwright…``
executed when a module loads — at module level, outside ``if TYPE_CHECKING:``. Imports inside a
function are the sanctioned lazy path (optional dependencies, a facade re-exporting a higher module on
first use) and are not edges here. Importing a submodule runs its parent packages' ``__init__`` too,
so those count as edges (except a module's own ancestors, which are already loading).
"""

from __future__ import annotations

import ast
from pathlib import Path

import ragwright

PACKAGE = Path(ragwright.__file__).parent

#: DESIGN.md §2, bottom (0) to top. A name is a top-level module or package of ``ragwright``; a
#: ``cli*`` module is the top layer.
LAYERS: dict[str, int] = {
    **dict.fromkeys(("model", "errors", "_validate", "_sync", "_deps", "_paths", "telemetry"), 0),
    **dict.fromkeys(("options", "parse", "sources", "models", "index", "cache"), 1),
    **dict.fromkeys(("chunk", "stores", "generate"), 2),
    **dict.fromkeys(("ingest", "postprocess"), 3),
    **dict.fromkeys(("retrieve", "graph", "agent", "hierarchy", "federation", "memory", "route"), 4),
    **dict.fromkeys(
        (
            "rag",
            "rag_admin",
            "rag_answers",
            "rag_telemetry",
            "rag_graph",
            "rag_agent",
            "rag_hierarchy",
            "rag_federation",
            "rag_memory",
            "rag_route",
            "config",
            "testing",
        ),
        5,
    ),
    **dict.fromkeys(("eval", "server"), 6),
}
CLI = 7


def _reexported() -> dict[str, str]:
    """``ragwright.options`` re-exports every option class lazily: name -> the module that defines it."""
    from ragwright import options

    out = dict(options._STAGE_OPTIONS)
    out.update(dict.fromkeys(options._RETRIEVAL_OPTIONS, "ragwright.retrieve.options"))
    out.update(dict.fromkeys(options._TRANSFORM_OPTIONS, "ragwright.retrieve.transforms.options"))
    out.update(dict.fromkeys(options._STRATEGY_OPTIONS, "ragwright.retrieve.strategies.options"))
    out["CacheOptions"] = "ragwright.cache.options"
    return out


#: An import through the re-export is an edge to the defining module (``ingest`` importing
#: ``RetrievalOptions`` from ``ragwright.options`` imports ``retrieve``).
REEXPORTED = _reexported()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _load_time_imports(tree: ast.Module, module: str, is_package: bool) -> set[str]:
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                if not _is_type_checking(node.test):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)
            elif isinstance(node, ast.With):
                visit(node.body)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.split(".")[0] == "ragwright")
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".") if is_package else module.split(".")[:-1]
                    base = base[: len(base) - node.level + 1]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                if target.split(".")[0] == "ragwright":
                    found.add(target)
                    found.update(f"{target}.{a.name}" for a in node.names)  # a submodule imported by name
                    if target == "ragwright.options":  # the lazy re-export: the module it really loads
                        found.update(REEXPORTED[a.name] for a in node.names if a.name in REEXPORTED)

    visit(tree.body)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        targets = _load_time_imports(ast.parse(path.read_text(encoding="utf-8")), module, path.name == "__init__.py")
        edges: set[str] = set()
        for target in targets:
            parts = target.split(".")
            # the module itself and every parent package whose __init__ runs first
            edges.update(".".join(parts[:k]) for k in range(2, len(parts) + 1) if ".".join(parts[:k]) in paths)
        graph[module] = {e for e in edges if e != module and not module.startswith(e + ".")}
    return graph


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) == 1:
        return None  # the package's own __init__: the curated public API, imports lazily
    return CLI if parts[1].startswith("cli") else LAYERS.get(parts[1])


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return out


def test_every_top_level_module_has_a_layer() -> None:
    modules = {m.split(".")[1] for m in import_graph() if "." in m}
    unplaced = sorted(m for m in modules if m not in LAYERS and not m.startswith("cli") and m != "samples")
    assert unplaced == [], f"place these in LAYERS (DESIGN.md §2): {unplaced}"


def test_there_is_no_import_cycle() -> None:
    assert _cycles(import_graph()) == []


def test_no_module_imports_a_higher_layer() -> None:
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph().items()
        for target in targets
        if (lm := _layer(module)) is not None and (lt := _layer(target)) is not None and lt > lm
    )
    assert upward == []


def test_the_checker_sees_cycles_and_upward_imports() -> None:
    """The analysis itself, on a made-up graph and a made-up module body."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "from ragwright.model import chunk\n"
        "if TYPE_CHECKING:\n    from ragwright.rag import Rag\n"
        "def f():\n    from ragwright.server import app\n"
        "from . import sibling\n"
    )
    found = _load_time_imports(tree, "ragwright.stores.base", is_package=False)
    assert found == {"ragwright.model", "ragwright.model.chunk", "ragwright.stores", "ragwright.stores.sibling"}
    assert _layer("ragwright.retrieve.pipeline") == 4 and _layer("ragwright.cli.ingest") == CLI
