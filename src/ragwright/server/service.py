"""What the HTTP routes do, without HTTP: options from JSON, caller-scoped views, ingestion, answers.

Every method takes the authenticated :class:`~ragwright.server.auth.Caller`; its identity is the only
thing that sets the security filter. Request bodies may carry options, never a tenant or groups.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import logging
import re
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragwright._sync import to_thread
from ragwright.errors import ConfigError
from ragwright.ingest import IngestReport
from ragwright.model.filters import as_filter, filter_size
from ragwright.model.identity import PUBLIC
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.model.results import RagResponse, SearchResult
from ragwright.options import EnsembleOptions, FeedbackOptions, RagOptions, RetrievalOptions
from ragwright.rag import Rag
from ragwright.server.auth import AuthError, Caller, require_writer
from ragwright.server.config import ServerConfig
from ragwright.server.limits import WorkLimiter, WorkTimeout
from ragwright.server.paths import RetrievalPaths
from ragwright.server.uploads import SweepResult, safe_file_name, sweep_uploads, tenant_folders

log = logging.getLogger(__name__)

#: Body keys that would name an identity: refused, since only the API key says who the caller is.
IDENTITY_KEYS = frozenset({"tenant", "groups", "identity", "user"})


class NotFound(Exception):
    """An unknown (or invisible to this caller) document or source (→ 404)."""


class Conflict(Exception):
    """A write that would replace a document the caller cannot see (→ 409)."""


def refuse_identity_keys(values: Mapping[str, Any]) -> None:
    named = sorted(IDENTITY_KEYS & set(values))
    if named:
        raise AuthError(403, f"{', '.join(named)} cannot be set in a request: tenant and groups come from your API key")


def options_from_json(base: Any, raw: Any, max_top_k: int, max_filter_terms: int = 256) -> Any:
    """*base* (RetrievalOptions or RagOptions) with the JSON overrides in *raw*, validated; a
    ``metadata_filter`` of more than *max_filter_terms* comparisons is refused (400, not a store error)."""
    if raw is None:
        return base
    if not isinstance(raw, Mapping):
        raise ConfigError("'options' must be a JSON object of option names to values")
    values = dict(raw)
    refuse_identity_keys(values)
    if "filter" in values:
        raise ConfigError("'filter' takes a Python Spec and cannot be sent over HTTP: use 'metadata_filter'")
    if isinstance(values.get("ensemble"), Mapping):
        values["ensemble"] = EnsembleOptions.from_dict(values["ensemble"])
    if isinstance(values.get("feedback"), Mapping):
        values["feedback"] = FeedbackOptions.from_dict(values["feedback"])
    options = base.merged(**values)
    terms = filter_size(as_filter(options.metadata_filter))
    if terms > max_filter_terms:
        raise ConfigError(
            f"metadata_filter has {terms} comparisons (a list value counts one per item); "
            f"this server accepts at most {max_filter_terms}",
            field="metadata_filter",
        )
    if options.top_k > max_top_k:
        raise ConfigError.invalid("top_k", options.top_k, f"an integer <= {max_top_k} on this server")
    for name in ("candidate_count", "mmr_candidate_count"):
        value = getattr(options, name, None)
        if value is not None and value > 10 * max_top_k:
            raise ConfigError.invalid(name, value, f"an integer <= {10 * max_top_k} on this server")
    return options


class Service(RetrievalPaths):
    """One server's state: the Rag facade, limits, the staging folder and a ledger of work done."""

    def __init__(self, rag: Rag, config: ServerConfig, staging_dir: Path) -> None:
        self.rag, self.config, self.limits = rag, config, config.limits
        self.staging_dir = staging_dir
        self.limiter = WorkLimiter(
            self.limits.max_concurrency, self.limits.queue_timeout_s, self.limits.request_timeout_s
        )
        #: Work done, per tenant: a caller's ``GET /status`` shows its own tenant's counts only.
        self.ledgers: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.started = time.time()
        self._ingest_lock: asyncio.Lock | None = None
        self._ingest_loop: asyncio.AbstractEventLoop | None = None

    # -- options -----------------------------------------------------------------------------------------
    def retrieval_options(self, raw: Any) -> RetrievalOptions:
        return options_from_json(  # type: ignore[no-any-return]
            self.rag.retrieval_options, raw, self.limits.max_top_k, self.limits.max_filter_terms
        )

    def rag_options(self, raw: Any) -> RagOptions:
        return options_from_json(  # type: ignore[no-any-return]
            self.rag.rag_options, raw, self.limits.max_top_k, self.limits.max_filter_terms
        )

    # -- retrieval and answers ---------------------------------------------------------------------------
    async def search(self, caller: Caller, query: str, raw_options: Any) -> dict[str, Any]:
        options = self.retrieval_options(raw_options)
        results = await self.limiter.run(
            lambda: self.rag.asearch(query, options, identity=caller.identity), owner=caller.identity.tenant
        )
        self.ledger(caller)["searches"] += 1
        return {"results": [r.to_dict() for r in results], "documents": await to_thread(self.titles, results)}

    async def ask(self, caller: Caller, question: str, raw_options: Any, *, agent: bool = False) -> dict[str, Any]:
        options = self.rag_options(raw_options)
        response = await self.limiter.run(
            lambda: self._answer(question, options, caller, agent), owner=caller.identity.tenant
        )
        self.ledger(caller)["answers"] += 1
        return {**response.to_dict(), "documents": await to_thread(self.titles, response.sources)}

    async def _answer(self, question: str, options: RagOptions, caller: Caller, agent: bool) -> Any:
        """The answer of a non-streamed ask: the agent loop when the request says ``"agent": true``."""
        if not agent:
            return await self.rag.aask(question, options, identity=caller.identity)
        from ragwright.rag_agent import agent_of, enable_agent

        agent_ = agent_of(self.rag) or enable_agent(self.rag)
        return await agent_.aask(question, identity=caller.identity, rag_options=options)

    async def ask_events(self, caller: Caller, question: str, raw_options: Any, *, agent: bool = False) -> AnswerEvents:
        """Server-sent events of an answer: ``token`` deltas, then ``sources``, ``citations`` and ``done``.

        Options, the work slot and the start of the answer (retrieval) are settled before the first
        event is produced, so a bad request still gets a plain 4xx instead of a broken stream.
        """
        options = self.rag_options(raw_options)
        deadline = time.monotonic() + self.limits.request_timeout_s
        slot = self.limiter.slot(caller.identity.tenant)
        await slot.__aenter__()
        try:
            if agent:  # the agent's answer is known only at its end: one delta
                stream = _OneShot(await _within(self._answer(question, options, caller, True), deadline))
            else:
                stream = await self._start_stream(question, options, caller, deadline)
        except BaseException:
            await slot.__aexit__(None, None, None)
            raise
        return AnswerEvents(self, self.ledger(caller), stream, slot, deadline)

    async def _start_stream(self, question: str, options: RagOptions, caller: Caller, deadline: float) -> Any:
        start = getattr(self.rag, "aask_stream", None)
        if start is None:  # a facade without streaming: the whole answer is one delta
            return _OneShot(await _within(self.rag.aask(question, options, identity=caller.identity), deadline))
        stream = start(question, options, identity=caller.identity)
        if inspect.isawaitable(stream):  # AsyncAnswerStream: awaiting runs retrieval now
            stream = await _within(stream, deadline)
        return stream

    def titles(self, results: Sequence[SearchResult]) -> dict[str, dict[str, Any]]:
        """Title and source of each document among *results* (the caller already sees them).

        Blocking (store reads): async callers run it on the worker pool."""
        out: dict[str, dict[str, Any]] = {}
        for r in results:
            if r.document_id not in out:
                record = self.rag.store.get_record(r.document_id)
                out[r.document_id] = {
                    "title": record.title if record else None,
                    "source": record.source if record else None,
                }
        return out

    # -- registry views ----------------------------------------------------------------------------------
    def visible_records(self, caller: Caller, status: DocumentStatus | None = None) -> list[DocumentRecord]:
        return [r for r in self.rag.store.list_records(status) if caller.identity.can_see(r.tenant, r.acl)]

    def documents(self, caller: Caller, status: str | None) -> dict[str, Any]:
        wanted = DocumentStatus.parse(status)
        return {"documents": [r.to_dict() for r in self.visible_records(caller, wanted)]}

    def remove(self, caller: Caller, document_id: str) -> dict[str, Any]:
        require_writer(caller)
        record = self.rag.store.get_record(document_id)
        if (
            record is None
            or record.status is DocumentStatus.DELETED
            or not caller.identity.can_see(record.tenant, record.acl)
        ):
            raise NotFound(f"no document with id {document_id!r} (GET /documents lists yours)")
        removed = self.rag.remove(document_id)
        self._unstage(document_id)
        self.ledger(caller)["documents_removed"] += 1
        return {"document_id": document_id, "chunks_removed": removed}

    def ledger(self, caller: Caller) -> Counter[str]:
        """The counts of work done for *caller*'s tenant."""
        return self.ledgers[caller.identity.tenant]

    def status(self, caller: Caller) -> dict[str, Any]:
        """Registry counts of the documents this caller can see, and its tenant's ledger: the work done,
        running and refused as busy for that tenant (never another tenant's activity)."""
        records = self.visible_records(caller)
        tenant = caller.identity.tenant
        counts = {s.value: sum(1 for r in records if r.status is s) for s in DocumentStatus}
        return {
            "documents": counts["indexed"],
            **counts,
            "chunks": sum(r.chunk_count for r in records if r.status is DocumentStatus.INDEXED),
            "embedding_model": self.rag.embedder.name,
            "failed_documents": [
                {"document": r.document_id, "stage": r.stage, "reason": r.reason}
                for r in records
                if r.status is DocumentStatus.FAILED
            ],
            "tenant": caller.identity.tenant,
            "groups": list(caller.identity.groups),
            "ledger": {
                **dict(sorted(self.ledger(caller).items())),
                "busy_rejections": self.limiter.rejected_by[tenant],
                "running": self.limiter.active_by[tenant],
                "uptime_s": round(time.time() - self.started, 1),
            },
        }

    # -- ingestion ---------------------------------------------------------------------------------------
    def ingest_acl(self, caller: Caller, requested: Sequence[str] | None) -> list[str] | None:
        """The ACL of what *caller* ingests: their groups by default; a request may narrow it to some of
        their groups or make it public within the tenant (``"*"``), never name a group they are not in."""
        if not requested:
            return list(caller.identity.groups) or None
        wanted = sorted({g.strip() for g in requested if g.strip()})
        outside = [g for g in wanted if g != PUBLIC and g not in caller.identity.groups]
        if outside:
            raise AuthError(403, f"you cannot grant access to group(s) you are not in: {', '.join(outside)}")
        return None if PUBLIC in wanted else wanted

    def staging_folder(self, caller: Caller) -> Path:
        """The tenant's upload folder (document ids of uploads are paths in it, so tenants never collide)."""
        tenant = caller.identity.tenant
        slug = re.sub(r"[^\w\-]+", "_", tenant)[:40] + "-" + hashlib.sha256(tenant.encode()).hexdigest()[:8]
        folder = self.staging_dir / slug
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def upload_targets(self, caller: Caller, names: Sequence[str | None]) -> list[Path]:
        """Where *caller*'s uploads of these file names go. An upload replaces the document staged under
        the same name in the tenant's folder, so one the caller cannot see (another group's) is refused:
        a write never touches a document its writer cannot see."""
        folder = self.staging_folder(caller)
        targets = [folder / safe_file_name(name) for name in names]
        for target in targets:
            record = self.rag.store.get_record(target.resolve().as_posix())
            if (
                record is not None
                and record.status is not DocumentStatus.DELETED
                and not caller.identity.can_see(record.tenant, record.acl)
            ):
                raise Conflict(
                    f"a document named {target.name!r} that you cannot see already exists in your tenant: "
                    "upload the file under another name"
                )
        return targets

    async def ingest_paths(self, caller: Caller, paths: Sequence[Path], acl: list[str] | None) -> dict[str, Any]:
        from ragwright.sources import FileListSource

        report = await self._ingest(caller, FileListSource(list(paths)), acl)
        async with self._lock():  # no ingestion of this server runs while the folder is swept
            swept = await to_thread(self.sweep, self.staging_folder(caller))
        self.ledger(caller)["failed_uploads_removed"] += len(swept.failed_removed)
        return {**report.to_dict(), "document_ids": [p.resolve().as_posix() for p in paths]}

    def sweep(self, folder: Path) -> SweepResult:
        """Keep one tenant's failed uploads within the quota and age limits (:mod:`~ragwright.server.uploads`)."""
        return sweep_uploads(
            self.rag.store,
            folder,
            quota_bytes=self.limits.failed_upload_quota_bytes,
            ttl_s=self.limits.failed_upload_ttl_s,
        )

    def sweep_all(self) -> None:
        """Sweep every tenant folder (at start-up: what a previous run left)."""
        for folder in tenant_folders(self.staging_dir):
            self.sweep(folder)

    async def ingest_source(self, caller: Caller, name: str, acl: list[str] | None) -> dict[str, Any]:
        """Ingest a configured source into the caller's tenant, as that tenant's own copy: its document ids
        are tenant-scoped (``@tenant:id``), so another tenant ingesting the same source never takes over,
        changes or deletes this tenant's documents."""
        from ragwright.sources import TenantScopedSource, open_source

        require_writer(caller)
        if name not in self.config.sources:
            known = ", ".join(sorted(self.config.sources)) or "none configured"
            raise NotFound(f"no configured source named {name!r} (sources: {known})")
        source = TenantScopedSource(open_source(self.config.sources[name]), caller.identity.tenant)
        report = await self._ingest(caller, source, acl)
        return report.to_dict()

    async def _ingest(self, caller: Caller, source: Any, acl: list[str] | None) -> IngestReport:
        lock = self._lock()
        async with lock:  # one ingestion at a time; searches go on beside it
            report = await self.limiter.run(
                lambda: self.rag.aingest(source, tenant=caller.identity.tenant, acl=acl),
                self.limits.ingest_timeout_s,
                owner=caller.identity.tenant,
            )
        ledger = self.ledger(caller)
        ledger["ingests"] += 1
        ledger["documents_added"] += report.added
        ledger["documents_updated"] += report.updated
        ledger["documents_failed"] += len(report.failed)
        ledger["chunks_indexed"] += report.chunks
        ledger["tokens_embedded"] += report.tokens_embedded
        return report

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._ingest_lock is None or self._ingest_loop is not loop:
            self._ingest_lock, self._ingest_loop = asyncio.Lock(), loop
        return self._ingest_lock

    def _unstage(self, document_id: str) -> None:
        path = Path(document_id)
        try:
            if path.is_absolute() and path.resolve().is_relative_to(self.staging_dir.resolve()) and path.is_file():
                path.unlink()
        except OSError as exc:  # the document is gone from the index either way
            log.warning("unstage_failed: %s: %s", document_id, exc)


class AnswerEvents:
    """The events of one streamed answer; :meth:`release` frees its work slot (idempotent)."""

    def __init__(self, service: Service, ledger: Counter[str], stream: Any, slot: Any, deadline: float) -> None:
        self.service, self.ledger = service, ledger
        self.stream, self.slot, self.deadline = stream, slot, deadline
        self._released = False

    async def __aiter__(self) -> AsyncIterator[tuple[str, Any]]:
        try:
            iterator = self.stream.__aiter__()
            while True:
                try:
                    delta = await _within(iterator.__anext__(), self.deadline)
                except StopAsyncIteration:
                    break
                yield "token", delta
            response: RagResponse = self.stream.response
            self.ledger["answers"] += 1
            full = response.to_dict()
            titles = await to_thread(self.service.titles, response.sources)
            yield "sources", {"sources": full["sources"], "documents": titles}
            yield "citations", {"citations": full["citations"], "declined": response.declined}
            yield "done", {k: v for k, v in full.items() if k not in ("sources", "citations")}
        except WorkTimeout as exc:
            yield "error", {"error": str(exc)}
        except Exception as exc:
            log.warning("ask_stream_failed: %s: %s", type(exc).__name__, exc)
            yield "error", {"error": f"the answer failed: {exc}"}
        finally:
            await self.release()

    async def release(self) -> None:
        if self._released:
            return
        self._released = True
        try:
            close = getattr(self.stream, "aclose", None)
            if close is not None and not getattr(self.stream, "done", True):
                await close()
        finally:
            await self.slot.__aexit__(None, None, None)


async def _within(work: Any, deadline: float) -> Any:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        if inspect.iscoroutine(work):
            work.close()
        raise WorkTimeout("the request ran past its time limit and was stopped")
    try:
        return await asyncio.wait_for(work, timeout=remaining)
    except TimeoutError:
        raise WorkTimeout("the request ran past its time limit and was stopped") from None


class _OneShot:
    """A finished answer as a stream of one delta (for a facade without ``aask_stream``)."""

    def __init__(self, response: RagResponse) -> None:
        self.response = response
        self._parts = [response.answer] if response.answer else []

    def __aiter__(self) -> _OneShot:
        return self

    async def __anext__(self) -> str:
        if not self._parts:
            raise StopAsyncIteration
        return self._parts.pop(0)
