"""``ragwright serve``: the HTTP API and web page over a store (``pip install 'ragwright[server]'``)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import click

from ragwright.cli.common import State, command
from ragwright.errors import ConfigError


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", type=int, default=8000, show_default=True)
@click.option(
    "--api-keys",
    "config_path",
    type=click.Path(path_type=Path),
    default=None,
    help='Server config JSON: {"keys": [{"hash": …, "tenant": …, "groups": […]}], "sources": {…}, "limits": {…}} '
    "(default: the [server] table of ragwright.toml).",
)
@click.option("--hash-key", default=None, metavar="KEY", help="Print the SHA-256 hash of KEY for the config; exit.")
@click.option(
    "--create",
    is_flag=True,
    help="Create the store when it does not exist yet (an empty one, filled through POST /ingest).",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Also answer requests for this host name (repeatable; besides loopback and --host): DNS-rebinding guard.",
)
@command
def serve(
    state: State,
    create: bool,
    host: str,
    port: int,
    config_path: Path | None,
    hash_key: str | None,
    allow_hosts: tuple[str, ...],
) -> None:
    """Serve search, ask (streamed) and ingest over HTTP, with a web page at /, over the --store (refused
    when it does not exist, unless --create). Every capability ragwright.toml (or --config) configures is
    on for the server's requests; a request's "options" set the per-call switches."""
    from ragwright.server.config import ServerConfig, is_loopback
    from ragwright.server.config import hash_key as digest
    from ragwright.server.guard import HostPolicy

    if hash_key is not None:
        state.emit({"hash": digest(hash_key)}, lambda: click.echo(digest(hash_key)))
        return
    settings = state.settings
    config = ServerConfig.load(config_path) if config_path is not None else ServerConfig.from_dict(settings.server)
    if allow_hosts:
        HostPolicy.build(allow_hosts, keyless=not config.auth_required)  # a bad name is a clear error
        config = dataclasses.replace(config, allowed_hosts=(*config.allowed_hosts, *allow_hosts))
    if not config.auth_required and not is_loopback(host):
        raise ConfigError(
            f"refusing to serve on {host} without API keys: anyone who can reach it could read and change the "
            "store. Bind to 127.0.0.1, or give --api-keys FILE (make hashes with: ragwright serve --hash-key KEY)"
        )
    if not 0 < port < 65536:
        raise ConfigError.invalid("--port", port, "a TCP port between 1 and 65535")
    if isinstance(state.store, Path) and not state.store.exists():
        if not create:
            raise ConfigError(
                f"no store at {state.store}: ingest documents first (ragwright ingest PATH --store {state.store}), "
                "give the store to serve with --store PATH, or start an empty one with --create"
            )
        click.echo(f"note: creating an empty store at {state.store} (fill it through POST /ingest)", err=True)
    from ragwright._deps import require

    uvicorn = require("uvicorn", "server", "ragwright serve")
    from ragwright.server import create_app

    rag = state.open(must_exist=False)
    try:
        app = create_app(rag, config)
        if settings.agent is not None:  # [agent]: the caps of requests that ask for the agent
            from ragwright.rag_agent import enable_agent

            enable_agent(rag, settings.agent)
        if settings.route is not None:  # [route]: every ask is routed unless the request says "route": "off"
            app.state.service.default_route = settings.route.mode
        if settings.federation is not None:  # the stores a request's "collections" may name
            app.state.service.federation_stores = {s.name: s.uri for s in settings.federation.sources if s.uri}
        auth = f"{len(config.keys)} API key(s)" if config.auth_required else "no keys: anonymous, public content only"
        click.echo(f"serving {state.store} on http://{host}:{port}/ ({auth})", err=True)
        if state.as_json:
            click.echo(json.dumps({"store": str(state.store), "host": host, "port": port}))
        uvicorn.run(app, host=host, port=port, log_level="info")  # --debug is ragwright's logs, not uvicorn's
    finally:
        rag.close()
