"""The HTTP server: a FastAPI app over one store, API keys mapped to identities, a web page at ``/``.

``create_app(rag_or_store_path, config)`` builds the app (``pip install 'ragwright[server]'``);
``ragwright serve`` runs it with uvicorn. See :mod:`ragwright.server.app` for the routes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragwright.server.config import ServerConfig, ServerLimits, hash_key

if TYPE_CHECKING:
    from ragwright.rag import Rag

__all__ = ["ServerConfig", "ServerLimits", "create_app", "hash_key"]


def create_app(
    rag_or_store_path: Rag | str | Path, config: ServerConfig | Mapping[str, Any] | str | Path | None = None
) -> Any:
    """A FastAPI app serving *rag_or_store_path* (a :class:`Rag`, or the path of a SQLite store to open).

    *config* is a :class:`ServerConfig`, its JSON-shaped mapping, or the path of its JSON file; ``None``
    means no keys (anonymous, public content only) and default limits.
    """
    from ragwright.server.app import build_app

    return build_app(rag_or_store_path, config)
