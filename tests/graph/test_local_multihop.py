"""Local search's multi-hop behaviour chosen on HotpotQA (benchmarks/graph_multihop.py): the chunk that is
about a reached entity (opens with it) outranks chunks that merely mention it, lowercase words of the
question do not seed, and relations are read through both indexed columns."""

from ragwright.graph import GraphOptions
from ragwright.model.identity import Identity
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.testing.doubles import HashingEmbedder
from tests.graph.backends import open_at

DOCS = {
    "film.md": b"# Big Stone Gap\n\nBig Stone Gap is a 2014 American comedy film directed by Adriana Trigiani.",
    "author.md": b"# Author\n\nAdriana Trigiani is a best-selling author. She lives in Greenwich Village.",
    "panel.md": b"# Panel\n\nA panel in Boston with Kim Lee, Adriana Trigiani and Ruth Ozeki discussed novels.",
    "prize.md": b"# Prize\n\nThe jury of Oslo named Adriana Trigiani and Ruth Ozeki among the finalists.",
    "office.md": b"# Office\n\nShe met the Director in Paris.",
}
WHO = Identity("acme")


def make(location: str) -> Rag:
    rag = Rag(open_at(location), HashingEmbedder(max_tokens=64), graph=GraphOptions(merge_similarity=None))
    rag.ingest(BytesSource(DOCS), tenant="acme")
    return rag


def test_the_chunk_about_the_bridge_entity_leads_the_graph_arm(location: str) -> None:
    rag = make(location)
    assert rag.graph is not None
    found = rag.graph.search("Where does the director of Big Stone Gap live?", identity=WHO, top_k=5)
    graph_rank = {r.document_id: r.arms["graph"].rank for r in found.results if "graph" in r.arms}
    assert graph_rank["author.md"] < graph_rank["panel.md"] and graph_rank["author.md"] < graph_rank["prize.md"]
    seeds = {e.name for e in found.entities if e.hop == 0 and e.weight == 1.0}
    assert "Big Stone Gap" in seeds and "Director" not in seeds  # "director" is lowercase in the question


def test_relations_are_found_from_either_end(location: str) -> None:
    rag = make(location)
    assert rag.graph is not None
    tables, security = rag.graph.index.tables, rag.graph._view(WHO).sql()
    ends = {(r[2], r[3]) for r in tables.relations(security, ["adriana trigiani"])}
    assert ("big stone gap", "adriana trigiani") in ends  # as target
    assert any(s == "adriana trigiani" for s, _ in ends) or any(t == "adriana trigiani" for _, t in ends)
    both = tables.relations(security, ["big stone gap", "adriana trigiani"])
    assert len(both) == len(set(both))  # a relation between two asked keys comes once
    assert tables.relations(security, []) == []
