"""A source as one tenant sees it: its document ids and listing root qualified by the tenant.

A document id names one registry row, one set of chunks and one staged copy. When several tenants
ingest the same source (a folder configured on the HTTP server, offered to every API key), the source's
own ids would make the second ingestion take the first tenant's documents over: the same ids, so the
rows and chunks move to the newer tenant, who may then delete them. Through :class:`TenantScopedSource`
each tenant gets its own copy: ``@acme:/srv/docs/handbook/leave.md`` beside
``@globex:/srv/docs/handbook/leave.md``, and a sync of one tenant's copy never removes another's.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator
from urllib.parse import quote, unquote

from ragwright.model.document import Document
from ragwright.sources.base import Source, SourceItem

_PREFIX = "@"


def tenant_document_id(tenant: str, document_id: str) -> str:
    """*document_id* of a source, as the document of *tenant* (``@tenant:id``; the tenant is %-quoted,
    so the first ``:`` ends it and distinct (tenant, id) pairs never share an id)."""
    if not tenant:
        raise ValueError("a tenant-scoped document id needs a tenant")
    return f"{_PREFIX}{quote(tenant, safe='')}:{document_id}"


def split_tenant_document_id(document_id: str) -> tuple[str, str] | None:
    """``(tenant, source id)`` of a tenant-scoped id, or ``None`` for any other id."""
    if not document_id.startswith(_PREFIX):
        return None
    tenant, sep, inner = document_id[len(_PREFIX) :].partition(":")
    return (unquote(tenant), inner) if sep and tenant else None


def scope_document(document: Document, tenant: str) -> Document:
    """*document* (and its attachments) under tenant-scoped ids: chunk ids derive from the document id."""
    new_id = tenant_document_id(tenant, document.id)
    return dataclasses.replace(
        document, id=new_id, children=tuple(_scope_child(c, document.id, new_id, tenant) for c in document.children)
    )


def _scope_child(child: Document, old_parent: str, new_parent: str, tenant: str) -> Document:
    if child.id.startswith(old_parent + "/"):
        renamed = dataclasses.replace(child, id=new_parent + child.id[len(old_parent) :])
        return dataclasses.replace(
            renamed, children=tuple(_scope_child(c, child.id, renamed.id, tenant) for c in child.children)
        )
    return scope_document(child, tenant)


class TenantScopedSource:
    """*source* with every document id and its root qualified by *tenant* (see the module docstring)."""

    def __init__(self, source: Source, tenant: str) -> None:
        self.source, self.tenant = source, tenant

    @property
    def root(self) -> str | None:
        root = self.source.root
        return None if root is None else tenant_document_id(self.tenant, root)

    def items(self) -> Iterator[SourceItem]:
        for item in self.source.items():
            yield dataclasses.replace(
                item,
                document_id=tenant_document_id(self.tenant, item.document_id),
                load=functools.partial(_scoped_load, item.load, self.tenant),
            )

    @property
    def skipped(self) -> list[tuple[str, str]]:
        """What the wrapped source refused to offer (a folder's links outside it)."""
        return list(getattr(self.source, "skipped", ()))

    def __len__(self) -> int:
        return len(self.source)


def _scoped_load(load: Callable[[], bytes | Document], tenant: str) -> bytes | Document:
    loaded = load()
    return scope_document(loaded, tenant) if isinstance(loaded, Document) else loaded
