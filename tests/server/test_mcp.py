"""``ragwright mcp`` end to end with the real MCP client SDK: streamable HTTP on loopback and stdio (the
client starts ``ragwright mcp`` itself). The tools see what the configured identity may see; nothing a
tool call sends widens it."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from ragwright import Identity, Rag
from ragwright.server.live import serve_in_thread
from ragwright.server.mcp_server import build_server
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder

LEAVE = b"# Leave\n\n## Policy\n\nEmployees get 25 days of paid leave a year.\n"
SALARIES = b"# Salaries\n\n## Bands\n\nThe salary band for engineers is confidential: band E3.\n"
MERGER = b"# Merger\n\nThe merger with Initech closes in March.\n"
TIMEOUT_S = 60


def fill(rag: Rag) -> Rag:
    rag.ingest(BytesSource({"leave.md": LEAVE}), tenant="acme")  # public within acme
    rag.ingest(BytesSource({"salaries.md": SALARIES}), tenant="acme", acl=["hr"])
    rag.ingest(BytesSource({"merger.md": MERGER}), tenant="globex")
    return rag


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return json.loads(result.content[0].text)  # type: ignore[no-any-return]


async def exercise(client: Client, *, sees_hr: bool) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"search", "ask", "list_documents"}
    for tool in tools.values():  # no tool lets the model name an identity
        assert not {"tenant", "groups", "identity", "user"} & set(tool.input_schema.get("properties", {}))
    docs = structured(await client.call_tool("list_documents", {}))["documents"]
    names = {Path(d["document_id"]).name for d in docs}
    assert names == ({"leave.md", "salaries.md"} if sees_hr else {"leave.md"})
    found = structured(await client.call_tool("search", {"query": "salary band for engineers", "top_k": 5}))
    assert any(r["document_id"].endswith("salaries.md") for r in found["results"]) == sees_hr
    assert not any(r["document_id"].endswith("merger.md") for r in found["results"])
    answer = structured(await client.call_tool("ask", {"question": "How many days of paid leave do employees get?"}))
    assert not answer["declined"] and "[Source" in answer["answer"] and "25 days" in answer["answer"]
    assert answer["citations"] and answer["citations"][0]["document_id"].endswith("leave.md")
    # the model cannot widen the identity: an argument naming one is refused before any tool runs
    with pytest.raises(MCPError, match="identity is fixed"):
        await client.call_tool("search", {"query": "merger with Initech", "tenant": "globex"})
    with pytest.raises(MCPError, match="identity is fixed"):
        await client.call_tool("list_documents", {"groups": ["hr", "finance"]})
    # and a metadata filter only narrows
    narrowed = structured(
        await client.call_tool("search", {"query": "merger", "metadata_filter": {"tenant": "globex"}})
    )
    assert narrowed["results"] == []
    bad = await client.call_tool("search", {"query": "x", "top_k": 100000})
    assert bad.is_error and "top_k" in bad.content[0].text  # bounded like the HTTP server


@pytest.fixture
def http_url() -> Iterator[Any]:
    servers: list[Any] = []

    def start(identity: Identity) -> str:
        rag = fill(Rag(MemoryStore(), HashingEmbedder()))
        app = build_server(rag, identity).streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
        cm = serve_in_thread(app)
        servers.append(cm)
        return cm.__enter__() + "/mcp"

    yield start
    for cm in reversed(servers):
        cm.__exit__(None, None, None)


@pytest.mark.parametrize("groups", [("hr",), ()])
def test_streamable_http_tools_as_the_configured_identity(http_url: Any, groups: tuple[str, ...]) -> None:
    url = http_url(Identity("acme", groups))

    async def main() -> None:
        with anyio.fail_after(TIMEOUT_S):
            async with Client(url, read_timeout_seconds=TIMEOUT_S) as client:
                await exercise(client, sees_hr=bool(groups))

    anyio.run(main)


@pytest.mark.slow
def test_stdio_reads_the_identity_from_ragwright_toml(tmp_path: Path) -> None:
    from ragwright.models.embedders import load_embedder
    from ragwright.stores.sqlite import SqliteStore

    with fill(Rag(SqliteStore(tmp_path / "kb.db"), load_embedder("wordllama"))):
        pass
    (tmp_path / "ragwright.toml").write_text(
        'store = "kb.db"\nembedder = "wordllama"\n[identity]\ntenant = "acme"\ngroups = ["hr"]\n'
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from ragwright.cli import main; main()", "mcp"],
        cwd=str(tmp_path),
        env={"PYTHONPATH": ":".join(p for p in sys.path if p)},
    )

    async def main() -> None:
        with anyio.fail_after(TIMEOUT_S * 2):
            async with Client(params, read_timeout_seconds=TIMEOUT_S) as client:
                await exercise(client, sees_hr=True)

    anyio.run(main)


def test_http_refuses_a_public_interface(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ragwright.cli import main

    result = CliRunner().invoke(
        main, ["--store", str(tmp_path / "s.db"), "mcp", "--transport", "http", "--host", "0.0.0.0"]
    )
    assert result.exit_code == 2 and "refusing to serve MCP on 0.0.0.0" in result.stderr
