"""Run ``ragwright`` in a temporary folder, with the hashing embedder and scripted chat models by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ragwright.cli import main
from ragwright.testing.doubles import HashingEmbedder


def cli_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, doc: str) -> Any:
    """A ``run(*args, code=0)`` that invokes ``ragwright`` in *tmp_path* (``docs/leave.md`` holds *doc*);
    ``run.chat[name] = model`` makes ``--llm name`` load that model."""
    import ragwright.config.wiring as wiring
    import ragwright.models.embedders as embedders

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    monkeypatch.delenv("RAGWRIGHT_LLM", raising=False)
    monkeypatch.setattr(embedders, "load_embedder", lambda spec: HashingEmbedder())
    chat: dict[str, Any] = {}
    monkeypatch.setattr(wiring, "load_llm", lambda settings: chat.get(settings.llm))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "leave.md").write_text(doc)

    def run(*args: str, code: int = 0) -> Any:
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
        assert result.exit_code == code, result.output + result.stderr
        return result

    run.chat = chat  # type: ignore[attr-defined]
    return run
