"""The FastAPI app: routes, error mapping and the static page.

Routes: ``POST /ingest`` (multipart upload, or ``{"source": name}`` of a configured source),
``POST /search``, ``POST /ask`` (``Accept: text/event-stream`` → server-sent events), ``GET /documents``,
``DELETE /documents/{id}``, ``GET /status``, ``GET /health``, OpenAI's ``POST /v1/chat/completions`` and
``GET /v1/models`` (:mod:`ragwright.server.openai_compat`); the page at ``/``; OpenAPI at
``/openapi.json``. Every error is ``{"error": "…"}`` with a 4xx status for a caller's mistake.
Requests under a foreign ``Host`` (DNS rebinding) and, without keys, forged cross-site POSTs are refused
before they are read (:mod:`ragwright.server.guard`).

FastAPI and pydantic are imported inside :func:`build_app` (the ``server`` extra), so importing this
module needs only the base install. This module does not use postponed annotations: FastAPI reads the
endpoints' annotations when they are registered.
"""

import json
import logging
import os
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from ragwright._deps import require
from ragwright.errors import ConfigError, LimitExceeded, MissingDependencyError, RagwrightError, StoreBusyError
from ragwright.server.auth import AuthError, Caller, KeyRing, require_writer
from ragwright.server.config import ServerConfig
from ragwright.server.guard import HostPolicy, RequestGuard
from ragwright.server.limits import BodyLimit, Saturated, WorkTimeout
from ragwright.server.service import Conflict, NotFound, Service, refuse_identity_keys
from ragwright.sources.base import too_large

if TYPE_CHECKING:
    from ragwright.rag import Rag

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"
API_ROUTES = (
    ("POST", "/ingest"),
    ("POST", "/search"),
    ("POST", "/ask"),
    ("GET", "/documents"),
    ("DELETE", "/documents/{document_id}"),
    ("GET", "/status"),
    ("GET", "/health"),
    ("POST", "/v1/chat/completions"),
    ("GET", "/v1/models"),
)


def _config(config: "ServerConfig | Mapping[str, Any] | str | Path | None") -> ServerConfig:
    if config is None:
        return ServerConfig()
    if isinstance(config, ServerConfig):
        return config
    if isinstance(config, str | Path):
        return ServerConfig.load(config)
    return ServerConfig.from_dict(config)


def _open_rag(path: "str | Path") -> "Rag":
    from ragwright.models.embedders import load_embedder
    from ragwright.rag import Rag
    from ragwright.stores.open import embedder_spec_of, open_store

    store = open_store(path)
    try:
        return Rag(store, load_embedder(embedder_spec_of(store)))
    except BaseException:
        store.close()
        raise


def _staging_dir(rag: "Rag", config: ServerConfig) -> Path:
    if config.staging_dir is not None:
        return config.staging_dir
    store_path = getattr(rag.store, "path", None)
    if isinstance(store_path, Path | str) and str(store_path) not in ("", ":memory:"):
        p = Path(store_path).resolve()
        return p.parent / f"{p.name}.uploads"
    import tempfile

    return Path(tempfile.mkdtemp(prefix="ragwright-uploads-"))


def _sse(event: str, data: Any) -> bytes:
    """One server-sent event; *data* is always JSON (a token is a JSON string), so it is one line."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def build_app(
    rag_or_store_path: "Rag | str | Path", config: "ServerConfig | Mapping[str, Any] | str | Path | None"
) -> Any:
    """Build the app (see :func:`ragwright.server.create_app`)."""
    require("fastapi", "server", "the HTTP server")
    require("python_multipart", "server", "file uploads to the HTTP server")
    from fastapi import Depends, FastAPI, Request, Security
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
    from fastapi.security import APIKeyHeader, HTTPBearer
    from fastapi.staticfiles import StaticFiles
    from pydantic import BaseModel, ConfigDict, Field, model_validator
    from starlette.datastructures import UploadFile
    from starlette.exceptions import HTTPException

    import ragwright
    from ragwright._sync import to_thread

    cfg = _config(config)
    owns_rag = isinstance(rag_or_store_path, str | Path)
    rag = _open_rag(rag_or_store_path) if isinstance(rag_or_store_path, str | Path) else rag_or_store_path
    service = Service(rag, cfg, _staging_dir(rag, cfg))
    keyring = KeyRing(cfg)
    limits = cfg.limits

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await to_thread(service.sweep_all)  # failed uploads and leftovers a previous run kept
        yield
        from ragwright.parse.limits import shutdown as stop_parser_worker

        stop_parser_worker(kill=True)  # no request is running: its helper process goes with the app
        if owns_rag:
            rag.close()

    app = FastAPI(
        title="ragwright",
        version=ragwright.__version__,
        description="Ingest documents, search them and ask questions with cited answers. "
        + ("Every data endpoint needs an API key." if keyring.required else "Anonymous: public content only."),
        lifespan=lifespan,
        docs_url=None,  # served from packaged assets below, not from a CDN
        redoc_url=None,
    )
    app.state.service = service

    def limit_for(path: str) -> tuple[int, bool]:
        return (limits.max_upload_bytes, True) if path == "/ingest" else (limits.max_body_bytes, False)

    app.add_middleware(BodyLimit, limit_for=limit_for)
    # Added last, so it runs first: a rebinding Host or a forged cross-site POST is refused unread.
    app.add_middleware(RequestGuard, policy=HostPolicy.build(cfg.allowed_hosts, keyless=not keyring.required))

    # -- errors: always {"error": "..."} (OpenAI's {"error": {"message", "type", …}} under /v1/) -----------
    from ragwright.server.openai_compat import error_body, is_openai_path

    def error(request: Request, status: int, message: str, **extra: Any) -> JSONResponse:
        headers = extra.pop("headers", None)
        body = error_body(status, message, extra) if is_openai_path(request.url.path) else {"error": message, **extra}
        return JSONResponse(body, status_code=status, headers=headers)

    async def on_auth(_r: Request, exc: Exception) -> Response:
        assert isinstance(exc, AuthError)
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return error(_r, exc.status, exc.message, headers=headers)

    async def on_config(_r: Request, exc: Exception) -> Response:
        field = getattr(exc, "field", None)
        return error(_r, 400, str(exc), **({"field": field} if field else {}))

    def on_status(status: int) -> Any:
        async def handler(_r: Request, exc: Exception) -> Response:
            headers = {"Retry-After": "2"} if status == 503 else None
            return error(_r, status, str(exc), headers=headers)

        return handler

    async def on_validation(_r: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        details = [
            {"where": ".".join(str(p) for p in e.get("loc", ()) if p != "body"), "message": e.get("msg", "")}
            for e in exc.errors()
        ]
        text = "; ".join(f"{d['where']}: {d['message']}" if d["where"] else d["message"] for d in details)
        return error(_r, 422, f"invalid request: {text}", details=details)

    async def on_http(_r: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return error(_r, exc.status_code, str(exc.detail), headers=getattr(exc, "headers", None))

    async def on_ragwright(_r: Request, exc: Exception) -> Response:
        log.warning("request_failed: %s: %s", type(exc).__name__, exc)
        return error(_r, 501 if isinstance(exc, MissingDependencyError) else 500, str(exc))

    async def on_unexpected(_r: Request, exc: Exception) -> Response:
        log.exception("internal_error: %s", exc)
        return error(_r, 500, f"internal error ({type(exc).__name__}); see the server log")

    app.add_exception_handler(AuthError, on_auth)
    app.add_exception_handler(ConfigError, on_config)
    app.add_exception_handler(NotFound, on_status(404))
    app.add_exception_handler(Conflict, on_status(409))
    app.add_exception_handler(LimitExceeded, on_status(413))
    app.add_exception_handler(Saturated, on_status(503))
    app.add_exception_handler(StoreBusyError, on_status(503))  # another process is writing: retry
    app.add_exception_handler(WorkTimeout, on_status(504))
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(HTTPException, on_http)
    app.add_exception_handler(RagwrightError, on_ragwright)
    app.add_exception_handler(Exception, on_unexpected)

    # -- auth ---------------------------------------------------------------------------------------------
    bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer KEY")
    api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="X-API-Key: KEY")

    def get_caller(
        request: Request,
        _b: Annotated[Any, Security(bearer)],
        _k: Annotated[Any, Security(api_key_header)],
    ) -> Caller:
        return keyring.authenticate({k.lower(): v for k, v in request.headers.items()})

    # -- request bodies -----------------------------------------------------------------------------------
    class _Body(BaseModel):
        model_config = ConfigDict(extra="forbid")

        @model_validator(mode="before")
        @classmethod
        def _no_identity(cls, data: Any) -> Any:
            if isinstance(data, Mapping):
                refuse_identity_keys(data)
            return data

    class SearchRequest(_Body):
        query: str = Field(min_length=1, max_length=limits.max_query_chars, description="What to search for.")
        collections: str | list[str] | None = Field(
            default=None,
            description="Federated search over these sources, NAME[=WEIGHT]: the store's collections ('live': "
            "its live one) and the stores configured under [federation] stores.",
        )
        options: dict[str, Any] | None = Field(
            default=None, description='RetrievalOptions fields, e.g. {"top_k": 5, "metadata_filter": {…}}.'
        )
        hierarchical: bool = Field(
            default=False, description="Documents by summary first, then chunks inside the best ones."
        )
        graph: str | None = Field(
            default=None,
            pattern="^local$",
            description="local: graph local search (the question's entities, hops, evidence) fused with hybrid.",
        )

    class AskRequest(_Body):
        question: str = Field(min_length=1, max_length=limits.max_query_chars, description="The question.")
        collections: str | list[str] | None = Field(
            default=None, description="Answer from a federated search over these sources (one JSON answer)."
        )
        options: dict[str, Any] | None = Field(default=None, description="RagOptions fields.")
        hierarchical: bool = Field(
            default=False, description="Answer from the two-stage hierarchical search (one JSON answer)."
        )
        graph: str | None = Field(
            default=None,
            pattern="^(local|global)$",
            description="Answer from the entity graph: local (entities, hops, evidence) or global (themes across "
            "the communities you may fully see); one JSON answer.",
        )
        route: str | None = Field(
            default=None,
            pattern="^(auto|llm|off)$",
            description="Route the question: auto (rules), llm (classifier) or off; the answer says which route and "
            "why (one JSON answer, never a stream).",
        )
        agent: bool = Field(
            default=False, description="Answer with the agent loop (capped tool use; the answer has a trajectory)."
        )

    class SourceIngestRequest(_Body):
        source: str = Field(min_length=1, description="Name of a source configured on the server.")
        acl: list[str] | None = Field(default=None, description="Groups (of yours) allowed to see it; '*' = public.")

    # -- routes -------------------------------------------------------------------------------------------
    @app.get("/health", tags=["server"])
    async def health() -> dict[str, Any]:
        """Liveness: no key needed."""
        return {"status": "ok", "version": ragwright.__version__, "auth": "api_key" if keyring.required else "none"}

    @app.get("/status", tags=["server"])
    async def status(caller: Annotated[Caller, Depends(get_caller)]) -> dict[str, Any]:
        """Registry counts of the documents you can see, and the server's ledger of work done."""
        return await to_thread(service.status, caller)

    @app.post("/search", tags=["query"])
    async def search(body: SearchRequest, caller: Annotated[Caller, Depends(get_caller)]) -> dict[str, Any]:
        """The best chunks for a query: the same result shape as ``ragwright search --json``."""
        if body.collections is not None:  # federated (ragwright.rag_federation)
            return await service.search_federated(caller, body.query, body.options, body.collections)
        if body.hierarchical:
            return await service.search_hierarchical(caller, body.query, body.options)
        if body.graph is not None:
            return await service.search_graph(caller, body.query, body.options)
        return await service.search(caller, body.query, body.options)

    @app.post(
        "/ask",
        tags=["query"],
        responses={200: {"content": {"text/event-stream": {}}, "description": "JSON answer, or SSE when asked"}},
    )
    async def ask(body: AskRequest, request: Request, caller: Annotated[Caller, Depends(get_caller)]) -> Any:
        """An answer with ``[Source N]`` citations. With ``Accept: text/event-stream``: events ``token``
        (a text delta, JSON string), then ``sources``, ``citations`` and ``done``; ``error`` on failure."""
        route = body.route
        named = body.collections is not None or body.hierarchical or body.agent or body.graph is not None
        if route is None and not named:  # [route]: a request that names no path of its own is routed
            route = getattr(service, "default_route", None)
        if route not in (None, "off"):  # routed (ragwright.rag_route): one JSON answer, never a stream
            return await service.ask_routed(caller, body.question, body.options, str(route))
        if body.collections is not None:  # federated evidence: one JSON answer, never a stream
            return await service.ask_federated(caller, body.question, body.options, body.collections)
        if body.hierarchical:  # the answer is known at its end: one JSON answer, never a stream
            return await service.ask_hierarchical(caller, body.question, body.options)
        if body.graph is not None:  # GraphRAG (ragwright.rag_graph): one JSON answer
            return await service.ask_graph(caller, body.question, body.options, body.graph)
        if "text/event-stream" not in request.headers.get("accept", ""):
            return await service.ask(caller, body.question, body.options, agent=body.agent)
        events = await service.ask_events(caller, body.question, body.options, agent=body.agent)

        async def stream() -> AsyncIterator[bytes]:
            try:
                async for event, data in events:
                    yield _sse(event, data)
            finally:  # also when the client goes away mid-answer: the work slot is freed
                await events.release()

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        )

    upload_schema = {
        "type": "object",
        "properties": {
            "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
            "acl": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["files"],
    }
    source_schema = SourceIngestRequest.model_json_schema()

    @app.post(
        "/ingest",
        tags=["documents"],
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "multipart/form-data": {"schema": upload_schema},
                    "application/json": {"schema": source_schema},
                },
            }
        },
    )
    async def ingest(request: Request, caller: Annotated[Caller, Depends(get_caller)]) -> dict[str, Any]:
        """Upload files (multipart field ``files``, optional ``acl``) or name a configured source
        (``{"source": name}``); they are ingested into your tenant. Returns the ingest report."""
        require_writer(caller)
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == "application/json":
            try:
                raw = json.loads(await request.body() or b"null")
            except ValueError as exc:
                raise ConfigError(f"the request body is not valid JSON: {exc}") from None
            if not isinstance(raw, Mapping):
                raise ConfigError('send {"source": "<name>"} or a multipart upload of files')
            try:
                parsed = SourceIngestRequest.model_validate(raw)
            except ValueError as exc:
                raise ConfigError(f"invalid ingest request: {exc}") from None
            return await service.ingest_source(caller, parsed.source, service.ingest_acl(caller, parsed.acl))
        if kind != "multipart/form-data":
            raise ConfigError(
                "POST /ingest takes multipart/form-data (field 'files') or application/json {\"source\": name}"
            )
        form = await request.form(max_files=limits.max_files, max_fields=50)
        try:
            uploads = [f for f in form.getlist("files") if isinstance(f, UploadFile)]
            if not uploads:
                raise ConfigError("no files in the upload: send them in the multipart field 'files'")
            refuse_identity_keys({k: None for k in form})
            acl = service.ingest_acl(caller, [a for a in form.getlist("acl") if isinstance(a, str)])
            targets = await to_thread(service.upload_targets, caller, [u.filename for u in uploads])
            max_file = rag.ingestion.options.parse.max_file_bytes
            paths = [
                await to_thread(_stage, upload, target, max_file)
                for upload, target in zip(uploads, targets, strict=True)
            ]
        finally:
            await form.close()
        return await service.ingest_paths(caller, paths, acl)

    @app.get("/documents", tags=["documents"])
    async def documents(caller: Annotated[Caller, Depends(get_caller)], status: str | None = None) -> dict[str, Any]:
        """The registry records you can see (``?status=indexed|failed|deleted``)."""
        return await to_thread(service.documents, caller, status)

    @app.delete("/documents/{document_id:path}", tags=["documents"])
    async def delete_document(document_id: str, caller: Annotated[Caller, Depends(get_caller)]) -> dict[str, Any]:
        """Remove a document you can see, with its chunks (404 when unknown)."""
        return await to_thread(service.remove, caller, document_id)

    from ragwright.server import openai_compat

    openai_compat.add_routes(app, service, get_caller)  # POST /v1/chat/completions, GET /v1/models

    # -- the page -----------------------------------------------------------------------------------------
    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    from ragwright.server.docs import add_docs

    add_docs(app, app.title)  # /docs and /redoc from packaged assets (offline)
    return app


def _stage(upload: Any, target: Path, max_bytes: int) -> Path:
    """Copy one uploaded file to *target* in the staging folder (atomically: a partial file never replaces
    one). A file over *max_bytes* (the parse size limit) is refused (413) before or while it is copied."""
    size = getattr(upload, "size", None)
    if isinstance(size, int) and size > max_bytes:
        raise too_large(size, max_bytes)
    tmp = target.parent / f".{target.name}.{uuid.uuid4().hex}.part"
    try:
        copied = 0
        with tmp.open("wb") as out:
            while block := upload.file.read(1 << 20):
                copied += len(block)
                if copied > max_bytes:
                    raise too_large(copied, max_bytes)
                out.write(block)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
