"""The graph beside a store (SQLite and PostgreSQL): cascade (edit, delete, ACL change), chunk metadata,
resolution, searches."""

import pytest

from ragwright.errors import ConfigError
from ragwright.graph import GraphOptions
from ragwright.model.identity import Identity
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.testing.doubles import HashingEmbedder
from tests.graph.backends import open_at, open_following

FILM = b"# Big Stone Gap\n\nBig Stone Gap is a 2014 American romantic comedy film directed by Adriana Trigiani."
AUTHOR = b"# Author\n\nAdriana Trigiani is a best-selling author. She lives in Greenwich Village in New York City."
SECRET = b"# Board minutes\n\nAdriana Trigiani secretly acquired Zorblax Holdings in Geneva."
ACME, BOARD = Identity("acme"), Identity("acme", ("board",))


def make(location: str, **options: object) -> Rag:
    return Rag(open_at(location), HashingEmbedder(max_tokens=64), graph=GraphOptions(**options))  # type: ignore[arg-type]


@pytest.fixture
def rag(location: str) -> Rag:
    r = make(location, merge_similarity=None)
    r.ingest(BytesSource({"film.md": FILM, "author.md": AUTHOR}), tenant="acme")
    r.ingest(BytesSource({"secret.md": SECRET}), tenant="acme", acl=["board"])
    return r


def test_local_search_walks_from_the_question_to_the_second_document(rag: Rag) -> None:
    found = rag.graph.search("Where does the director of Big Stone Gap live?", identity=ACME)  # type: ignore[union-attr]
    docs = [r.document_id for r in found.results]
    assert {"film.md", "author.md"} <= set(docs) and "secret.md" not in docs
    assert all("graph" in r.arms for r in found.results)
    assert ("Big Stone Gap", "directed", "Adriana Trigiani") in {(r.source, r.type, r.target) for r in found.relations}
    assert "Zorblax Holdings" not in {e.name for e in found.entities}


def test_entities_are_chunk_metadata_usable_in_filters(rag: Rag) -> None:
    hits = rag.search("film", identity=ACME, metadata_filter={"entities": "Big Stone Gap"})
    assert [h.document_id for h in hits] == ["film.md"]
    assert "Adriana Trigiani" in hits[0].chunk.metadata["entities"]  # type: ignore[operator]


def test_show_names_an_entity_only_through_visible_mentions(rag: Rag) -> None:
    graph = rag.graph
    assert graph is not None
    assert graph.show("Zorblax Holdings", identity=ACME) == (None, [])
    entity, _ = graph.show("Zorblax Holdings", identity=BOARD)
    assert entity is not None and entity.name == "Zorblax Holdings" and entity.type == "ORG"
    assert graph.show("Zorblax Holdings", identity=Identity("globex", ("board",))) == (None, [])


def test_acl_change_and_deletion_follow(rag: Rag) -> None:
    graph = rag.graph
    assert graph is not None
    rag.update_acl("secret.md", groups=None)
    assert graph.show("Zorblax Holdings", identity=ACME)[0] is not None
    assert graph.index.tables.documents()["secret.md"][1] == ("*",)
    rag.remove("secret.md")
    assert graph.show("Zorblax Holdings", identity=BOARD) == (None, [])
    assert "secret.md" not in graph.index.tables.documents()
    assert not graph.index.tables._rows("SELECT 1 FROM graph_mentions WHERE document_id = 'secret.md'")


def test_an_edited_document_replaces_its_mentions(rag: Rag) -> None:
    graph = rag.graph
    assert graph is not None
    rag.ingest(
        BytesSource({"film.md": b"# Big Stone Gap\n\nBig Stone Gap was directed by Melissa Nolan."}), tenant="acme"
    )
    keys = {r[0] for r in graph.index.tables._rows("SELECT key FROM graph_mentions WHERE document_id = 'film.md'")}
    assert "melissa nolan" in keys and "adriana trigiani" not in keys
    assert graph.show("Melissa Nolan", identity=ACME)[0] is not None


def test_a_store_ingested_before_the_graph_is_backfilled(location: str) -> None:
    plain = Rag(open_at(location), HashingEmbedder(max_tokens=64))
    plain.ingest(BytesSource({"film.md": FILM}), tenant="acme")
    plain.close()
    rag = make(location)
    rag.ingest(BytesSource({"film.md": FILM}), tenant="acme")  # unchanged: not re-chunked, but extracted
    assert rag.graph is not None and rag.graph.show("Adriana Trigiani", identity=ACME)[0] is not None


def test_resolution_merges_within_a_tenant_reversibly_and_never_across(location: str) -> None:
    rag = make(location, merge_similarity=0.5)
    rag.ingest(
        BytesSource({"a.md": b"Yesterday Contoso Pharma signed with Berlin. Contoso Pharmaceuticals grew."}),
        tenant="t1",
    )
    rag.ingest(BytesSource({"b.md": b"Yesterday Contoso Pharmacy opened in Berlin."}), tenant="t2")
    graph = rag.graph
    assert graph is not None
    added = graph.index.resolve()
    assert added and all(t == "t1" for t, *_ in added)  # t2 has one Contoso name: nothing to merge with
    assert {(a, k) for _, a, k, _ in added} & {
        ("contoso pharma", "contoso pharmaceuticals"),
        ("contoso pharmaceuticals", "contoso pharma"),
    }
    alias = added[0][1]
    assert graph.index.unmerge("t1", alias) and not graph.index.tables.merges("t1")
    assert [row[3] for row in graph.index.tables.merge_log("t1")][-2:] == ["merge", "unmerge"]


def test_global_search_cites_chunks_that_hold_each_sentence(rag: Rag) -> None:
    graph = rag.graph
    assert graph is not None
    response = graph.ask("What are the main themes?", mode="global", identity=ACME)
    assert not response.declined and response.citations
    by_number = {i + 1: s.chunk for i, s in enumerate(response.sources)}
    for citation in response.citations:
        assert citation.quote and citation.quote in by_number[citation.source].text
    assert "Zorblax" not in response.answer and "secret.md" not in {s.document_id for s in response.sources}
    assert graph.ask("themes?", mode="global", identity=Identity("globex")).declined


def test_options_are_validated() -> None:
    with pytest.raises(ConfigError, match=r"graph\.extractor"):
        GraphOptions(extractor="magic")
    with pytest.raises(ConfigError, match=r"graph\.hops"):
        GraphOptions(hops=7)


def test_a_document_changed_by_a_run_without_the_graph_is_extracted_again(location: str) -> None:
    rag = make(location)
    rag.ingest(BytesSource({"film.md": FILM}), tenant="acme")
    rag.close()
    plain = Rag(open_at(location), HashingEmbedder(max_tokens=64))  # the graph is off here
    plain.ingest(
        BytesSource({"film.md": b"# Big Stone Gap\n\nBig Stone Gap was directed by Melissa Nolan."}), tenant="acme"
    )
    plain.close()
    again = make(location)
    again.ingest(BytesSource({}), tenant="acme")  # any run with the graph reconciles it with the registry
    graph = again.graph
    assert graph is not None
    keys = {r[0] for r in graph.index.tables._rows("SELECT key FROM graph_mentions WHERE document_id = 'film.md'")}
    assert "melissa nolan" in keys and "adriana trigiani" not in keys
    assert graph.show("Adriana Trigiani", identity=ACME) == (None, [])


def test_the_callers_own_entities_are_kept(location: str) -> None:
    rag = make(location)
    rag.ingest(BytesSource({"film.md": FILM}), tenant="acme", metadata={"entities": "Trigiani Films"})
    (hit,) = rag.search("film", identity=ACME, top_k=1)
    names = hit.chunk.metadata["entities"]
    assert isinstance(names, list) and names[0] == "Trigiani Films" and "Adriana Trigiani" in names
    assert rag.search("film", identity=ACME, metadata_filter={"entities": "Trigiani Films"})


def test_the_graph_follows_a_blue_green_reindex_to_the_new_chunks(location: str) -> None:
    from ragwright.options import ChunkingOptions

    rag = make(location, merge_similarity=None)
    more = b" It was filmed in Virginia over one summer. The cast toured small towns. Critics were divided."
    rag.ingest(BytesSource({"film.md": FILM + more, "author.md": AUTHOR + more}), tenant="acme")
    before = {c.id for doc in ("film.md", "author.md") for c in rag.store.document_chunks(doc)}
    other = Rag(open_following(location), HashingEmbedder(max_tokens=64), graph=GraphOptions(merge_similarity=None))
    question = "Where does the director of Big Stone Gap live?"
    assert other.graph is not None and other.graph.search(question, identity=ACME).results  # another process
    report = rag.reindex(chunking=ChunkingOptions(max_tokens=24, min_tokens=4))
    assert report.switched, report.reason
    after = {c.id for doc in ("film.md", "author.md") for c in rag.store.document_chunks(doc)}
    assert after and after != before  # new chunk ids
    graph = rag.graph
    assert graph is not None and graph.index.store is rag.store
    rows = {r[0] for r in graph.index.tables._rows("SELECT chunk_id FROM graph_mentions")}
    assert rows and rows <= after  # every mention points at a chunk the new store serves
    found = graph.search("Where does the director of Big Stone Gap live?", identity=ACME)
    assert {"film.md", "author.md"} <= {r.document_id for r in found.results}
    assert graph.show("Adriana Trigiani", identity=ACME)[0] is not None
    rag.ingest(BytesSource({"secret.md": SECRET}), tenant="acme", acl=["board"])  # the new pipeline extracts
    assert graph.show("Zorblax Holdings", identity=BOARD)[0] is not None
    seen = other.graph.search(question, identity=ACME).results  # the other process reads the new graph too
    assert {"film.md", "author.md"} <= {r.document_id for r in seen} and {r.chunk.id for r in seen} <= after
    shown, _ = other.graph.show("Zorblax Holdings", identity=BOARD)
    assert shown is not None and set(shown.chunk_ids) <= {c.id for c in other.store.document_chunks("secret.md")}


def test_a_reindex_by_a_process_without_the_graph_is_caught_up(location: str) -> None:
    """Another process reindexes without the graph (on PostgreSQL: into a collection without its tables,
    which this process then reads; on SQLite: under mentions of the old chunks); this process's graph
    catches up at its next read: entities and relations over the new chunks, still under the caller's ACL."""
    from ragwright.options import ChunkingOptions

    rag = Rag(open_following(location), HashingEmbedder(max_tokens=64), graph=GraphOptions(merge_similarity=None))
    more = b" It was filmed in Virginia over one summer. The cast toured small towns. Critics were divided."
    rag.ingest(BytesSource({"film.md": FILM + more, "author.md": AUTHOR + more}), tenant="acme")
    rag.ingest(BytesSource({"secret.md": SECRET}), tenant="acme", acl=["board"])
    graph = rag.graph
    assert graph is not None
    question = "Where does the director of Big Stone Gap live?"
    assert graph.search(question, identity=ACME).results
    plain = Rag(open_following(location), HashingEmbedder(max_tokens=64))
    report = plain.reindex(chunking=ChunkingOptions(max_tokens=24, min_tokens=4))
    assert report.switched, report.reason
    served = {c.id for doc in ("film.md", "author.md", "secret.md") for c in plain.store.document_chunks(doc)}
    found = graph.search(question, identity=ACME)
    assert {"film.md", "author.md"} <= {r.document_id for r in found.results}
    assert {r.chunk.id for r in found.results} <= served and "secret.md" not in {r.document_id for r in found.results}
    rows = {r[0] for r in graph.index.tables._rows("SELECT chunk_id FROM graph_mentions")}
    assert rows and rows <= served  # every mention points at a chunk the new collection serves
    assert graph.show("Zorblax Holdings", identity=ACME) == (None, [])
    shown, _ = graph.show("Zorblax Holdings", identity=BOARD)
    assert shown is not None and set(shown.chunk_ids) <= served


class _PrefersAuthor:
    """A reranker that scores a passage by whether it talks about where someone lives."""

    name = "test/prefers-author"

    def __init__(self) -> None:
        self.calls = 0

    def score(self, query: str, passages: list[str]) -> list[float]:
        self.calls += 1
        return [1.0 if "lives" in p else 0.0 for p in passages]


def test_graph_local_results_are_reranked_when_a_reranker_is_configured(location: str) -> None:
    from ragwright.options import RetrievalOptions

    reranker = _PrefersAuthor()
    rag = Rag(
        open_at(location),
        HashingEmbedder(max_tokens=64),
        graph=GraphOptions(merge_similarity=None),
        reranker=reranker,
        retrieval_options=RetrievalOptions(use_hybrid_search=True, use_reranking=True),
    )
    rag.ingest(BytesSource({"film.md": FILM, "author.md": AUTHOR}), tenant="acme")
    rag.ingest(BytesSource({"secret.md": SECRET}), tenant="acme", acl=["board"])
    assert rag.graph is not None
    calls = reranker.calls
    found = rag.graph.search("Big Stone Gap director", identity=ACME, top_k=2)
    assert reranker.calls == calls + 2  # the hybrid search's candidates, then the fused graph + hybrid ones
    assert found.results[0].document_id == "author.md" and "secret.md" not in {r.document_id for r in found.results}
    assert len(found.results) <= 2
