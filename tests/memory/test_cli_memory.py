"""The CLI reaches conversation memory: ``ask --session`` and ``chat --session`` continue one stored
conversation across invocations, ``memory sessions`` / ``memory forget``, and the ``[memory]`` table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragwright.cli import main
from ragwright.config import load_settings
from ragwright.errors import ConfigError
from ragwright.memory import MemoryOptions, PersistentMemoryOptions

NORMANS = "# Normans\n\nThe Normans gave their name to Normandy, a region in France. Rollo led the Norse settlers.\n"
RHINE = "# Rhine\n\nThe Rhine begins in the Swiss Alps and flows north through Germany into the North Sea.\n"


@pytest.fixture
def store(tmp_path: Path, location: str) -> list[str]:
    """The CLI's flags for a store (an SQLite file or a postgresql:// database) holding two documents."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "normans.md").write_text(NORMANS)
    (docs / "rhine.md").write_text(RHINE)
    base = ["--store", location, "--embedder", "wordllama"]
    assert CliRunner().invoke(main, [*base, "ingest", str(docs)]).exit_code == 0
    return base


def test_a_session_continues_across_invocations(store: list[str]) -> None:
    run = CliRunner().invoke
    first = run(main, [*store, "--json", "ask", "--session", "trip", "What region did the Normans name?"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.output)["sources"]
    listed = run(main, [*store, "--json", "memory", "sessions"])
    assert json.loads(listed.output)["sessions"] == ["trip"]
    # a second process: the follow-up is condensed with the stored turn
    second = run(main, [*store, "--json", "chat", "--session", "trip"], input="Who led their settlers?\n")
    assert second.exit_code == 0, second.output
    turn = json.loads(second.output)["turns"][0]
    assert turn["condensed_by"] == "heuristic" and "Normans" in turn["standalone"]
    assert turn["sources"][0]["document_id"].endswith("normans.md")
    # another user's session of the same name is empty: the same follow-up is not condensed
    other = run(
        main, [*store, "--json", "chat", "--session", "trip", "--user", "bob"], input="Who led their settlers?\n"
    )
    assert json.loads(other.output)["turns"][0]["condensed_by"] == "unchanged"
    forgot = run(main, [*store, "--json", "memory", "forget", "--session", "trip"])
    assert json.loads(forgot.output)["removed"] == 4  # two questions, two answers
    assert json.loads(run(main, [*store, "--json", "memory", "sessions"]).output)["sessions"] == []


def test_chat_reads_questions_until_eof(store: list[str]) -> None:
    questions = "What region did the Normans name?\n\n/reset\nWho led their settlers?\n"
    result = CliRunner().invoke(main, [*store, "chat"], input=questions)
    assert result.exit_code == 0, result.output
    assert "(conversation reset)" in result.output and result.output.count("sources:") == 2
    assert "(searching:" not in result.output  # after /reset the follow-up has no history to lean on


def test_the_memory_table_of_the_configuration(tmp_path: Path) -> None:
    config = tmp_path / "ragwright.toml"
    config.write_text("[memory]\nbudget_tokens = 1000\nsummarize = 'off'\n[memory.persistent]\nmin_score = 0.4\n")
    settings = load_settings(config)
    assert settings.memory == MemoryOptions(
        budget_tokens=1000, summarize="off", persistent=PersistentMemoryOptions(min_score=0.4)
    )
    assert settings.to_dict()["memory"]["persistent"]["min_score"] == 0.4
    assert load_settings(None, cwd=tmp_path / "none").memory == MemoryOptions()
    config.write_text("[memory]\nbudget_token = 1000\n")
    with pytest.raises(ConfigError, match="did you mean 'budget_tokens'"):
        load_settings(config)
    config.write_text("[memory.persistent]\nmin_score = 2.0\n")
    with pytest.raises(ConfigError, match=r"\[memory.persistent\]"):
        load_settings(config)


def test_the_configured_memory_reaches_the_rag(tmp_path: Path, store: list[str]) -> None:
    config = tmp_path / "ragwright.toml"
    config.write_text("[memory]\nbudget_tokens = 300\nsummary_max_tokens = 32\n")
    result = CliRunner().invoke(
        main, [*store, "--config", str(config), "--json", "chat"], input="Tell me about the Normans. " * 40 + "\n"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["turns"][0]["budget"]["budget"] == 300
