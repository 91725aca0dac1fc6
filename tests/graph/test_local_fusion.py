"""How local search combines the graph with hybrid search (``GraphOptions.fusion``): ``bridge`` keeps
hybrid's order and only adds the chunk about an entity named by a hybrid chunk about a question entity;
``rrf`` promotes whatever both arms found."""

from dataclasses import replace
from pathlib import Path

import pytest

from ragwright.config.settings import Settings
from ragwright.errors import ConfigError
from ragwright.graph import GraphOptions
from ragwright.graph.fusion import fuse
from ragwright.graph.local import Walk, walk
from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.model.results import ArmHit, SearchResult
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder

BRIDGE = GraphOptions(fusion="bridge")


def _chunk(cid: str) -> Chunk:
    return Chunk(id=cid, document_id=f"doc-{cid}", text=f"text of {cid}", position=0)


def _hybrid(*ids: str) -> list[SearchResult]:
    return [SearchResult(_chunk(c), 1.0 - i / 100, {"dense": ArmHit(i + 1, 0.5)}) for i, c in enumerate(ids)]


def _walk(ranking: list[str], anchored: set[str], extra: tuple[str, ...] = ()) -> Walk:
    visible = {c: _chunk(c) for c in [*ranking, *extra]}
    return Walk([(c, 10.0 - i) for i, c in enumerate(ranking)], visible, {}, 1, anchored)


def _ids(results: list[SearchResult]) -> list[str]:
    return [r.chunk_id for r in results]


def test_without_an_anchored_bridge_hybrids_order_is_kept_even_for_chunks_both_arms_found() -> None:
    hybrid = _hybrid("h1", "h2", "h3", "h4", "h5", "h6", "h7")
    found = _walk(["h7", "h6", "g1"], anchored=set())
    bridged = fuse(hybrid, found, GraphOptions(fusion="bridge"), top_k=5)
    assert _ids(bridged) == ["h1", "h2", "h3", "h4", "h5"]
    assert bridged[0].score == hybrid[0].score and bridged[0].arms == hybrid[0].arms
    fused = fuse(hybrid, found, GraphOptions(fusion="rrf"), top_k=5)
    assert "h7" in _ids(fused)[:2]  # RRF lifts hybrid's rank 7 for being found by the graph as well


def test_an_anchored_bridge_chunk_is_placed_after_hybrids_first_results() -> None:
    hybrid = _hybrid("h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8")
    found = _walk(["h2", "h8", "g1"], anchored={"h8", "g1"})
    out = fuse(hybrid, found, BRIDGE, top_k=6)
    assert _ids(out) == ["h1", "h2", "h3", "h8", "h4", "h5"]  # moved up from hybrid's rank 8, once
    assert out[3].arms["graph"] == ArmHit(2, 9.0) and "dense" in out[3].arms
    assert [r.score for r in out] == sorted((r.score for r in out), reverse=True)
    two = fuse(hybrid, found, GraphOptions(fusion="bridge", bridges=2, bridge_position=1), top_k=4)
    assert _ids(two) == ["h1", "h8", "g1", "h2"]  # g1 hybrid did not return: added, from the graph's chunks
    assert "dense" not in two[2].arms and two[2].arms["graph"].rank == 3
    assert _ids(fuse(hybrid, found, GraphOptions(fusion="bridge", bridges=0), top_k=4)) == ["h1", "h2", "h3", "h4"]


def test_a_bridge_hybrid_already_ranks_first_is_not_moved() -> None:
    hybrid = _hybrid("h1", "h2", "h3", "h4")
    out = fuse(hybrid, _walk(["h2"], anchored={"h2"}), BRIDGE, top_k=4)
    assert _ids(out) == ["h1", "h2", "h3", "h4"]
    short = fuse(_hybrid("h1"), _walk(["g1"], anchored={"g1"}), BRIDGE, top_k=4)
    assert _ids(short) == ["h1", "g1"]


def test_anchored_fusion_is_rrf_only_for_a_question_with_an_anchored_bridge() -> None:
    hybrid = _hybrid("h1", "h2", "h3", "h4", "h5", "h6", "h7")
    anchored = GraphOptions(fusion="anchored")
    plain = fuse(hybrid, _walk(["h7", "h6", "g1"], anchored=set()), anchored, top_k=5)
    assert _ids(plain) == ["h1", "h2", "h3", "h4", "h5"]  # no two-hop chain: hybrid's ranking, not RRF's
    assert [r.score for r in plain] == [r.score for r in hybrid[:5]] and "graph" not in plain[0].arms
    both = fuse(_hybrid("h1", "h2"), _walk(["h2"], anchored=set()), anchored, top_k=2)
    assert both[1].arms["graph"] == ArmHit(1, 10.0) and "dense" in both[1].arms  # the graph's rank is kept
    found = _walk(["h7", "h6", "g1"], anchored={"g1"})
    fired = fuse(hybrid, found, anchored, top_k=5)
    assert _ids(fired) == _ids(fuse(hybrid, found, GraphOptions(fusion="rrf"), top_k=5))
    assert "h7" in _ids(fired)[:2] and _ids(fired) != _ids(plain)


@pytest.mark.parametrize(
    ("field", "value"), [("fusion", "convex"), ("bridge_position", -1), ("bridges", 11), ("bridges", 1.5)]
)
def test_fusion_options_are_validated(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=f"graph.{field}"):
        GraphOptions(**{field: value})  # type: ignore[arg-type]


def test_the_config_file_sets_the_fusion() -> None:
    settings = Settings.from_dict({"graph": {"fusion": "bridge", "bridges": 2}})
    assert settings.graph is not None and settings.graph.fusion == "bridge" and settings.graph.bridges == 2
    assert settings.to_dict()["graph"]["fusion"] == "bridge"
    with pytest.raises(ConfigError, match=r"graph\.fusion"):
        Settings.from_dict({"graph": {"fusion": "bridges"}})


DOCS = {
    "film.md": b"Big Stone Gap is a 2014 American comedy film directed by Adriana Trigiani.",
    "author.md": b"Adriana Trigiani is a best-selling author. She lives in Greenwich Village.",
    "panel.md": b"A panel in Boston with Kim Lee, Adriana Trigiani and Ruth Ozeki discussed novels.",
    "village.md": b"Greenwich Village is a neighborhood of Manhattan with Ruth Ozeki among its writers.",
}
WHO = Identity("acme")


def test_the_chunk_about_the_entity_the_question_entitys_chunk_names_is_the_anchored_bridge(tmp_path: Path) -> None:
    rag = Rag(
        SqliteStore(tmp_path / "s.db"), HashingEmbedder(max_tokens=64), graph=replace(BRIDGE, merge_similarity=None)
    )
    rag.ingest(BytesSource(DOCS), tenant="acme")
    assert rag.graph is not None
    question = "Where does the director of Big Stone Gap live?"
    hybrid = rag.search(question, identity=WHO, top_k=20)
    assert hybrid[0].document_id == "film.md"
    g = rag.graph
    found = walk(g.index.tables, g._view(WHO), question, g.index.extractor, g.options, hybrid)
    docs = {found.visible[c].document_id for c in found.anchored}
    assert docs == {"author.md"}  # opens with Adriana Trigiani, whom the film's chunk (about Big Stone Gap) names
    assert {found.visible[c].document_id for c in found.bridges} >= {"author.md", "village.md"}
    results = g.search(question, identity=WHO, top_k=4).results
    assert results[0].document_id == "film.md"
    assert "author.md" in [r.document_id for r in results[:4]]
    alone = walk(g.index.tables, g._view(WHO), question, g.index.extractor, g.options, ())
    assert alone.anchored == set()  # no hybrid chunk about a question entity: nothing is anchored
    assert g.ask(question, identity=WHO).retrieval_path == "hybrid+graph → bridge"
    assert GraphOptions().fusion == "anchored"  # bridge is opt-in; anchored won on fresh questions (RESULTS.md)
