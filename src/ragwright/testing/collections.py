"""The conformance suite of :class:`~ragwright.stores.base.Collections` (blue/green reindex).

Subclass it with a ``store`` fixture giving a new, empty store that offers collections::

    class TestMyCollections(CollectionsConformance):
        @pytest.fixture
        def store(self, tmp_path):
            s = MyStore(...)
            yield s
            s.close()

It checks: a new store has one live collection; a created collection is empty, not live, and written
through its pinned store object without touching the live one; the alias moves only to a built
collection, never when the check objects, and returns the previous one; :meth:`open_live` serves the
new collection after a switch while the previous stays readable until dropped; the live collection and
unknown names cannot be dropped.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ragwright.errors import StoreError
from ragwright.model.identity import Identity
from ragwright.stores.base import Collections
from ragwright.testing.conformance import DIM, chunks_for, record, unit

_ME = Identity()


def _put(store: Any, doc_id: str, text: str) -> None:
    chunks = chunks_for(doc_id, [text])
    store.replace_document(record(doc_id, 1), chunks, np.stack([unit(1, 0.5)]))


def _ids(store: Any) -> set[str]:
    return {h.chunk.document_id for h in store.search_dense(unit(1, 0.5), 10, identity=_ME)}


class CollectionsConformance:
    """Subclass and provide a ``store`` fixture: a new, empty store implementing ``Collections``."""

    def test_a_new_store_has_one_live_collection(self, store: Any) -> None:
        assert isinstance(store, Collections)
        (only,) = store.collections()
        assert only.live and only.name == store.live_collection == store.current_collection
        assert store.drop_abandoned_builds() == []

    def test_a_created_collection_is_separate_and_not_live(self, store: Any) -> None:
        store.bind_embedder("model-a", DIM)
        _put(store, "live-doc", "in the live collection")
        live = store.live_collection
        name = store.create_collection(note="test", building=True)
        assert name != live and store.live_collection == live
        infos = {c.name: c for c in store.collections()}
        assert set(infos) == {live, name} and infos[live].live and not infos[name].live
        assert (infos[name].documents, infos[name].chunks, infos[name].embedding_model) == (0, 0, None)
        built = store.open_collection(name)
        try:
            assert built.current_collection == name and built.count_chunks() == 0
            built.bind_embedder("model-b", DIM)  # another model: its own binding
            _put(built, "new-doc", "in the new collection")
            assert _ids(built) == {"new-doc"}
            assert _ids(store) == {"live-doc"} and store.embedding_model == ("model-a", DIM)
        finally:
            built.close()
        infos = {c.name: c for c in store.collections()}
        assert (infos[name].documents, infos[name].chunks, infos[name].embedding_model) == (1, 1, "model-b")

    def test_the_alias_moves_only_to_a_built_collection_and_only_when_the_check_agrees(self, store: Any) -> None:
        store.bind_embedder("model-a", DIM)
        live = store.live_collection
        empty = store.create_collection()
        with pytest.raises(StoreError, match="never built"):
            store.switch_alias(empty)
        built = store.open_collection(empty)
        built.bind_embedder("model-a", DIM)
        with pytest.raises(StoreError, match="changed meanwhile"):
            store.switch_alias(empty, check=lambda: "changed meanwhile")
        assert store.live_collection == live
        with pytest.raises(StoreError, match="nope"):
            store.switch_alias("nope")
        built.close()

    def test_after_a_switch_open_live_serves_the_new_one_and_the_previous_stays_until_dropped(self, store: Any) -> None:
        store.bind_embedder("model-a", DIM)
        _put(store, "old-doc", "old")
        previous = store.live_collection
        name = store.create_collection()
        built = store.open_collection(name)
        built.bind_embedder("model-b", DIM)
        _put(built, "new-doc", "new")
        built.close()
        assert store.switch_alias(name, check=lambda: None) == previous
        assert store.live_collection == name
        live = store.open_live()
        try:
            assert live.current_collection == name and _ids(live) == {"new-doc"}
            assert live.embedding_model == ("model-b", DIM)
            old = store.open_collection(previous)
            assert _ids(old) == {"old-doc"}
            old.close()
            with pytest.raises(StoreError, match="live"):
                live.drop_collection(name)
            live.drop_collection(previous)
            assert [c.name for c in live.collections()] == [name]
            with pytest.raises(StoreError):
                live.open_collection(previous)
            with pytest.raises(StoreError):
                live.drop_collection(previous)
            assert _ids(live) == {"new-doc"}
        finally:
            if live is not store:
                live.close()
