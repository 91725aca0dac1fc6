"""Every capability README's feature list names can be switched on from the CLI, the server and the
configuration file (issue 22 item 3).

The test walks the feature list: each bullet (``- **Name**: …``) must have an entry in :data:`BULLETS` —
the capabilities it names, each found in the bullet's text, or the reason it has none to switch (a
command, always on). Each capability is then switched on three ways and checked on the effective
configuration:

* **CLI**: ``ragwright config show --json <flags>`` (the switches of ``search``/``ask``/``ingest`` and
  the global options) — and the flags exist on the command named;
* **file**: ``ragwright.toml`` read by :func:`ragwright.config.load_settings`;
* **server**: ``ragwright --config ragwright.toml serve`` builds its app from the file (the Rag it serves
  is checked), and the per-call switches are accepted in a request's ``options``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import pytest
import uvicorn
from click.testing import CliRunner
from fastapi.testclient import TestClient

from ragwright.cli import main
from ragwright.config import load_settings
from ragwright.config.sections import to_plain

README = Path(__file__).resolve().parents[1] / "README.md"
Check = Callable[[dict[str, Any]], bool]


@dataclass(frozen=True)
class Cap:
    """One capability: the README phrase naming it, how each front end switches it on, what is then true."""

    phrase: str
    cli: tuple[str, ...]
    toml: str
    check: Check
    request: dict[str, Any] | None = None  # per-call options a server request may send
    route: str = "/search"
    command: str = "search"  # the command whose flags these are
    extra: dict[str, Any] = field(default_factory=dict)


def r(key: str, value: Any = True) -> Check:
    return lambda d: d["retrieval"][key] == value


def a(key: str, value: Any = True) -> Check:
    return lambda d: d["answers"][key] == value


def on(section: str, key: str, switch: str | None = None) -> Check:
    return lambda d: d[section][key] is not False and (switch is None or d["retrieval"][switch] is True)


def top(key: str, value: Any) -> Check:
    return lambda d: d[key] == value


SELF_QUERY_FIELDS = '[transforms.self_query.fields.team]\nvalues = ["a", "b"]\n'

BULLETS: dict[str, list[Cap] | str] = {
    "Parsing": [
        Cap("OCR", ("--ocr",), "[ingest.parse]\nocr = true", lambda d: d["ingest"]["parse"]["ocr"], command="ingest"),
        Cap(
            "encrypted files with `--password`",
            ("--password", "x"),
            '[ingest.parse]\npdf_password = "x"',
            lambda d: True,  # a secret: never printed, checked by tests/test_cli.py's password tests
            command="ingest",
        ),
    ],
    "Ingestion": [
        Cap(
            "`--sync`",
            ("--sync",),
            "[ingest]\ndelete_missing = true",
            lambda d: d.get("_cli_only", False) or d["ingest"]["delete_missing"],
            command="ingest",
        ),
    ],
    "Chunking": [
        Cap(
            "recursive and semantic chunkers",
            ("--chunking", "semantic"),
            '[chunking]\nstrategy = "semantic"',
            lambda d: d["chunking"]["strategy"] == "semantic",
            command="ingest",
        ),
        Cap(
            "sentence or token overlap",
            ("--overlap", "sentences"),
            '[chunking]\noverlap = "sentences"',
            lambda d: d["chunking"]["overlap"] == "sentences",
            command="ingest",
        ),
        Cap(
            "contextual enrichment",
            ("--context", "extractive"),
            '[chunking]\ncontext = "extractive"',
            lambda d: d["chunking"]["context"] == "extractive",
            command="ingest",
        ),
        Cap(
            "late chunking",
            ("--late-chunking",),
            "[chunking]\nlate_chunking = true",
            lambda d: d["chunking"]["late_chunking"] is True,
            command="ingest",
            extra={"token_embedder": True},
        ),
        Cap(
            "propositions",
            ("--propositions",),
            "[chunking]\npropositions = true",
            lambda d: d["chunking"]["propositions"] is True,
            command="ingest",
        ),
        Cap(
            "parent-child chunking",
            ("--parents",),
            "[parents]\nchunk_size = 2048",
            lambda d: d["parents"] is not False and d["retrieval"]["use_parent_document"],
            {"use_parent_document": True},
            command="ingest",
        ),
    ],
    "Retrieval": [
        Cap("hybrid", ("--mode", "hybrid"), 'mode = "hybrid"', r("use_hybrid_search"), {"use_hybrid_search": True}),
        Cap(
            "RRF (k 60)",
            ("--fusion", "rrf"),
            '[retrieval.ensemble]\nmethod = "rrf"',
            lambda d: d["retrieval"]["ensemble"] and d["retrieval"]["ensemble"]["method"] == "rrf",
            {"ensemble": {"method": "rrf"}},
        ),
        Cap(
            "min-max/z-score fusion",
            ("--fusion", "weighted"),
            '[retrieval.ensemble]\nmethod = "weighted"',
            lambda d: d["retrieval"]["ensemble"] and d["retrieval"]["ensemble"]["method"] == "weighted",
            {"ensemble": {"method": "weighted", "normalization": "zscore"}},
        ),
        Cap(
            "language-aware",
            ("--keyword-analyzer", "fuzzy"),
            'keyword_analyzer = "fuzzy"',
            top("keyword_analyzer", "fuzzy"),
        ),
        Cap(
            "RM3 on BM25",
            ("--feedback", "rm3"),
            "[retrieval.feedback]\nrm3 = true",
            lambda d: d["retrieval"]["feedback"] and d["retrieval"]["feedback"]["rm3"],
            {"feedback": {"rm3": True}},
        ),
        Cap(
            "Typed metadata filters",
            ("--filter", "team=a"),
            '[retrieval]\nmetadata_filter = { team = "a" }',
            lambda d: d.get("_cli_only", False) or d["retrieval"]["metadata_filter"] == {"team": "a"},
            {"metadata_filter": {"team": "a"}},
        ),
        Cap("learned-sparse arm", ("--sparse", "splade"), 'sparse = "splade"', top("sparse", "splade")),
        Cap(
            "`min_score`",
            ("--min-score", "0.2"),
            "[retrieval]\nmin_score = 0.2",
            r("min_score", 0.2),
            {"min_score": 0.2},
        ),
    ],
    "Post-retrieval": [
        Cap(
            "redundancy filter",
            ("--redundancy-filter",),
            "[retrieval]\nuse_redundancy_filter = true",
            r("use_redundancy_filter"),
            {"use_redundancy_filter": True},
        ),
        Cap("MMR", ("--mmr",), "[retrieval]\nuse_mmr = true", r("use_mmr"), {"use_mmr": True}),
        Cap(
            "reranking",
            ("--rerank", "--reranker", "llm"),
            'reranker = "llm"\n[retrieval]\nuse_reranking = true',
            lambda d: d["reranker"] == "llm" and d["retrieval"]["use_reranking"],
            {"use_reranking": True},
        ),
        Cap(
            "auto-merging",
            ("--parent-mode", "auto_merge"),
            '[retrieval]\nparent_mode = "auto_merge"',
            r("parent_mode", "auto_merge"),
            {"parent_mode": "auto_merge"},
        ),
        Cap(
            "neighbour expansion",
            ("--neighbours", "1"),
            "[retrieval]\nneighbour_window = 1",
            r("neighbour_window", 1),
            {"neighbour_window": 1},
        ),
        Cap(
            "`max_context_tokens` budget",
            ("--max-context-tokens", "500"),
            "[retrieval]\nmax_context_tokens = 500",
            r("max_context_tokens", 500),
            {"max_context_tokens": 500},
        ),
        Cap(
            "lost-in-the-middle reordering",
            ("--reorder",),
            "[retrieval]\nuse_lost_in_the_middle_reordering = true",
            r("use_lost_in_the_middle_reordering"),
            {"use_lost_in_the_middle_reordering": True},
        ),
    ],
    "Evaluation": "a command (`ragwright eval`), not a switch",
    "Answers": [
        Cap(
            "with a chat model",
            ("--llm", "openai:m@http://127.0.0.1:9/v1"),
            'llm = "openai:m@http://127.0.0.1:9/v1"',
            top("llm", "openai:m@http://127.0.0.1:9/v1"),
            route="/ask",
            command="ask",
        ),
        Cap(
            "sources-as-tool-result mode",
            ("--sources-as-tool-result",),
            "[answers]\nsend_sources_as_tool_result = true",
            a("send_sources_as_tool_result"),
            {"send_sources_as_tool_result": True},
            route="/ask",
            command="ask",
        ),
        Cap(
            "groundedness verification",
            ("--verify",),
            "[answers]\nverify_answer = true",
            a("verify_answer"),
            {"verify_answer": True},
            route="/ask",
            command="ask",
        ),
        Cap(
            "extractive answers",
            ("--answer-mode", "extractive"),
            '[answers]\nanswer_mode = "extractive"',
            a("answer_mode", "extractive"),
            {"answer_mode": "extractive"},
            route="/ask",
            command="ask",
        ),
    ],
    "Language models": [
        Cap("`[llm]`", ("--llm", "local"), 'llm = "local"', top("llm", "local"), command="ask"),
        Cap("`--reranker llm`", ("--reranker", "llm"), 'reranker = "llm"', top("reranker", "llm")),
        Cap(
            "hosted reranker",
            ("--reranker", "hosted:m@http://127.0.0.1:9"),
            'reranker = "hosted:m@http://127.0.0.1:9"',
            top("reranker", "hosted:m@http://127.0.0.1:9"),
        ),
    ],
    "Query transforms": [
        Cap(
            "conversation condensing",
            ("--rewrite",),
            "[transforms.rewrite]\ncondense = true",
            on("transforms", "rewrite", "use_query_rewrite"),
            {"use_query_rewrite": True},
        ),
        Cap(
            "multi-query",
            ("--multi-query",),
            "[transforms]\nmulti_query = true",
            on("transforms", "multi_query", "use_multi_query"),
            {"use_multi_query": True},
        ),
        Cap("HyDE", ("--hyde",), "[transforms]\nhyde = true", on("transforms", "hyde", "use_hyde"), {"use_hyde": True}),
        Cap(
            "self-query",
            ("--self-query",),
            SELF_QUERY_FIELDS,
            on("transforms", "self_query", "use_self_query"),
            {"use_self_query": True},
            extra={"toml_base": SELF_QUERY_FIELDS},
        ),
    ],
    "Strategies and caches": [
        Cap(
            "tag-based retrieval",
            ("--tags",),
            "[strategies]\ntags = true",
            on("strategies", "tags", "use_tag_retrieval"),
            {"use_tag_retrieval": True},
        ),
        Cap(
            "time\n  decay",
            ("--time-decay",),
            "[strategies.time_weighting]\ndecay_rate = 0.01",
            on("strategies", "time_weighting", "use_time_weighting"),
            {"use_time_weighting": True},
        ),
        Cap(
            "deep research",
            ("--deep-research",),
            "[strategies]\ndeep_research = true",
            on("strategies", "deep_research"),
        ),
        Cap(
            "adaptive retrieval",
            ("--adaptive",),
            "[retrieval]\nuse_adaptive_retrieval = true",
            lambda d: d["strategies"]["adaptive"] is not False and d["retrieval"]["use_adaptive_retrieval"],
            {"use_adaptive_retrieval": True},
        ),
        Cap(
            "corrective RAG",
            ("--crag",),
            "[retrieval]\nuse_crag = true",
            lambda d: d["strategies"]["crag"] is not False and d["retrieval"]["use_crag"],
            {"use_crag": True},
        ),
        Cap("answer caches", ("--cache",), "[cache]\nenabled = true", lambda d: d["cache"]["enabled"]),
    ],
    "Compression and windows": [
        Cap(
            "sentence-window chunking",
            ("--chunking", "sentence_window"),
            '[chunking]\nstrategy = "sentence_window"',
            lambda d: d["chunking"]["strategy"] == "sentence_window",
            command="ingest",
        ),
        Cap(
            "contextual compression",
            ("--compress",),
            "[retrieval]\nuse_compression = true",
            r("use_compression"),
            {"use_compression": True},
        ),
        Cap(
            "`rerank_min_score`",
            ("--rerank-min-score", "0.3"),
            "[retrieval]\nrerank_min_score = 0.3",
            r("rerank_min_score", 0.3),
            {"rerank_min_score": 0.3},
        ),
    ],
    "Security": [
        Cap(
            "the caller's identity",
            ("--tenant", "acme", "--groups", "hr"),
            '[identity]\ntenant = "acme"\ngroups = ["hr"]',
            lambda d: d.get("_cli_only", False) or (d["identity"] or {}).get("tenant") == "acme",
        ),
    ],
    "GraphRAG": [
        Cap(
            "`ingest --graph`",
            ("--graph",),
            "[graph]\nhops = 1",
            lambda d: d.get("_cli_only", False) or d["graph"] is not False,
            command="ingest",
        ),
    ],
    "Hierarchical retrieval": [
        Cap(
            "`search --hierarchical`",
            ("--hierarchical",),
            "[hierarchy]\ntree = false",
            lambda d: d.get("_cli_only", False) or d["hierarchy"] is not False,
        ),
    ],
    "Agentic RAG": [
        Cap("`ask --agent`", ("--agent",), "[agent]\nmax_rounds = 3", lambda d: d["agent"] is not False, command="ask"),
    ],
    "Federation": [
        Cap(
            "`search --collections a,b=0.5`",
            ("--collections", "live,g2=0.5"),
            '[federation]\ncollections = "live,g2=0.5"\nstores = { pg = "postgresql://u@127.0.0.1:9/db" }',
            lambda d: d["federation"] is not False,
        ),
    ],
    "Routing": [
        Cap(
            "`ask --route auto`",
            ("--route", "auto"),
            '[route]\nmode = "auto"',
            lambda d: d.get("_cli_only", False) or (d["route"] is not False and d["route"]["mode"] == "auto"),
            command="ask",
        ),
    ],
    "Conversation memory": [
        Cap(
            "`ask --session NAME`",
            ("--session", "s1"),
            "[memory.persistent]\nmin_score = 0.3",
            lambda d: d.get("_cli_only", False) or d["memory"]["persistent"] is not False,
            command="ask",
        ),
    ],
    "Reindex": "a command (`ragwright reindex`), not a switch",
    "Server": "the server itself (`ragwright serve`; its [server] table is checked by tests/server/test_cli_serve.py)",
    "Standard clients": "front ends (/v1/chat/completions …) that ask with what the configuration switches on",
    "Configuration": "the configuration itself (`ragwright config show`)",
    "Options": "the option classes this test maps every switch onto",
}


def feature_bullets() -> dict[str, str]:
    """README's feature list: bullet name → its text (continuation lines included)."""
    text = README.read_text(encoding="utf-8")
    match = re.search(r"^## (?:Features|What works in this release)\n(.*?)(?=^## )", text, re.M | re.S)
    assert match, "README has no feature list (## Features)"
    bullets: dict[str, str] = {}
    for block in re.split(r"^- ", match.group(1), flags=re.M)[1:]:
        name = re.match(r"\*\*(.+?)\*\*", block)
        if name:
            bullets[name.group(1)] = block
    return bullets


def switches_of(command: str) -> set[str]:
    cmd = main.commands[command] if command != "config" else main.commands["config"].commands["show"]  # type: ignore[attr-defined]
    return {opt for p in cmd.params for opt in (*p.opts, *getattr(p, "secondary_opts", ()))}


def caps() -> list[tuple[str, Cap]]:
    return [(name, cap) for name, entry in BULLETS.items() if isinstance(entry, list) for cap in entry]


def test_every_bullet_is_mapped_and_every_phrase_is_in_the_readme() -> None:
    bullets = feature_bullets()
    assert set(bullets) == set(BULLETS), f"README bullets without an entry here: {set(bullets) - set(BULLETS)}"
    for name, cap in caps():
        assert cap.phrase in bullets[name], f"{name}: README no longer names {cap.phrase!r}"


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    monkeypatch.delenv("RAGWRIGHT_LLM", raising=False)
    monkeypatch.delenv("RAGWRIGHT_SPARSE", raising=False)
    return tmp_path


@pytest.mark.parametrize(("bullet", "cap"), caps(), ids=[f"{n}: {c.phrase}" for n, c in caps()])
def test_the_cli_switches_it_on(bullet: str, cap: Cap, isolated: Path) -> None:
    flags = [x for x in cap.cli if x.startswith("--")]
    globals_ = {"--keyword-analyzer", "--llm", "--reranker", "--sparse", "--embedder", "--store"}
    known = switches_of(cap.command) | globals_
    assert all(f in known for f in flags), f"`ragwright {cap.command}` lacks {set(flags) - known}"
    base = isolated / "base.toml"
    base.write_text(cap.extra.get("toml_base", ""))
    if all(f in switches_of("config") | globals_ for f in flags):
        result = CliRunner().invoke(main, ["--config", str(base), "config", "show", "--json", *cap.cli])
        assert result.exit_code == 0, result.output + result.stderr
        assert cap.check(json.loads(result.stdout)), cap.cli
    else:  # a per-run flag (--sync, --password, --filter, --tenant): it exists, and the command takes it
        assert cap.check({"_cli_only": True}) is True


@pytest.mark.parametrize(("bullet", "cap"), caps(), ids=[f"{n}: {c.phrase}" for n, c in caps()])
def test_the_config_file_switches_it_on(bullet: str, cap: Cap, isolated: Path) -> None:
    path = isolated / "ragwright.toml"
    path.write_text(cap.toml + "\n")
    settings = load_settings(path)
    assert cap.check(settings.to_dict())


class _Model:
    def __init__(self, name: str) -> None:
        self.name = name

    def load(self) -> _Model:
        return self


def served_paths(service: Any) -> dict[str, Any]:
    """The retrieval paths a server has switched on (graph, hierarchy, agent, memory, route, federation)."""
    from ragwright.rag_agent import agent_of

    rag = service.rag
    route = getattr(service, "default_route", None)
    stores = getattr(service, "federation_stores", {})
    return {
        "graph": to_plain(rag.graph.options) if rag.graph is not None else False,
        "hierarchy": to_plain(rag.hierarchy.options) if rag.hierarchy is not None else False,
        "agent": to_plain(agent.options) if (agent := agent_of(rag)) is not None else False,
        "memory": to_plain(rag.memory.options) if rag.memory is not None else {"persistent": False},
        "route": {"mode": route} if route is not None else False,
        "federation": {"stores": dict(stores)} if stores else False,
    }


def rag_view(rag: Any) -> dict[str, Any]:
    """What a served Rag has switched on, in the shape of the effective configuration."""
    return {
        "retrieval": to_plain(rag.retrieval_options),
        "answers": to_plain(rag.rag_options),
        "transforms": to_plain(rag.retriever.transforms),
        "strategies": to_plain(rag._plan),
        "cache": {"enabled": rag.cache is not None},
        "parents": to_plain(rag.ingestion.parents) if rag.ingestion.parents is not None else False,
        "chunking": to_plain(rag.chunker.options) if hasattr(rag.chunker, "options") else {},
        "ingest": to_plain(rag.ingestion.options),
        "identity": {"tenant": rag.identity.tenant, "groups": list(rag.identity.groups)},
        "keyword_analyzer": rag.store.keyword_analyzer.split("/")[0],  # "fuzzy/1": name and version
        "llm": getattr(rag.llm, "name", None),
        "reranker": getattr(rag.retriever.reranker, "name", None),
        "sparse": getattr(rag.sparse_encoder, "name", None),
    }


@pytest.mark.parametrize(("bullet", "cap"), caps(), ids=[f"{n}: {c.phrase}" for n, c in caps()])
def test_the_server_switches_it_on(bullet: str, cap: Cap, isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ragwright.config.wiring as wiring
    import ragwright.models.embedders as embedders
    import ragwright.rag as rag_module
    from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

    class TokenHashingEmbedder(HashingEmbedder):  # token outputs, for late chunking
        def tokenize(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
            return [], []

        def token_embeddings(self, ids: Any) -> Any:
            raise NotImplementedError

    fake = TokenHashingEmbedder if cap.extra.get("token_embedder") else HashingEmbedder
    monkeypatch.setattr(embedders, "load_embedder", lambda spec: fake())
    monkeypatch.setattr(wiring, "load_llm", lambda s: ScriptedChat(default="ok", name=s.llm) if s.llm else None)
    monkeypatch.setattr(wiring, "load_reranker", lambda s: _Model(s.reranker) if s.reranker else None)
    monkeypatch.setattr(rag_module, "load_sparse_encoder", lambda spec: _Model(spec) if spec else None)
    path = isolated / "ragwright.toml"
    # the stages that need a chat model get the scripted one (the file names it, the loader is patched)
    path.write_text(("" if cap.toml.startswith("llm") else 'llm = "scripted"\n') + cap.toml + "\n")
    seen: dict[str, Any] = {}

    def fake_run(app: Any, **kwargs: Any) -> None:
        service = app.state.service
        seen["view"] = {**rag_view(service.rag), **served_paths(service)}
        if cap.request is not None:
            with TestClient(app) as client:
                body = {"question": "refunds?"} if cap.route == "/ask" else {"query": "refunds?"}
                seen["status"] = client.post(cap.route, json={**body, "options": cap.request}).status_code

    monkeypatch.setattr(uvicorn, "run", fake_run)
    result = CliRunner().invoke(main, ["--config", str(path), "serve", "--create"])
    assert result.exit_code == 0, result.output + result.stderr
    assert cap.check(seen["view"]), seen["view"]
    if cap.request is not None:
        assert seen["status"] == 200


def test_the_commands_take_the_switches() -> None:
    """search/ask/ingest carry the switches config show documents (the table the flags come from)."""
    from ragwright.config.overrides import SWITCHES

    for switch in SWITCHES:
        for command in switch.commands:
            if command in main.commands or command == "config":  # mcp joins when its command exists
                assert switch.decls[0].split("/")[0] in switches_of(command), (switch.name, command)
    assert isinstance(main.commands["config"], click.Group)
