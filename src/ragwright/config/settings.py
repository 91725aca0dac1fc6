"""One configuration for every capability: ``ragwright.toml``, read by the CLI and the server alike.

Where it comes from (the first that exists): ``--config FILE``, the environment variable
``RAGWRIGHT_CONFIG``, ``./ragwright.toml``; none → the defaults. Command-line flags override the file
(:mod:`ragwright.config.overrides`). ``ragwright config show`` prints the effective result.

The file (every table optional; each maps onto an option class, unknown keys refused with a suggestion)::

    store = ".ragwright/store.db"      # or postgresql://…
    embedder = "default"               # default | wordllama | PATH
    llm = "local"                      # none | local | local:0.5b | PATH.gguf | openai:MODEL[@URL]
    reranker = "llm"                   # none | llm | hosted:MODEL@URL | PATH (a cross-encoder folder)
    sparse = "splade"                  # none | splade | PATH
    keyword_analyzer = "auto"          # auto | fuzzy | default | english
    mode = "hybrid"                    # hybrid | dense | bm25 (ragwright.options.PRESETS)

    [retrieval]                        # RetrievalOptions (the mode's preset, then these)
    top_k = 8
    use_mmr = true
    [retrieval.ensemble]               # EnsembleOptions; `ensemble = false`: the method's defaults
    method = "rrf"
    [retrieval.feedback]               # FeedbackOptions; `feedback = false`: none
    rm3 = true

    [answers]                          # RagOptions (shared fields default to [retrieval]'s)
    verify_answer = true

    [transforms]                       # TransformOptions: a transform runs once configured
    hyde = true                        # or [transforms.hyde] with HydeOptions fields
    [transforms.rewrite]
    glossary = { PTO = "paid time off" }
    [transforms.self_query.fields.department]
    kind = "string"
    values = ["hr", "finance"]

    [strategies]                       # StrategyOptions: tags, time_weighting, deep_research, adaptive, crag
    time_weighting = { decay_rate = 0.005 }
    deep_research = true

    [cache]                            # enabled, redis_url, then CacheOptions
    enabled = true
    [parents]                          # ParentOptions: parent-document chunks at ingestion
    [chunking]                         # ChunkingOptions
    strategy = "semantic"
    [route]                            # RouterOptions: ask routes each question (also --route auto|llm|off)
    mode = "auto"                      # auto (rules) | llm (classifier) | off; routes = [...] allowed
    [hierarchy]                        # HierarchyOptions: document summaries, tree (search --hierarchical)
    combine = "rrf"
    [graph]                            # GraphOptions: the entity graph kept at ingestion (ask --graph local|global)
    extractor = "rules"                # rules | spacy | llm; hops, top_k, weight, merge_similarity, levels …
    [ingest]                           # IngestOptions ([ingest.parse]: ParseOptions)
    [federation]                       # FederationOptions: search several sources, weighted RRF
    collections = "live,g2=0.5"        # NAME[=WEIGHT]: the store's collections (live: its live one)
    stores = { pg = "postgresql://u@h/db" }  # other stores, by name (weight 1 unless in collections)
    [memory]                           # MemoryOptions: conversation history budget (cl100k), summaries
    budget_tokens = 2048
    [memory.persistent]                # PersistentMemoryOptions: memory per identity (off without it)
    min_score = 0.3
    [identity]                         # the caller of CLI search/ask and of the MCP tools
    tenant = "acme"
    groups = ["finance"]
    [server]                           # ServerConfig: keys, sources, limits, staging_dir, allowed_hosts
    [agent]                            # AgentOptions: ask answers with the agent loop (also --agent)
    max_rounds = 4                     # caps: max_rounds, max_tool_calls, max_tokens (cl100k)

A switch that needs a stage (``transforms.hyde``, ``strategies.tags`` …) switches that stage's per-call
switch on too (``use_hyde``, ``use_tag_retrieval`` …) unless ``[retrieval]`` sets it.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ragwright.agent.options import AgentOptions
from ragwright.cache.options import CacheOptions
from ragwright.config.sections import build, nested, to_plain
from ragwright.errors import ConfigError
from ragwright.federation.options import FederationOptions
from ragwright.graph.options import GraphOptions
from ragwright.memory.options import MemoryOptions
from ragwright.model.identity import Identity
from ragwright.options import (
    PRESETS,
    ChunkingOptions,
    IngestOptions,
    ParentOptions,
    RagOptions,
    RetrievalOptions,
    check_bool,
)
from ragwright.retrieve.strategies.options import StrategyOptions
from ragwright.retrieve.transforms.options import TransformOptions
from ragwright.route.options import RouterOptions

if TYPE_CHECKING:
    from ragwright.hierarchy.options import HierarchyOptions

FILE_NAME: Final = "ragwright.toml"
ENV_VAR: Final = "RAGWRIGHT_CONFIG"
MODEL_KEYS: Final = ("store", "embedder", "llm", "reranker", "sparse", "keyword_analyzer", "mode")
TABLES: Final = (
    "retrieval",
    "answers",
    "agent",
    "transforms",
    "strategies",
    "route",
    "cache",
    "parents",
    "chunking",
    "hierarchy",
    "graph",
    "ingest",
    "federation",
    "identity",
    "server",
    "memory",
)
ANALYZERS: Final = ("auto", "fuzzy", "default", "english")
#: Stages whose configuration turns their per-call switch on (unless [retrieval] sets the switch).
STAGE_SWITCHES: Final = (
    ("transforms", "hyde", "use_hyde"),
    ("transforms", "multi_query", "use_multi_query"),
    ("transforms", "rewrite", "use_query_rewrite"),
    ("transforms", "self_query", "use_self_query"),
    ("strategies", "tags", "use_tag_retrieval"),
    ("strategies", "time_weighting", "use_time_weighting"),
)


@dataclass(frozen=True)
class CacheSettings:
    """``[cache]``: the tiered cache (``enabled``), its Redis L2 (``redis_url``) and :class:`CacheOptions`."""

    enabled: bool = False
    redis_url: str | None = None
    options: CacheOptions = field(default_factory=CacheOptions)

    @classmethod
    def from_table(cls, table: Any) -> CacheSettings:
        if isinstance(table, bool):
            return cls(enabled=table)
        if not isinstance(table, Mapping):
            raise ConfigError(f"[cache] must be true, false or a table, not {table!r}", field="cache")
        values = dict(table)
        enabled = values.pop("enabled", True)  # a [cache] table switches the cache on unless it says otherwise
        redis_url = values.pop("redis_url", None)
        try:
            check_bool("cache.enabled", enabled)
        except ConfigError as exc:
            raise ConfigError(f"[cache] {exc}", field="cache.enabled") from None
        if redis_url is not None and (
            not isinstance(redis_url, str) or not redis_url.startswith(("redis://", "rediss://", "unix://"))
        ):
            raise ConfigError.invalid("cache.redis_url", redis_url, "a redis://host:port/db URL")
        return cls(bool(enabled), redis_url, build(CacheOptions, values, "cache"))


@dataclass(frozen=True)
class Settings:
    """The effective configuration: models, option classes, identity and server settings.

    Built by :meth:`from_dict` from the file's tables (plus the command line's overrides); ``source`` is
    the file read, ``None`` when none was.
    """

    source: Path | None = None
    store: str | None = None
    embedder: str | None = None
    llm: str | None = None
    reranker: str | None = None
    sparse: str | None = None
    keyword_analyzer: str = "auto"
    mode: str = "hybrid"
    retrieval: RetrievalOptions = field(default_factory=lambda: RetrievalOptions(**PRESETS["hybrid"]))
    answers: RagOptions = field(default_factory=lambda: RagOptions(**PRESETS["hybrid"]))
    transforms: TransformOptions = field(default_factory=TransformOptions)
    strategies: StrategyOptions = field(default_factory=StrategyOptions)
    agent: AgentOptions | None = None  # [agent] / --agent: ask answers with the agent loop
    cache: CacheSettings = field(default_factory=CacheSettings)
    parents: ParentOptions | None = None
    hierarchy: HierarchyOptions | None = None  # [hierarchy]: summaries at ingestion, --hierarchical search
    graph: GraphOptions | None = None  # [graph]: the entity graph kept at ingestion, ask --graph local|global
    chunking: ChunkingOptions = field(default_factory=ChunkingOptions)
    route: RouterOptions | None = None  # [route] / --route: ask routes each question (ragwright.rag_route)
    ingest: IngestOptions = field(default_factory=IngestOptions)
    federation: FederationOptions | None = None
    identity: Identity | None = None
    server: Mapping[str, Any] = field(default_factory=dict)
    memory: MemoryOptions = field(default_factory=MemoryOptions)
    #: The tables these settings were built from (file and overrides), to rebuild them with more overrides.
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: Path | None = None) -> Settings:
        """Settings from parsed TOML (or any mapping of the same shape); every value validated now."""
        unknown = [k for k in data if k not in (*MODEL_KEYS, *TABLES)]
        if unknown:
            close = difflib.get_close_matches(unknown[0], (*MODEL_KEYS, *TABLES), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"unknown configuration key {unknown[0]!r}{hint} (accepted: {', '.join((*MODEL_KEYS, *TABLES))})",
                field=unknown[0],
            )
        models = {k: data[k] for k in MODEL_KEYS if k in data}
        for key, value in models.items():
            if not isinstance(value, str) or not value.strip():
                raise ConfigError.invalid(key, value, "a non-empty string")
        mode = models.pop("mode", "hybrid")
        if mode not in PRESETS:
            raise ConfigError.invalid("mode", mode, "one of " + ", ".join(repr(m) for m in PRESETS))
        analyzer = models.pop("keyword_analyzer", "auto")
        if analyzer not in ANALYZERS:
            raise ConfigError.invalid("keyword_analyzer", analyzer, "one of " + ", ".join(repr(a) for a in ANALYZERS))
        transforms = build(TransformOptions, _table(data, "transforms"), "transforms")
        strategies = build(StrategyOptions, _table(data, "strategies"), "strategies")
        retrieval = _retrieval(mode, _table(data, "retrieval"), {"transforms": transforms, "strategies": strategies})
        answers = _answers(retrieval, _table(data, "answers"))
        server = _table(data, "server")
        if server:
            from ragwright.server.config import ServerConfig

            try:
                ServerConfig.from_dict(server)  # checked now; the server builds its own from this table
            except ConfigError as exc:
                raise ConfigError(f"[server] {exc}", field="server") from None
        return cls(
            source=source,
            **models,
            keyword_analyzer=analyzer,
            mode=mode,
            retrieval=retrieval,
            answers=answers,
            transforms=transforms,
            strategies=strategies,
            agent=nested(AgentOptions, data.get("agent", False), "agent"),
            cache=CacheSettings.from_table(data.get("cache", False)),
            parents=nested(ParentOptions, data.get("parents", False), "parents"),
            hierarchy=_hierarchy(data.get("hierarchy", False)),
            graph=nested(GraphOptions, data.get("graph", False), "graph"),
            chunking=build(ChunkingOptions, _table(data, "chunking"), "chunking"),
            route=nested(RouterOptions, data.get("route", False), "route"),
            ingest=build(IngestOptions, _table(data, "ingest"), "ingest"),
            federation=_federation(data.get("federation")),
            identity=_identity(data.get("identity")),
            server=dict(server),
            memory=build(MemoryOptions, _table(data, "memory"), "memory"),
            raw=dict(data),
        )

    def to_dict(self) -> dict[str, Any]:
        """The effective configuration as plain data, in the file's shape (secrets left out)."""
        out: dict[str, Any] = {"source": str(self.source) if self.source else None}
        out.update({k: getattr(self, k) for k in MODEL_KEYS})
        out["retrieval"] = to_plain(self.retrieval)
        out["answers"] = {
            k: v for k, v in to_plain(self.answers).items() if k not in _shared() or v != out["retrieval"].get(k)
        }
        out["transforms"] = to_plain(self.transforms)
        out["strategies"] = to_plain(self.strategies)
        out["agent"] = to_plain(self.agent) if self.agent is not None else False
        out["cache"] = {"enabled": self.cache.enabled, "redis_url": _mask(self.cache.redis_url)}
        out["cache"].update(to_plain(self.cache.options))
        out["parents"] = to_plain(self.parents) if self.parents is not None else False
        out["hierarchy"] = to_plain(self.hierarchy) if self.hierarchy is not None else False
        out["graph"] = to_plain(self.graph) if self.graph is not None else False
        out["chunking"] = to_plain(self.chunking)
        out["route"] = to_plain(self.route) if self.route is not None else False
        out["ingest"] = to_plain(self.ingest)
        out["federation"] = self.federation.to_table() if self.federation is not None else False
        out["identity"] = (
            {"tenant": self.identity.tenant, "groups": list(self.identity.groups)}
            | ({"user": self.identity.user} if self.identity.user else {})
            if self.identity is not None
            else None
        )
        out["server"] = _server_view(self.server)
        out["memory"] = to_plain(self.memory)
        return out

    def with_overrides(
        self, overrides: Mapping[str, Any] | None = None, flags: Mapping[str, Any] | None = None
    ) -> Settings:
        """These settings rebuilt with *overrides* (tables) merged over the file's, then the command line's
        *flags* (by :class:`~ragwright.config.overrides.Switch` name; ``None``: not given) applied."""
        from ragwright.config.overrides import apply_overrides, merge

        try:
            return Settings.from_dict(apply_overrides(merge(self.raw, overrides or {}), flags or {}), self.source)
        except ConfigError as exc:
            where = f"{self.source}: " if self.source is not None else ""
            raise ConfigError(f"{where}{exc}", field=exc.field, value=exc.value) from None


def _table(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"[{name}] must be a table, not {value!r}", field=name)
    return dict(value)


def _shared() -> frozenset[str]:
    return frozenset(RagOptions.field_names()) & frozenset(RetrievalOptions.field_names())


def _retrieval(mode: str, table: dict[str, Any], stages: Mapping[str, Any]) -> RetrievalOptions:
    values = {**PRESETS[mode], **table}
    for section, stage, switch in STAGE_SWITCHES:
        if switch not in table and getattr(stages[section], stage) is not None:
            values[switch] = True
    return build(RetrievalOptions, values, "retrieval")  # type: ignore[no-any-return]


def _answers(retrieval: RetrievalOptions, table: dict[str, Any]) -> RagOptions:
    inherited = {name: getattr(retrieval, name) for name in _shared()}
    return build(RagOptions, {**inherited, **table}, "answers")  # type: ignore[no-any-return]


def _hierarchy(value: Any) -> HierarchyOptions | None:
    from ragwright.hierarchy.options import HierarchyOptions

    built: HierarchyOptions | None = nested(HierarchyOptions, value, "hierarchy")
    return built


def _identity(value: Any) -> Identity | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(f"[identity] must be a table with tenant and groups, not {value!r}", field="identity")
    unknown = sorted(set(value) - {"tenant", "groups", "user"})
    if unknown:
        raise ConfigError(f"[identity] unknown key {unknown[0]!r} (accepted: tenant, groups, user)", field="identity")
    groups = value.get("groups", [])
    if isinstance(groups, str) or not isinstance(groups, list | tuple) or not all(isinstance(g, str) for g in groups):
        raise ConfigError.invalid("identity.groups", groups, "a list of group names")
    try:
        return Identity(tenant=value.get("tenant", "default"), groups=tuple(groups), user=value.get("user"))
    except ValueError as exc:
        raise ConfigError(f"[identity] {exc}", field="identity") from None


def _federation(value: Any) -> FederationOptions | None:
    """``[federation]`` (``false`` or no source: off); errors name the table."""
    try:
        return FederationOptions.from_table(value)
    except ConfigError as exc:
        message = str(exc) if str(exc).startswith("[federation]") else f"[federation] {exc}"
        raise ConfigError(message, field=exc.field or "federation", value=exc.value) from None


def _mask(url: str | None) -> str | None:
    """A URL with its password replaced by ``***``."""
    if not url or "@" not in url:
        return url
    scheme, _, rest = url.partition("://")
    auth, _, host = rest.rpartition("@")
    user = auth.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}"


def _server_view(server: Mapping[str, Any]) -> dict[str, Any]:
    view = {k: v for k, v in server.items() if k != "keys"}
    if "keys" in server:  # hashes only, but which identities exist is enough to show
        view["keys"] = [
            {k: v for k, v in key.items() if k != "hash"} | {"hash": "…"}
            for key in server["keys"]
            if isinstance(key, Mapping)
        ]
    return view


def config_path(explicit: str | Path | None = None, *, cwd: Path | None = None) -> Path | None:
    """The configuration file to read: *explicit*, else ``$RAGWRIGHT_CONFIG``, else ``./ragwright.toml``
    when it exists; ``None`` for none. An explicit file that does not exist is an error."""
    given = explicit if explicit not in (None, "") else os.environ.get(ENV_VAR) or None
    if given is not None:
        path = Path(given).expanduser()
        if not path.is_file():
            origin = "--config" if explicit not in (None, "") else ENV_VAR
            raise ConfigError(f"{origin}: no configuration file at {path}", field="config", value=str(path))
        return path
    default = (cwd or Path.cwd()) / FILE_NAME
    return default if default.is_file() else None


def load_settings(
    explicit: str | Path | None = None, *, overrides: Mapping[str, Any] | None = None, cwd: Path | None = None
) -> Settings:
    """Read the configuration (see :func:`config_path`) and apply *overrides*; errors name the file."""
    from ragwright.config.overrides import merge

    path = config_path(explicit, cwd=cwd)
    data: dict[str, Any] = {}
    if path is not None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path} is not valid TOML: {exc}") from None
        data = _relative_paths(data, path.parent)
    raw = merge(data, overrides or {})
    try:
        return Settings.from_dict(raw, path)
    except ConfigError as exc:
        where = f"{path}: " if path is not None else ""
        raise ConfigError(f"{where}{exc}", field=exc.field, value=exc.value) from None


def _relative_paths(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """``store`` and ``server.staging_dir`` given as relative paths are relative to the file's folder."""
    out = dict(data)
    store = out.get("store")
    if isinstance(store, str) and "://" not in store and not Path(store).expanduser().is_absolute():
        out["store"] = str(base / store)
    server = out.get("server")
    if isinstance(server, Mapping) and isinstance(server.get("staging_dir"), str):
        staging = Path(server["staging_dir"]).expanduser()
        out["server"] = {**server, "staging_dir": str(staging if staging.is_absolute() else base / staging)}
    return out
