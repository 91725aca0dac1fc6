from ragwright.model.chunk import Chunk
from ragwright.model.results import SearchResult
from ragwright.model.specs import DocumentIdSpec, HasTagSpec, MinScoreSpec


def result(doc: str, score: float, **meta: object) -> SearchResult:
    return SearchResult(Chunk.create(doc, "t", 0, metadata=meta), score)  # type: ignore[arg-type]


def test_specs_compose() -> None:
    spec = DocumentIdSpec("a") & MinScoreSpec(0.7)
    assert spec(result("a", 0.8)) and not spec(result("a", 0.6)) and not spec(result("b", 0.9))
    either = HasTagSpec("dept", "finance") | HasTagSpec("dept", "legal")
    assert either(result("x", 0, dept="legal")) and not either(result("x", 0, dept="hr"))
    assert (~either)(result("x", 0, dept="hr"))
    assert not HasTagSpec("page", 3)(result("x", 0, page="3"))
