"""The chunk-lookup conformance suite: what every :class:`~ragwright.stores.base.ChunkLookup` must do.

Expansion (parents, auto-merge, neighbours), MMR and pseudo-relevance feedback read chunks, parents
and vectors by id through this protocol. Subclass in a test module and provide a ``lookup`` fixture
(an empty backend bound to an embedder of dimension :data:`DIM`); a backend that is not a full
:class:`~ragwright.stores.base.ChunkStore` overrides :meth:`ChunkLookupConformance.put` to write::

    class TestMyLookup(ChunkLookupConformance):
        @pytest.fixture
        def lookup(self, tmp_path):
            backend = MyBackend(...)
            yield backend
            backend.close()

Checked: the protocol is implemented; chunks come back in the order asked, unknown ids left out
without an error; the caller's security filter applies inside every chunk and parent lookup (tenant,
ACL groups, a missing ACL denies) exactly like an id that does not exist; parents are found by id
under the same rules; stored vectors come back by id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.base import ChunkLookup

__all__ = ["DIM", "ChunkLookupConformance"]

DIM = 4


def _unit(i: int) -> Any:
    v = np.zeros(DIM, dtype=np.float32)
    v[i % DIM] = 1.0
    return v


class ChunkLookupConformance:
    """Subclass and provide a ``lookup`` fixture (see the module docstring)."""

    def put(
        self, lookup: Any, document_id: str, chunks: Sequence[Chunk], vectors: Any, parents: Sequence[Chunk]
    ) -> None:
        """Write one document's chunks (with their vectors) and parents. The default writes through
        ``ChunkStore.replace_document``; override it for another backend."""
        lookup.bind_embedder("test-model", DIM)
        record = DocumentRecord(
            document_id, f"memory:{document_id}", f"hash-{document_id}", DocumentStatus.INDEXED, chunk_count=len(chunks)
        )
        lookup.replace_document(record, list(chunks), vectors, list(parents))

    def _document(
        self, lookup: Any, document_id: str, n: int = 2, *, tenant: str = "default", acl: tuple[str, ...] = ("*",)
    ) -> tuple[list[Chunk], Chunk]:
        parent = Chunk.create(document_id, f"{document_id} whole section", 0, tenant=tenant, acl=acl)
        chunks = [
            Chunk.create(document_id, f"{document_id} part {i}", i, tenant=tenant, acl=acl, parent_id=parent.id)
            for i in range(n)
        ]
        self.put(lookup, document_id, chunks, np.stack([_unit(i) for i in range(n)]), [parent])
        return chunks, parent

    def test_the_protocol_is_implemented(self, lookup: Any) -> None:
        assert isinstance(lookup, ChunkLookup)

    def test_chunks_come_back_in_the_order_asked_and_unknown_ids_are_left_out(self, lookup: Any) -> None:
        chunks, _ = self._document(lookup, "a", 3)
        asked = [chunks[2].id, "no-such-id", chunks[0].id]
        assert [c.id for c in lookup.get_chunks(asked, Identity())] == [chunks[2].id, chunks[0].id]
        assert lookup.get_chunks([], Identity()) == []

    def test_tenants_see_only_their_own_chunks_and_parents(self, lookup: Any) -> None:
        acme, acme_parent = self._document(lookup, "acme-doc", tenant="acme")
        globex, globex_parent = self._document(lookup, "globex-doc", tenant="globex")
        ids = [acme[0].id, globex[0].id]
        assert [c.id for c in lookup.get_chunks(ids, Identity("acme"))] == [acme[0].id]
        assert [c.id for c in lookup.get_chunks(ids, Identity("globex"))] == [globex[0].id]
        parents = [acme_parent.id, globex_parent.id]
        assert [p.id for p in lookup.get_parents(parents, Identity("acme"))] == [acme_parent.id]
        assert lookup.get_parents(parents, Identity("initech")) == []

    def test_acl_groups_apply_and_a_missing_acl_denies(self, lookup: Any) -> None:
        hr, hr_parent = self._document(lookup, "hr-doc", acl=("hr",))
        nobody, nobody_parent = self._document(lookup, "nobody-doc", acl=())
        public, _ = self._document(lookup, "public-doc", acl=("*",))
        ids = [hr[0].id, nobody[0].id, public[0].id]
        assert [c.id for c in lookup.get_chunks(ids, Identity(groups=("eng",)))] == [public[0].id]
        assert [c.id for c in lookup.get_chunks(ids, Identity(groups=("hr",)))] == [hr[0].id, public[0].id]
        assert lookup.get_parents([hr_parent.id, nobody_parent.id], Identity(groups=("eng",))) == []
        assert [p.id for p in lookup.get_parents([hr_parent.id], Identity(groups=("hr",)))] == [hr_parent.id]

    def test_parents_are_found_by_id_with_their_text(self, lookup: Any) -> None:
        chunks, parent = self._document(lookup, "p")
        (found,) = lookup.get_parents([chunks[0].parent_id], Identity())
        assert found.id == parent.id and found.text == parent.text

    def test_stored_vectors_come_back_by_id(self, lookup: Any) -> None:
        chunks, _ = self._document(lookup, "v", 2)
        vectors = lookup.get_vectors([chunks[1].id, "no-such-id"])
        assert set(vectors) == {chunks[1].id}
        assert np.allclose(np.asarray(vectors[chunks[1].id], dtype=np.float32), _unit(1))
