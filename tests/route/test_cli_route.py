"""The CLI and the configuration file reach routing: ``ask --route auto|off`` and ``[route]``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragwright.cli import main
from ragwright.config.settings import Settings
from ragwright.errors import ConfigError
from ragwright.route import RouterOptions

FILM = "# Big Stone Gap\n\nBig Stone Gap is a 2014 American romantic comedy film directed by Adriana Trigiani.\n"
AUTHOR = "# Author\n\nAdriana Trigiani is an author. She lives in Greenwich Village in New York City.\n"
SECRET = "# Board minutes\n\nAdriana Trigiani secretly acquired Zorblax Holdings in Geneva.\n"


@pytest.fixture
def store(tmp_path: Path) -> list[str]:
    docs, secret = tmp_path / "docs", tmp_path / "secret"
    docs.mkdir()
    secret.mkdir()
    (docs / "film.md").write_text(FILM)
    (docs / "author.md").write_text(AUTHOR)
    (secret / "minutes.md").write_text(SECRET)
    base = ["--store", str(tmp_path / "s.db"), "--embedder", "wordllama"]
    run = CliRunner().invoke
    assert run(main, [*base, "ingest", str(docs), "--tenant", "acme"]).exit_code == 0
    assert run(main, [*base, "ingest", str(secret), "--tenant", "acme", "--acl", "board"]).exit_code == 0
    return base


def test_ask_route_auto(store: list[str]) -> None:
    run = CliRunner().invoke
    hello = run(main, [*store, "--json", "ask", "--route", "auto", "hello!", "--tenant", "acme"])
    assert hello.exit_code == 0, hello.output
    out = json.loads(hello.output)
    assert out["route"] == "none" and out["sources"] == [] and out["route_reason"].startswith("rules: chitchat")
    q = "What are the main themes across the documents about Zorblax Holdings?"
    themes = run(main, [*store, "--json", "ask", "--route", "auto", q, "--tenant", "acme"])
    assert themes.exit_code == 0, themes.output
    out = json.loads(themes.output)
    assert (
        out["route"] in ("hierarchical", "hybrid")
        and "graph_global unavailable (no entity graph" in out["route_reason"]
    )
    assert "Zorblax" not in themes.output and all(s["document_id"] != "minutes.md" for s in out["sources"])
    human = run(main, [*store, "ask", "--route", "auto", "Where does Adriana Trigiani live?", "--tenant", "acme"])
    assert human.exit_code == 0 and "Greenwich Village" in human.output


def test_ask_route_off_is_the_plain_ask(store: list[str]) -> None:
    out = CliRunner().invoke(main, [*store, "--json", "ask", "--route", "off", "hello", "--tenant", "acme"])
    assert out.exit_code == 0, out.output
    assert "route" not in json.loads(out.output)


def test_route_and_graph_are_exclusive(store: list[str]) -> None:
    out = CliRunner().invoke(main, [*store, "ask", "--route", "auto", "--graph", "local", "hello"])
    assert out.exit_code == 2 and "--route and --graph" in out.output


def test_the_route_table() -> None:
    assert Settings.from_dict({}).route is None
    settings = Settings.from_dict({"route": {"mode": "llm", "routes": ["hybrid", "none"]}})
    assert settings.route == RouterOptions(mode="llm", routes=("none", "hybrid"))
    assert settings.to_dict()["route"] == {"mode": "llm", "routes": ["none", "hybrid"], "llm_max_tokens": 96}
    assert Settings.from_dict({"route": True}).route == RouterOptions()
    with pytest.raises(ConfigError, match=r"\[route\] route\.mode='smart' is invalid"):
        Settings.from_dict({"route": {"mode": "smart"}})
    with pytest.raises(ConfigError, match="did you mean 'routes'"):
        Settings.from_dict({"route": {"route": ["hybrid"]}})
