"""The CLI reaches GraphRAG (an SQLite file or a postgresql:// store): ingest --graph, graph show (as the
caller), ask --graph local|global."""

import json
from pathlib import Path

from click.testing import CliRunner

from ragwright.cli import main

FILM = "# Big Stone Gap\n\nBig Stone Gap is a 2014 American romantic comedy film directed by Adriana Trigiani.\n"
AUTHOR = "# Author\n\nAdriana Trigiani is an author. She lives in Greenwich Village in New York City.\n"


def test_ingest_show_and_ask_with_the_graph(tmp_path: Path, location: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "film.md").write_text(FILM)
    (docs / "author.md").write_text(AUTHOR)
    store = location
    run = CliRunner().invoke
    base = ["--store", store, "--embedder", "wordllama"]
    assert run(main, [*base, "ingest", str(docs), "--graph", "--tenant", "acme"]).exit_code == 0
    shown = run(main, [*base, "--json", "graph", "show", "Adriana Trigiani", "--tenant", "acme"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["entity"]["name"] == "Adriana Trigiani"
    other = run(main, [*base, "--json", "graph", "show", "Adriana Trigiani", "--tenant", "globex"])
    assert json.loads(other.output)["entity"] is None
    local = run(main, [*base, "--json", "ask", "--graph", "local", "Who directed Big Stone Gap?", "--tenant", "acme"])
    assert local.exit_code == 0, local.output
    assert "Adriana Trigiani" in json.loads(local.output)["answer"]
    themes = run(main, [*base, "--json", "ask", "--graph", "global", "What are the main themes?", "--tenant", "acme"])
    answer = json.loads(themes.output)
    assert "Main themes" in answer["answer"] and answer["citations"]
