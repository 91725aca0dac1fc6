"""The README's promises, executed: its Python quick-start runs as written, and the `--json` key table
names exactly the keys the commands print."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import ragwright
from ragwright.cli import main

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
SAMPLE = Path(ragwright.__file__).parent / "samples" / "quickstart"


def python_snippet() -> str:
    blocks: list[str] = re.findall(r"^```python\n(.*?)^```", README, re.S | re.M)
    assert len(blocks) == 1, "the README has one Python quick-start block"
    return blocks[0]


def json_table() -> dict[str, str]:
    """``--json`` table rows: command → the cell listing its keys."""
    section = README.split("### `--json` output (stable keys)", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([\w ]+)`(?: \(([^)]*)\))? \| (.*) \|$", section, re.M)
    return {f"{cmd} ({qual})" if qual else cmd: cell for cmd, qual, cell in rows}


def top_keys(cell: str) -> set[str]:
    """The keys a cell names at the top level: backticked names outside parentheses."""
    outside = re.sub(r"\([^()]*\)", "", cell)
    return set(re.findall(r"`(\w+)`", outside))


def shapes(cell: str) -> list[set[str]]:
    """The ``{a, b}`` shapes a cell names, in order."""
    return [{k.strip() for k in shape.split(",")} for shape in re.findall(r"`\{([^`{}]*)\}`", cell)]


def test_the_table_parses() -> None:
    table = json_table()
    assert {"ingest", "search", "ask", "status", "remove"} <= set(table)
    assert top_keys("`a` (list of `{b, c}`), `d` (and `e`)") == {"a", "d"}
    assert shapes("`a` (list of `{b, c}`), `d` to `{e}`") == [{"b", "c"}, {"e"}]
    assert len(shapes(table["search"])) == 2


@pytest.mark.slow
def test_the_python_quick_start_runs_as_written(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "docs")
    check = """
import json
print("README-CHECK " + json.dumps({
    "added": report.added, "failed": len(report.failed),
    "results": [[r.chunk.tenant, r.chunk.metadata.get("department"), list(r.chunk.acl)] for r in results],
    "declined": answer.declined, "citations": len(answer.citations),
}))
"""
    (tmp_path / "quickstart.py").write_text(python_snippet() + check, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "quickstart.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("README-CHECK "))
    seen = json.loads(line.removeprefix("README-CHECK "))
    assert seen["added"] == len(list(SAMPLE.glob("*.md"))) and seen["failed"] == 0
    assert 0 < len(seen["results"]) <= 5
    assert all(r == ["acme", "finance", ["finance"]] for r in seen["results"]), seen["results"]
    # The sample (refunds, shipping, security, warranty) says nothing of Q4 targets: an honest decline.
    assert seen["declined"] is True and seen["citations"] == 0
    assert (tmp_path / ".ragwright" / "store.db").is_file()


def cli_json(*args: str) -> Any:
    result = CliRunner().invoke(main, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("readme-json")
    shutil.copytree(SAMPLE, root / "docs")
    store = ["--store", str(root / "store.db"), "--embedder", "wordllama"]
    out = {"ingest": cli_json("ingest", str(root / "docs"), *store)}
    out["search"] = cli_json("search", "How long do refunds take?", *store)
    out["ask"] = cli_json("ask", "How long do refunds take?", *store)
    out["status"] = cli_json("status", *store)
    out["remove"] = cli_json("remove", out["search"]["results"][0]["document_id"], *store)
    return out


@pytest.mark.parametrize("command", ["ingest", "status", "remove"])
def test_flat_outputs_have_the_documented_keys(outputs: dict[str, Any], command: str) -> None:
    assert set(outputs[command]) == top_keys(json_table()[command])


def test_search_output_has_the_documented_keys(outputs: dict[str, Any]) -> None:
    cell = json_table()["search"]
    result_shape, arm_shape = shapes(cell)
    assert set(outputs["search"]) == top_keys(cell) == {"results"}
    assert outputs["search"]["results"]
    for result in outputs["search"]["results"]:
        assert set(result) == result_shape
        assert result["arms"] and all(set(hit) == arm_shape for hit in result["arms"].values())


def test_ask_output_has_the_documented_keys(outputs: dict[str, Any]) -> None:
    cell = json_table()["ask"]
    answer = outputs["ask"]
    assert set(answer) == top_keys(cell)  # `prompts` appears only with --show-prompt (in parentheses)
    assert answer["citations"] and all(set(c) == shapes(cell)[0] for c in answer["citations"])
    result_shape = shapes(json_table()["search"])[0]
    assert answer["sources"] and all(set(s) == result_shape | {"source", "compressed_text"} for s in answer["sources"])
