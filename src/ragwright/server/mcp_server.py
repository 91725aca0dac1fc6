"""An MCP server (Model Context Protocol, the ``mcp`` package: ``pip install 'ragwright[mcp]'``) exposing
``search``, ``ask`` and ``list_documents`` as tools, over stdio or streamable HTTP (``ragwright mcp``).

The caller is fixed when the server starts — ``[identity]`` in ``ragwright.toml`` or ``ragwright mcp
--tenant/--groups`` — and never taken from the model: no tool has an identity argument, an argument
naming one (``tenant``, ``groups`` …) is refused, and a tool's ``metadata_filter`` only narrows what the
identity's security filter already allows (it is applied inside every search arm, always). The tools
are read-only. Sizes are bounded like the HTTP server's (:class:`~ragwright.server.config.ServerLimits`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ragwright._deps import require
from ragwright.errors import ConfigError, RagwrightError
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentStatus
from ragwright.server.config import ServerLimits
from ragwright.server.service import IDENTITY_KEYS, options_from_json

if TYPE_CHECKING:
    from ragwright.rag import Rag

NAME: Final = "ragwright"
INSTRUCTIONS: Final = (
    "Search and ask questions over the documents indexed in this ragwright store. `ask` answers with "
    "[Source N] citations or declines when the documents do not support an answer; `search` returns the "
    "best passages; `list_documents` lists the documents. You see what the configured identity may see."
)


class Tools:
    """What the MCP tools do, without MCP: the Rag, the fixed identity and the limits."""

    def __init__(self, rag: Rag, identity: Identity, limits: ServerLimits | None = None) -> None:
        self.rag, self.identity = rag, identity
        self.limits = limits or ServerLimits()

    def _check_text(self, name: str, text: str) -> str:
        if not isinstance(text, str) or not text.strip():
            raise ConfigError.invalid(name, text, "a non-empty string")
        if len(text) > self.limits.max_query_chars:
            raise ConfigError.invalid(name, "…", f"at most {self.limits.max_query_chars} characters")
        return text

    def _options(self, base: Any, values: Mapping[str, Any]) -> Any:
        raw = {k: v for k, v in values.items() if v is not None}
        return options_from_json(base, raw, self.limits.max_top_k, self.limits.max_filter_terms)

    async def search(
        self, query: str, top_k: int | None = None, metadata_filter: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        options = self._options(self.rag.retrieval_options, {"top_k": top_k, "metadata_filter": metadata_filter})
        results = await self.rag.asearch(self._check_text("query", query), options, identity=self.identity)
        titles = self._titles(r.document_id for r in results)
        return {
            "results": [
                {
                    "rank": i,
                    "document_id": r.document_id,
                    "title": titles.get(r.document_id),
                    "section": " > ".join(r.chunk.section_path) or None,
                    "page": r.chunk.page,
                    "score": round(r.score, 6),
                    "text": r.compressed_text or r.chunk.text,
                }
                for i, r in enumerate(results, start=1)
            ]
        }

    async def ask(
        self, question: str, top_k: int | None = None, metadata_filter: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        options = self._options(self.rag.rag_options, {"top_k": top_k, "metadata_filter": metadata_filter})
        response = await self.rag.aask(self._check_text("question", question), options, identity=self.identity)
        titles = self._titles(r.document_id for r in response.sources)
        return {
            "answer": response.answer,
            "declined": response.declined,
            "decline_reason": response.decline_reason,
            "citations": [{**c.to_dict(), "title": titles.get(c.document_id)} for c in response.citations],
            "sources": [
                {"source": i, "document_id": r.document_id, "title": titles.get(r.document_id), "text": r.chunk.text}
                for i, r in enumerate(response.sources, start=1)
            ],
        }

    def list_documents(self, status: str | None = "indexed") -> dict[str, Any]:
        wanted = DocumentStatus.parse(status)
        records = [r for r in self.rag.store.list_records(wanted) if self.identity.can_see(r.tenant, r.acl)]
        return {
            "documents": [
                {
                    "document_id": r.document_id,
                    "title": r.title,
                    "source": r.source,
                    "status": r.status.value,
                    "chunks": r.chunk_count,
                }
                for r in records
            ]
        }

    def _titles(self, ids: Any) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for doc in ids:
            if doc not in out:
                record = self.rag.store.get_record(doc)
                out[doc] = record.title if record is not None else None
        return out


async def _refuse_identity(ctx: Any, call_next: Any) -> Any:
    """MCP middleware: a ``tools/call`` whose arguments name an identity (``tenant``, ``groups`` …) is
    refused before any tool runs (the tools' own arguments never include one)."""
    params = getattr(ctx, "params", None)
    if getattr(ctx, "method", None) == "tools/call" and isinstance(params, Mapping):
        arguments = params.get("arguments")
        named = sorted(IDENTITY_KEYS & set(arguments)) if isinstance(arguments, Mapping) else []
        if named:
            from mcp.shared.exceptions import MCPError
            from mcp.types import INVALID_PARAMS

            raise MCPError(
                INVALID_PARAMS,
                f"{', '.join(named)} cannot be set by a tool call: the identity is fixed by the server's configuration",
            )
    return await call_next(ctx)


def build_server(rag: Rag, identity: Identity, limits: ServerLimits | None = None) -> Any:
    """The ``mcp`` server object (an ``MCPServer``) with the three tools over *rag*, as *identity*."""
    require("mcp", "mcp", "the MCP server")
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    import ragwright

    tools = Tools(rag, identity, limits)
    server = MCPServer(NAME, instructions=INSTRUCTIONS, version=ragwright.__version__, log_level="WARNING")
    read_only = ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )

    from mcp.server.mcpserver.exceptions import ToolError

    async def search(
        query: str, top_k: int | None = None, metadata_filter: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Search the indexed documents: the best passages for the query, each with its document, title,
        section, page and score. metadata_filter narrows by metadata ({"department": "hr"})."""
        try:
            return await tools.search(query, top_k, metadata_filter)
        except RagwrightError as exc:  # the model sees what to change; a crash stays a crash
            raise ToolError(str(exc)) from exc

    async def ask(
        question: str, top_k: int | None = None, metadata_filter: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Answer a question from the indexed documents, with [Source N] citations; declined (declined:
        true, with the reason) when the documents do not support an answer."""
        try:
            return await tools.ask(question, top_k, metadata_filter)
        except RagwrightError as exc:
            raise ToolError(str(exc)) from exc

    def list_documents(status: str | None = "indexed") -> dict[str, Any]:
        """The documents you can see: id, title, source, status (indexed, failed, deleted) and chunk count."""
        try:
            return tools.list_documents(status)
        except RagwrightError as exc:
            raise ToolError(str(exc)) from exc

    for fn in (search, ask, list_documents):
        server.add_tool(fn, annotations=read_only)
    server.middleware.insert(0, _refuse_identity)
    server.tools = tools  # type: ignore[attr-defined]  # for tests and embedding applications
    return server
