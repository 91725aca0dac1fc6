"""``ragwright mcp``: the store's search, ask and document list as MCP tools (``pip install 'ragwright[mcp]'``)."""

from __future__ import annotations

from typing import Any

import click

from ragwright.cli.common import State, caller, command
from ragwright.cli.config import switch_flags
from ragwright.errors import ConfigError


@click.command("mcp")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio (the client starts `ragwright mcp` itself) or streamable HTTP on --host/--port at --path.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: the interface to bind (loopback only).")
@click.option("--port", type=int, default=8765, show_default=True, help="HTTP: the port.")
@click.option("--path", "http_path", default="/mcp", show_default=True, help="HTTP: the endpoint's path.")
@click.option("--tenant", default=None, help="The identity the tools run as (default: [identity] in ragwright.toml).")
@click.option("--groups", default=None, help="Its comma-separated ACL groups.")
@switch_flags("mcp")
@command
def mcp_command(
    state: State,
    transport: str,
    host: str,
    port: int,
    http_path: str,
    tenant: str | None,
    groups: str | None,
    switches: dict[str, Any],
) -> None:
    """Serve the --store's search, ask and list_documents as MCP tools, over stdio or streamable HTTP.

    The tools run as one identity, fixed here (--tenant/--groups, else [identity] in ragwright.toml, else
    the public content of the default tenant); nothing a model sends can change it. The capability
    switches (--hyde, --rerank …) and ragwright.toml configure the tools' retrieval and answers."""
    from ragwright._deps import require
    from ragwright.model.identity import Identity
    from ragwright.server.config import ServerLimits, is_loopback
    from ragwright.server.mcp_server import build_server

    require("mcp", "mcp", "ragwright mcp")
    settings = state.effective(switches)
    identity = caller(tenant, groups) or settings.identity or Identity()
    if transport == "http":
        if not is_loopback(host):
            raise ConfigError(
                f"refusing to serve MCP on {host}: the tools answer as {identity.tenant!r} to whoever can reach "
                "them, without keys. Bind to 127.0.0.1 (and put an authenticating proxy in front for others)"
            )
        if not 0 < port < 65536:
            raise ConfigError.invalid("--port", port, "a TCP port between 1 and 65535")
        if not http_path.startswith("/"):
            raise ConfigError.invalid("--path", http_path, "a path starting with /")
    limits = ServerLimits.from_dict(settings.server.get("limits", {}))
    rag = state.open(must_exist=True, settings=settings)
    try:
        server = build_server(rag, identity, limits)
        who = f"tenant {identity.tenant}" + (f", groups {','.join(identity.groups)}" if identity.groups else "")
        if transport == "stdio":
            click.echo(f"ragwright MCP server on stdio over {state.store} (as {who})", err=True)
            server.run("stdio")
            return
        uvicorn = require("uvicorn", "mcp", "ragwright mcp --transport http")
        app = server.streamable_http_app(streamable_http_path=http_path, host=host)
        click.echo(f"ragwright MCP server on http://{host}:{port}{http_path} over {state.store} (as {who})", err=True)
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        rag.close()
