"""The federation facade over real stores: collections of one store, Rags with other embedders, ask."""

from pathlib import Path

import numpy as np
import pytest

from ragwright.errors import ConfigError
from ragwright.federation import FEDERATION
from ragwright.model.identity import Identity
from ragwright.options import RagOptions
from ragwright.rag import Rag
from ragwright.rag_federation import FederatedResponse, federate, open_federation
from ragwright.sources import BytesSource
from ragwright.stores.base import ScoreScale
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

ALPHA = {"alpha.md": b"# Alpha\n\nThe refund policy allows returns within thirty days of purchase."}
BETA = {"beta.md": b"# Beta\n\nThe refund desk in Lisbon handles returns and exchanges for travellers."}


class Recording(HashingEmbedder):
    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.queries: list[str] = []

    def embed_query(self, text: str) -> np.ndarray:  # type: ignore[type-arg]
        self.queries.append(text)
        return super().embed_query(text)


def two_collections(tmp_path: Path) -> tuple[Rag, str]:
    """A SQLite store whose live collection holds ALPHA and whose second collection holds BETA."""
    store = SqliteStore(tmp_path / "s.db")
    rag = Rag(store, HashingEmbedder())
    rag.ingest(BytesSource(ALPHA))
    name = store.create_collection("second")
    with Rag(store.open_collection(name), HashingEmbedder()) as other:
        other.ingest(BytesSource(BETA))
    return rag, name


def test_collections_of_one_store(tmp_path: Path) -> None:
    rag, name = two_collections(tmp_path)
    with rag, federate(rag, collections=f"live,{name}=0.5") as fed:
        assert fed.score_scale is ScoreScale.OPAQUE_RANKING
        found = fed.search("refund returns", top_k=4)
        assert {(r.source, r.document_id) for r in found} == {("live", "alpha.md"), (name, "beta.md")}
        assert found.searched == ("live", name) and not found.failures
        assert all(r.fusion == "federated_rrf" and FEDERATION in r.arms for r in found)
        assert found[0].source == "live"  # equal ranks: the heavier source first
        only_second = federate(rag, collections=name).search("refund", top_k=4)
        assert {r.document_id for r in only_second} == {"beta.md"}


def test_an_unknown_collection_is_a_config_error_naming_the_known_ones(tmp_path: Path) -> None:
    rag, name = two_collections(tmp_path)
    with rag, pytest.raises(ConfigError, match=f"main, {name}"):
        federate(rag, collections="live,nope")
    with Rag(MemoryStore(), HashingEmbedder()) as plain, pytest.raises(ConfigError, match="unknown"):
        federate(plain, weights={"unknown": 2.0})


def test_same_chunk_ids_in_two_sources_are_two_results() -> None:
    a, b = Rag(MemoryStore(), HashingEmbedder()), Rag(MemoryStore(), HashingEmbedder())
    for rag in (a, b):
        rag.ingest(BytesSource(ALPHA))
    found = federate({"a": a, "b": b}).search("refund policy", top_k=6)
    ids = [(r.source, r.chunk_id) for r in found]
    assert len(ids) == len(set(ids)) and {s for s, _ in ids} == {"a", "b"}
    assert len({c for _, c in ids}) == len(ids) // 2  # the same chunk ids, once per source


def test_each_source_embeds_the_query_with_its_own_embedder() -> None:
    small, large = Recording(dimension=64, name="test/small"), Recording(dimension=256, name="test/large")
    a, b = Rag(MemoryStore(), small), Rag(MemoryStore(), large)
    a.ingest(BytesSource(ALPHA))
    b.ingest(BytesSource(BETA))
    small.queries.clear(), large.queries.clear()
    found = federate([a, b], weights={"s2": 0.8}).search("refund desk", options=None, top_k=4)
    assert "refund desk" in small.queries and "refund desk" in large.queries
    assert {r.source for r in found} == {"s1", "s2"}


def test_ask_answers_from_merged_evidence_and_skips_the_similarity_threshold() -> None:
    chat = ScriptedChat(default="Returns are accepted within thirty days [Source 1].")
    a = Rag(MemoryStore(), HashingEmbedder(), llm=chat)
    b = Rag(MemoryStore(), HashingEmbedder())
    a.ingest(BytesSource(ALPHA))
    b.ingest(BytesSource(BETA))
    strict = RagOptions(min_relevance=0.999, answerability="off", top_k=4)
    plain = a.ask("what is the refund policy?", strict)
    assert plain.declined and plain.decline_reason == "below_relevance_threshold"
    answer = federate({"a": a, "b": b}).ask("what is the refund policy?", strict)
    assert isinstance(answer, FederatedResponse) and not answer.declined
    assert answer.citations and answer.citations[0].source == 1
    assert {s.source for s in answer.sources} == {"a", "b"}
    assert answer.retrieval_path == "federated a+b → weighted rrf"
    payload = answer.to_dict()
    assert payload["federation"] == {"sources": ["a", "b"], "failures": []}
    assert {s["source"] for s in payload["sources"]} == {"a", "b"}


def test_ask_with_a_failing_source_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = Rag(MemoryStore(), HashingEmbedder()), Rag(MemoryStore(), HashingEmbedder())
    a.ingest(BytesSource(ALPHA))

    async def down(*args: object, **kwargs: object) -> object:
        raise OSError("disk gone")

    monkeypatch.setattr(b, "asearch", down)
    answer = federate({"a": a, "b": b}).ask("refund policy returns", RagOptions(answerability="off"))
    assert [f.source for f in answer.failures] == ["b"] and answer.searched == ("a",)
    assert "b failed: OSError" in (answer.retrieval_path or "")
    assert all(s.source == "a" for s in answer.sources)


def test_open_federation_owns_what_it_opens(tmp_path: Path) -> None:
    from ragwright.federation import FederationOptions

    rag, name = two_collections(tmp_path)
    other = tmp_path / "other.db"
    with Rag(SqliteStore(other), HashingEmbedder()) as second:
        second.ingest(BytesSource({"gamma.md": b"# Gamma\n\nRefund rules for the gamma shop."}))
    fed = open_federation(rag, FederationOptions.parse(f"live,{name}", {"other": str(other)}))
    found = fed.search("refund", identity=Identity(), top_k=6)
    assert {r.source for r in found} == {"live", name, "other"}
    fed.close()
    assert rag.search("refund")  # the main Rag stays open
    rag.close()


def test_a_collection_built_with_another_model_is_searched_with_that_model(tmp_path: Path) -> None:
    """A collection of the store bound to another embedder (e.g. the one a reindex replaced) is opened with
    the model it records, so the query is embedded by that model there and by the main one in live."""
    from ragwright.models.embedders import load_embedder

    store = SqliteStore(tmp_path / "s.db")
    main = Rag(store, Recording(name="test/main"))
    main.ingest(BytesSource(ALPHA))
    name = store.create_collection("other model")
    with Rag(store.open_collection(name), load_embedder("wordllama")) as other:
        other.ingest(BytesSource(BETA))
    with main, federate(main, collections=f"live,{name}") as fed:
        assert fed.sources[name].embedder.name.startswith("wordllama")
        found = fed.search("refund desk returns", top_k=4)
        assert {(r.source, r.document_id) for r in found} == {("live", "alpha.md"), (name, "beta.md")}
        assert "refund desk returns" in main.embedder.queries  # type: ignore[attr-defined]
