"""The agent from the CLI (``ask --agent``), the configuration file (``[agent]``) and the HTTP server
(``"agent": true``), each with a scripted chat model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragwright.agent import AgentOptions
from ragwright.config import load_settings
from ragwright.config.wiring import build_rag
from ragwright.errors import ConfigError
from ragwright.rag import Rag
from ragwright.rag_agent import agent_of, enable_agent
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat
from tests.agent.conftest import act
from tests.cli_runner import cli_in

DOC = "# Leave\n\n## Policy\n\nEmployees get 25 days of paid time off a year.\n"


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run ``ragwright`` in *tmp_path* with the hashing embedder and, when given, a scripted chat model."""
    return cli_in(tmp_path, monkeypatch, DOC)


def test_ask_agent_on_the_command_line(cli: Any, tmp_path: Path) -> None:
    cli("ingest", "docs")
    refused = cli("ask", "How much paid time off?", "--agent", code=2)
    assert "the agent (--agent / [agent]) needs a chat model" in refused.stderr and "--llm local" in refused.stderr
    chat = ScriptedChat(
        [act("search", "paid time off days"), act("answer", "Employees get 25 days a year [Source 1].")]
    )
    cli.chat["scripted"] = chat
    out = json.loads(cli("--llm", "scripted", "ask", "How much paid time off?", "--agent", "--json").stdout)
    assert out["mode"] == "agent" and not out["declined"] and out["citations"][0]["document_id"].endswith("leave.md")
    assert [s["tool"] for s in out["trajectory"]] == ["search", "search"]  # the first search, then the model's
    assert out["trajectory"][1]["arguments"] == {"input": "paid time off days"}
    chat2 = ScriptedChat([act("search", "paid time off days"), act("answer", "25 days [Source 1].")])
    cli.chat["scripted"] = chat2
    text = cli("--llm", "scripted", "ask", "How much paid time off?", "--agent").stdout
    assert text.startswith("25 days [Source 1].")
    both = cli("--llm", "scripted", "ask", "x", "--agent", "--graph", "local", code=2)
    assert "--agent and --graph" in both.stderr


def test_the_agent_table_in_ragwright_toml(cli: Any, tmp_path: Path) -> None:
    cli("ingest", "docs")
    (tmp_path / "ragwright.toml").write_text("[agent]\nmax_rounds = 2\nmax_tool_calls = 3\n")
    settings = load_settings(tmp_path / "ragwright.toml")
    assert settings.agent == AgentOptions(max_rounds=2, max_tool_calls=3)
    assert settings.to_dict()["agent"]["max_rounds"] == 2
    bare = load_settings(cwd=tmp_path / "docs")  # no ragwright.toml there
    assert bare.with_overrides(flags={"agent": True}).agent == AgentOptions()
    assert bare.agent is None and bare.to_dict()["agent"] is False
    (tmp_path / "bad.toml").write_text("[agent]\nmax_round = 2\n")
    with pytest.raises(ConfigError, match=r"\[agent\] unknown option 'max_round'.*did you mean 'max_rounds'"):
        load_settings(tmp_path / "bad.toml")
    (tmp_path / "bad.toml").write_text("[agent]\nmax_rounds = 0\n")
    with pytest.raises(ConfigError, match=r"agent\.max_rounds=0 is invalid"):
        load_settings(tmp_path / "bad.toml")
    with pytest.raises(ConfigError, match="the agent"):
        build_rag(settings, MemoryStore(), HashingEmbedder())
    # the file's caps reach the loop: an endless searcher stops after 2 tool turns
    cli.chat["scripted"] = ScriptedChat(lambda m: act("search", f"time off {len(m)}"))
    out = json.loads(cli("--llm", "scripted", "ask", "How much paid time off?", "--json").stdout)
    stop = next(s for s in out["trajectory"] if s["tool"] == "stop")
    assert stop == {**stop, "reason": "agent_cap_rounds", "rounds": 2}
    shown = json.loads(cli("config", "show", "--json", "--no-agent").stdout)
    assert shown["agent"] is False


def test_the_server_answers_with_the_agent_when_asked() -> None:
    from fastapi.testclient import TestClient

    from ragwright.server import create_app
    from ragwright.sources import BytesSource

    chat = ScriptedChat(
        [
            act("search", "paid time off", tenant="other", groups=["*"]),
            act("answer", "Employees get 25 days [Source 1]."),
            act("search", "paid time off"),
            act("answer", "Employees get 25 days [Source 1]."),
        ]
    )
    rag = Rag(MemoryStore(), HashingEmbedder(), llm=chat)
    rag.ingest(BytesSource({"leave.md": DOC.encode()}))
    with TestClient(create_app(rag, {"staging_dir": None})) as client:
        plain = client.post(
            "/ask", json={"question": "How much paid time off?", "options": {"answer_mode": "extractive"}}
        )
        assert plain.status_code == 200 and "trajectory" not in plain.json()
        body = client.post("/ask", json={"question": "How much paid time off?", "agent": True}).json()
        assert body["mode"] == "agent" and body["trajectory"][1]["ignored_arguments"] == ["groups", "tenant"]
        assert body["citations"][0]["document_id"] == "leave.md"
        events = client.post(
            "/ask", json={"question": "How much paid time off?", "agent": True}, headers={"Accept": "text/event-stream"}
        )
        assert events.status_code == 200 and "Employees get 25 days" in events.text and "event: done" in events.text
    assert agent_of(rag) is not None and agent_of(rag) is enable_agent(rag)


def test_the_server_uses_the_agent_options_it_was_given() -> None:
    """``ragwright serve`` with an [agent] table enables the agent with its caps before serving."""
    from fastapi.testclient import TestClient

    from ragwright.server import create_app
    from ragwright.sources import BytesSource

    rag = Rag(MemoryStore(), HashingEmbedder(), llm=ScriptedChat(lambda m: act("search", f"time off {len(m)}")))
    rag.ingest(BytesSource({"leave.md": DOC.encode()}))
    enable_agent(rag, AgentOptions(max_rounds=1))
    with TestClient(create_app(rag, {"staging_dir": None})) as client:
        body = client.post("/ask", json={"question": "How much paid time off?", "agent": True}).json()
    stop = next(s for s in body["trajectory"] if s["tool"] == "stop")
    assert stop["reason"] == "agent_cap_rounds" and stop["rounds"] == 1
