"""Parent-child chunking (parent-document retrieval).

The small children (the normal chunks) are embedded and searched; the large parents — consecutive
children joined up to ``chunk_size`` characters — are stored without embedding. Parents are built
from whole children, so every child lies *entirely* inside the parent it points to (the seed's
independent second pass can cut a child across two parents). Neighbouring parents share trailing
children worth up to ``overlap`` characters. Parents carry the document's tenant and ACL.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ragwright.model.chunk import Chunk
from ragwright.model.ids import chunk_id, content_hash

VERSION = "parents/2"


def _groups(children: Sequence[Chunk], size: int, overlap: int) -> list[tuple[list[int], list[int]]]:
    """``(members, owned)`` index lists per parent: members are joined, owned children point to it."""
    groups: list[tuple[list[int], list[int]]] = []
    members: list[int] = []
    owned: list[int] = []
    length = 0
    for i, child in enumerate(children):
        extra = len(child.text) + (2 if members else 0)
        if owned and length + extra > size:
            groups.append((members, owned))
            carried: list[int] = []
            carried_len = 0
            for j in reversed(members):  # trailing children shared with the next parent
                cost = len(children[j].text) + 2
                if carried_len + cost > overlap:
                    break
                carried.insert(0, j)
                carried_len += cost
            members, owned, length = list(carried), [], max(0, carried_len - 2)
            extra = len(child.text) + (2 if members else 0)
        members.append(i)
        owned.append(i)
        length += extra
    if owned:
        groups.append((members, owned))
    return groups


def attach_parents(
    document_id: str, children: Sequence[Chunk], *, chunk_size: int = 2048, overlap: int = 100
) -> tuple[list[Chunk], list[Chunk]]:
    """Build the parents of a document's children; returns ``(children with parent_id, parents)``."""
    if not children:
        return [], []
    first = children[0]
    parents: list[Chunk] = []
    parent_of: dict[int, str] = {}
    for position, (members, owned) in enumerate(_groups(children, chunk_size, overlap)):
        body = "\n\n".join(children[i].text for i in members)
        pid = "p-" + chunk_id(document_id, content_hash(body), position)[2:]
        pages = [p for i in members for p in (children[i].page, children[i].page_end) if p is not None]
        parents.append(
            Chunk(
                id=pid,
                document_id=document_id,
                text=body,
                position=position,
                tenant=first.tenant,
                acl=first.acl,
                page=min(pages) if pages else None,
                page_end=max(pages) if pages else None,
                metadata={"parent": True, "children": [children[i].id for i in members]},
            )
        )
        parent_of.update({i: pid for i in owned})
    linked = [dataclasses.replace(c, parent_id=parent_of[i]) for i, c in enumerate(children)]
    return linked, parents
