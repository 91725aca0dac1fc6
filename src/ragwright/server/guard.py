"""Attacks through the user's browser on a local server: DNS rebinding and cross-site request forgery.

A server without API keys trusts whoever can reach it, and every web page the user opens can reach a
loopback server through the browser:

* **DNS rebinding.** A page at ``evil.example`` points its name at 127.0.0.1 after loading; its scripts
  then read and write the server as *same-origin* requests. They still say ``Host: evil.example``, so
  the server answers only requests whose ``Host`` is a loopback name (``localhost``, ``127.0.0.1``,
  ``[::1]``, any port), the address it is bound to (as its socket reports it), or a name in the
  configured ``allowed_hosts``; any other gets 400.
* **CSRF.** Any page may send a *simple* cross-site POST — an HTML form, or ``fetch`` in ``no-cors`` mode:
  ``multipart/form-data``, ``application/x-www-form-urlencoded`` or ``text/plain``, no custom header —
  without asking the server first, planting a document with ``POST /ingest``. Without a key, a POST must
  therefore send ``application/json`` or the header ``X-Requested-With`` (the bundled page sends it):
  a browser asks the server before sending either across sites (a CORS preflight), and this server
  grants none. A browser's ``Origin`` on a state-changing request must also be an allowed host. Other
  methods that change state (``DELETE``) are never simple, so a browser always asks first. Refusals are
  403.

A server with API keys has no ambient authority — a browser never attaches a key on its own — so the
content-type rule does not apply there, and ``Host`` is checked only when ``allowed_hosts`` is configured
(a keyed server is usually reached through names the process cannot know).
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ragwright.errors import ConfigError
from ragwright.server.limits import ASGIApp, Receive, Scope, Send

CSRF_HEADER = "X-Requested-With"
LOOPBACK_NAMES = frozenset({"localhost"})
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_HOST = re.compile(r"^(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9_.-]+))(?::(?P<port>[0-9]{1,5}))?$")


def parse_host(value: str) -> tuple[str, int | None] | None:
    """``(host, port)`` of a ``Host``-style value (``name``, ``name:port``, ``[v6]:port``), lower-cased,
    without brackets or a trailing dot; ``None`` when it is not a plain host (``a@b``, paths, spaces)."""
    m = _HOST.match(value.strip().lower())
    if m is None:
        return None
    if m["v6"] is not None:
        try:
            host = str(ipaddress.IPv6Address(m["v6"]))
        except ValueError:
            return None
    else:
        host = m["name"].rstrip(".")
        if not host:
            return None
    port = int(m["port"]) if m["port"] is not None else None
    return host, port


def is_loopback_host(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HostPolicy:
    """Which ``Host`` (and ``Origin``) values a server answers; see the module docstring.

    ``allowed``: configured entries (``name``, ``name:port``, ``[v6]``; ``"*"`` allows any host).
    ``check_hosts``: whether ``Host`` is checked at all; ``csrf``: whether a POST needs JSON or
    :data:`CSRF_HEADER` (servers without keys).
    """

    allowed: tuple[tuple[str, int | None], ...] = ()
    any_host: bool = False
    check_hosts: bool = True
    csrf: bool = True

    @classmethod
    def build(cls, allowed_hosts: Iterable[str], *, keyless: bool) -> HostPolicy:
        entries = tuple(allowed_hosts)
        parsed = []
        for entry in entries:
            if entry.strip() == "*":
                continue
            host = parse_host(entry)
            if host is None:
                raise ConfigError.invalid("allowed_hosts", entry, "host names: name, name:port, [v6]:port or '*'")
            parsed.append(host)
        return cls(
            allowed=tuple(parsed),
            any_host=any(e.strip() == "*" for e in entries),
            check_hosts=keyless or bool(entries),
            csrf=keyless,
        )

    def allows(self, host: str, port: int | None, bound: str | None) -> bool:
        """Whether requests addressed to *host*:*port* are answered by a server bound to *bound*."""
        if self.any_host or is_loopback_host(host) or (bound is not None and host == bound):
            return True
        return any(host == h and (p is None or p == port) for h, p in self.allowed)

    def shown(self, bound: str | None) -> str:
        names = ["localhost", "127.0.0.1", "[::1]"]
        if bound is not None and not is_loopback_host(bound):
            names.append(bound)
        names += [f"[{h}]" if ":" in h else h for h, _ in self.allowed]
        return ", ".join(dict.fromkeys(names))

    def refusal(self, method: str, headers: dict[str, str], bound: str | None) -> tuple[int, str] | None:
        """``(status, message)`` when this request must be refused, else ``None``. *headers*: lower-case names."""
        if self.check_hosts and "host" in headers:
            host = parse_host(headers["host"])
            if host is None or not self.allows(*host, bound):
                return 400, (
                    f"the Host header {headers['host']!r} is not allowed: this server answers requests for "
                    f"{self.shown(bound)} (a page that renamed itself to this address is refused; to reach the "
                    "server under another name, list it in 'allowed_hosts' or use ragwright serve --allow-host NAME)"
                )
        if method not in UNSAFE_METHODS or not self.csrf:
            return None
        origin = headers.get("origin")
        if origin is not None:
            scheme, sep, rest = origin.partition("://")
            parsed = parse_host(rest) if sep and scheme in ("http", "https") else None
            if parsed is None or not self.allows(*parsed, bound):
                return 403, (
                    f"cross-site request from {origin!r} refused: this server accepts changes only from its own "
                    "page or from programs that are not browsers"
                )
        if method != "POST" or _non_simple(headers):
            return None
        return 403, (
            "cross-site request refused: without an API key, a POST must send 'Content-Type: application/json' "
            f"or the header '{CSRF_HEADER}: <anything>' (a page of another site cannot send either without "
            "this server's permission, so this looks like a forged request)"
        )


def _non_simple(headers: dict[str, str]) -> bool:
    """A request a browser sends across sites only after asking the server first (CORS preflight)."""
    if headers.get(CSRF_HEADER.lower(), "").strip() or "authorization" in headers or "x-api-key" in headers:
        return True
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    return kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))


class RequestGuard:
    """ASGI middleware applying a :class:`HostPolicy` before anything reads the request."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app, self.policy = app, policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        server = scope.get("server")
        bound = str(server[0]).lower().strip("[]") if server else None
        refused = self.policy.refusal(str(scope.get("method", "GET")).upper(), headers, bound)
        if refused is None:
            await self.app(scope, receive, send)
            return
        status, message = refused
        body = json.dumps({"error": message}).encode("utf-8")
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})
