"""Server configuration: API keys (stored as SHA-256 hashes) mapped to identities, sources, limits.

The config file is JSON::

    {"keys": [{"hash": "<sha256 hex of the key>", "tenant": "acme", "groups": ["finance"],
               "name": "alice", "read_only": false}],
     "sources": {"handbook": "/srv/docs/handbook"},
     "limits": {"max_upload_bytes": 52428800, "max_concurrency": 4},
     "allowed_hosts": ["rag.example.com"]}

Keys are never stored in clear: ``ragwright serve --hash-key KEY`` prints the hash to put in the file.
With no keys the server is anonymous (public content of the default tenant) and binds to loopback only.
``allowed_hosts`` names the hosts it may be reached under besides loopback (see :mod:`ragwright.server.guard`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragwright._validate import OptionsBase, check_bool, check_float, check_int
from ragwright.errors import ConfigError
from ragwright.model.identity import Identity
from ragwright.server.guard import HostPolicy

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
#: The largest ``max_filter_terms`` a server may allow (SQLite refuses expression trees deeper than 1000).
MAX_FILTER_TERMS = 512


def hash_key(key: str) -> str:
    """The SHA-256 hex digest stored in the config for an API key."""
    if not isinstance(key, str) or len(key.strip()) < 16:
        raise ConfigError("an API key must be a string of at least 16 characters (use a random token)")
    return hashlib.sha256(key.strip().encode("utf-8")).hexdigest()


def is_loopback(host: str) -> bool:
    return host in LOOPBACK_HOSTS or host.startswith("127.")


@dataclass(frozen=True)
class ServerLimits(OptionsBase):
    """Request and work limits.

    * ``max_body_bytes``: largest JSON request body; ``max_upload_bytes``: largest multipart upload
      (counted while it streams in, refused with 413 as soon as it is exceeded);
    * ``max_files``: files per upload; ``max_top_k``: largest ``top_k`` a caller may ask for;
    * ``failed_upload_quota_bytes`` / ``failed_upload_ttl_s``: uploads that failed to parse are kept
      (for a retry) up to this many bytes a tenant and this long; older ones go with their dead letters
      (see :mod:`ragwright.server.uploads`);
    * ``max_filter_terms``: most comparisons in a request's ``metadata_filter`` (a list value counts one
      per item; at most 512, within what every store's SQL translation accepts): a larger one is a 400;
    * ``max_concurrency``: embedding/LLM requests running at once; a request waits at most
      ``queue_timeout_s`` for a slot, then gets 503; ``request_timeout_s`` bounds a search or an answer
      (504), ``ingest_timeout_s`` an ingestion.
    """

    max_body_bytes: int = 1 << 20
    max_upload_bytes: int = 50 << 20
    max_files: int = 20
    max_top_k: int = 100
    max_query_chars: int = 4000
    max_filter_terms: int = 256
    failed_upload_quota_bytes: int = 100 << 20
    failed_upload_ttl_s: float = 7 * 24 * 3600.0
    max_concurrency: int = 4
    queue_timeout_s: float = 10.0
    request_timeout_s: float = 120.0
    ingest_timeout_s: float = 900.0

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_upload_bytes", "max_files", "max_top_k", "max_query_chars"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("max_filter_terms", self.max_filter_terms, minimum=1)
        check_int("failed_upload_quota_bytes", self.failed_upload_quota_bytes, minimum=0)
        check_float("failed_upload_ttl_s", self.failed_upload_ttl_s, lo=0.0)
        if self.max_filter_terms > MAX_FILTER_TERMS:
            raise ConfigError.invalid("max_filter_terms", self.max_filter_terms, f"an integer <= {MAX_FILTER_TERMS}")
        check_int("max_concurrency", self.max_concurrency, minimum=1)
        check_float("queue_timeout_s", self.queue_timeout_s, lo=0.0)
        check_float("request_timeout_s", self.request_timeout_s, lo=0.0, lo_open=True)
        check_float("ingest_timeout_s", self.ingest_timeout_s, lo=0.0, lo_open=True)


@dataclass(frozen=True)
class ApiKey:
    """One configured key: its hash and the identity it authenticates as."""

    hash: str
    identity: Identity
    read_only: bool = False


@dataclass(frozen=True)
class ServerConfig:
    """Keys, named sources and limits of one server."""

    keys: tuple[ApiKey, ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict)
    limits: ServerLimits = field(default_factory=ServerLimits)
    staging_dir: Path | None = None
    #: Extra names (``name``, ``name:port``; ``"*"``: any) the server answers to besides loopback and the
    #: address it is bound to: see :mod:`ragwright.server.guard` (DNS rebinding).
    allowed_hosts: tuple[str, ...] = ()

    @property
    def auth_required(self) -> bool:
        return bool(self.keys)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ServerConfig:
        if not isinstance(data, Mapping):
            raise ConfigError("the server config must be a JSON object with 'keys', 'sources' and 'limits'")
        accepted = ("keys", "sources", "limits", "staging_dir", "allowed_hosts")
        unknown = sorted(set(data) - set(accepted))
        if unknown:
            raise ConfigError(f"unknown server config key(s) {unknown} (accepted: {', '.join(accepted)})")
        raw_keys = data.get("keys", [])
        if not isinstance(raw_keys, list):
            raise ConfigError("'keys' must be a list of {hash, tenant, groups} objects")
        keys = tuple(_key(i, k) for i, k in enumerate(raw_keys))
        hashes = [k.hash for k in keys]
        if len(set(hashes)) != len(hashes):
            raise ConfigError("the same key hash appears twice in 'keys'")
        sources = data.get("sources", {})
        if not isinstance(sources, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in sources.items()
        ):
            raise ConfigError("'sources' must map a name to a folder, file or .jsonl corpus path")
        limits = data.get("limits", {})
        if not isinstance(limits, Mapping):
            raise ConfigError("'limits' must be an object (see ServerLimits)")
        staging = data.get("staging_dir")
        hosts = data.get("allowed_hosts", [])
        if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
            raise ConfigError("'allowed_hosts' must be a list of host names, e.g. [\"rag.example.com\"]")
        HostPolicy.build(hosts, keyless=not keys)  # every entry must parse
        return cls(
            keys=keys,
            sources=dict(sources),
            limits=ServerLimits.from_dict(limits),
            staging_dir=Path(staging) if staging else None,
            allowed_hosts=tuple(hosts),
        )

    @classmethod
    def load(cls, path: str | Path) -> ServerConfig:
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read the server config {p}: {exc.strerror or exc}") from exc
        except ValueError as exc:
            raise ConfigError(f"the server config {p} is not valid JSON: {exc}") from exc
        config = cls.from_dict(data)
        if config.staging_dir is not None and not config.staging_dir.is_absolute():
            config = dataclasses.replace(config, staging_dir=(p.parent / config.staging_dir).resolve())
        return config


def _key(index: int, raw: Any) -> ApiKey:
    where = f"keys[{index}]"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be an object with 'hash', 'tenant' and optional 'groups'")
    unknown = sorted(set(raw) - {"hash", "tenant", "groups", "name", "read_only"})
    if unknown:
        raise ConfigError(f"{where}: unknown field(s) {unknown} (accepted: hash, tenant, groups, name, read_only)")
    digest = str(raw.get("hash", "")).lower().removeprefix("sha256:")
    if not _HEX64.match(digest):
        raise ConfigError(f"{where}.hash must be the 64-hex SHA-256 of the key (ragwright serve --hash-key KEY)")
    groups = raw.get("groups", [])
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise ConfigError(f"{where}.groups must be a list of group names")
    read_only = raw.get("read_only", False)
    check_bool(f"{where}.read_only", read_only)
    try:
        identity = Identity(tenant=raw.get("tenant", "default"), groups=tuple(groups), user=raw.get("name"))
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from exc
    return ApiKey(digest, identity, read_only)
