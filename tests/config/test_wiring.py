"""A configuration becomes a working Rag the same way for the CLI, the HTTP server and the MCP server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragwright.config import load_settings
from ragwright.config.wiring import build_rag
from ragwright.errors import ConfigError
from ragwright.retrieve.strategies.compose import layers
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat
from tests.cli_runner import cli_in

DOC = "# Leave\n\n## Policy\n\nEmployees get 25 days of paid time off a year.\n\n## Sick leave\n\nUnlimited.\n"


def test_every_section_reaches_the_rag(tmp_path: Path) -> None:
    path = tmp_path / "ragwright.toml"
    path.write_text(
        "[retrieval]\ntop_k = 3\nuse_mmr = true\n[answers]\nverify_answer = true\n"
        "[transforms]\nhyde = true\nmulti_query = {variant_count = 2}\n"
        "[strategies]\ntags = true\ntime_weighting = true\ndeep_research = true\n"
        "[cache]\nenabled = true\nresult_ttl_s = 30\n[parents]\nchunk_size = 512\noverlap = 10\n"
        "[chunking]\nstrategy = 'recursive'\nmax_tokens = 200\n[identity]\ntenant = 'acme'\ngroups = ['hr']\n"
    )
    settings = load_settings(path)
    llm = ScriptedChat(default="x")
    rag = build_rag(settings, MemoryStore(), HashingEmbedder(), llm=llm)
    assert rag.retrieval_options == settings.retrieval and rag.retrieval_options.top_k == 3
    assert rag.rag_options.verify_answer and rag.rag_options.top_k == 3
    assert rag.retriever.transforms.hyde is not None and rag.retriever.transforms.multi_query is not None
    assert rag.retriever.llm is llm and rag.llm is llm
    stack = layers(rag.strategies)
    for name in ("CachedRetriever", "TagRetriever", "TimeWeightedRetriever", "DeepResearchRetriever"):
        assert name in stack
    assert rag.cache is not None and rag.cache_options.result_ttl_s == 30
    assert rag.ingestion.parents is not None and rag.ingestion.parents.chunk_size == 512
    assert type(rag.chunker).__name__.lower().startswith("recursive")
    assert rag.identity.tenant == "acme" and rag.identity.groups == ("hr",)


def test_a_stage_that_needs_a_model_without_one_is_refused(tmp_path: Path) -> None:
    settings = load_settings().with_overrides(flags={"hyde": True})
    with pytest.raises(ConfigError, match=r"HyDE \(--hyde / \[transforms\] hyde\) needs a chat model"):
        build_rag(settings, MemoryStore(), HashingEmbedder())
    with pytest.raises(ConfigError, match="deep research"):
        build_rag(load_settings().with_overrides(flags={"deep_research": True}), MemoryStore(), HashingEmbedder())


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run ``ragwright`` in *tmp_path* with the hashing embedder and, when given, a scripted chat model."""
    return cli_in(tmp_path, monkeypatch, DOC)


def test_the_cli_reads_ragwright_toml_and_its_flags_win(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "ragwright.toml").write_text("store = 'kb.db'\n[retrieval]\ntop_k = 1\n")
    cli("ingest", "docs")
    assert (tmp_path / "kb.db").exists()  # the store named by the file
    found = json.loads(cli("search", "paid time off", "--json").stdout)["results"]
    assert len(found) == 1  # [retrieval] top_k
    found = json.loads(cli("search", "paid time off", "--json", "--top-k", "2").stdout)["results"]
    assert len(found) == 2  # the flag wins
    shown = json.loads(cli("config", "show", "--json", "--mmr", "--top-k", "4").stdout)
    assert shown["source"] == str(tmp_path / "ragwright.toml") and shown["store"] == str(tmp_path / "kb.db")
    assert shown["retrieval"]["top_k"] == 4 and shown["retrieval"]["use_mmr"]
    text = cli("config", "show").stdout
    assert text.startswith("# ragwright effective configuration (from") and "\n[retrieval]\ntop_k = 1\n" in text
    other = tmp_path / "other.toml"
    other.write_text("[retrieval]\ntop_kk = 1\n")
    bad = cli("search", "x", "--config", str(other), code=2)
    assert "[retrieval] unknown option 'top_kk'" in bad.stderr and "did you mean 'top_k'?" in bad.stderr


def test_search_and_ask_switch_a_stage_on(cli: Any, tmp_path: Path) -> None:
    cli("ingest", "docs")
    refused = cli("search", "time off", "--hyde", code=2)
    assert "HyDE (--hyde / [transforms] hyde) needs a chat model" in refused.stderr
    chat = ScriptedChat(default="Employees receive paid time off every year.")
    cli.chat["scripted"] = chat
    cli("--llm", "scripted", "search", "time off", "--hyde", "--json")
    assert any("Write a short passage" in call.last_user for call in chat.calls)  # HyDE ran
    calls = len(chat.calls)
    cli("--llm", "scripted", "search", "time off", "--json")  # without the switch: no HyDE
    assert len(chat.calls) == calls
    cli("--llm", "scripted", "ask", "How much paid time off?", "--multi-query", "--answer-mode", "extractive")
    assert any("different phrasings" in call.last_user for call in chat.calls[calls:])  # multi-query ran


def test_ingest_switches_build_parents_and_chunks(cli: Any, tmp_path: Path) -> None:
    cli("ingest", "docs", "--parents", "--chunking", "recursive")
    from ragwright.stores.sqlite import SqliteStore

    with SqliteStore(tmp_path / ".ragwright" / "store.db") as store:
        (record,) = store.list_records()
    assert record.chunker_version.startswith("recursive") and record.chunker_version.endswith(":2048/100")
