from hypothesis import given
from hypothesis import strategies as st

from ragwright.model.chunk import Chunk
from ragwright.model.ids import canonical_json, chunk_id, content_hash, metadata_hash


@given(st.text(min_size=1), st.text(), st.integers(min_value=0, max_value=10_000))
def test_chunk_id_is_deterministic(doc: str, text: str, pos: int) -> None:
    a = chunk_id(doc, content_hash(text), pos)
    assert a == chunk_id(doc, content_hash(text), pos)
    assert len(a) == 32


@given(st.text(min_size=1), st.text(), st.integers(min_value=0, max_value=1000))
def test_chunk_id_changes_with_each_part(doc: str, text: str, pos: int) -> None:
    base = chunk_id(doc, content_hash(text), pos)
    assert base != chunk_id(doc + "x", content_hash(text), pos)
    assert base != chunk_id(doc, content_hash(text + "x"), pos)
    assert base != chunk_id(doc, content_hash(text), pos + 1)


def test_separator_prevents_collisions() -> None:
    assert chunk_id("ab", content_hash("c"), 0) != chunk_id("a", content_hash("bc"), 0)


@given(st.dictionaries(st.text(max_size=5), st.integers(), max_size=6))
def test_metadata_hash_ignores_key_order(d: dict[str, int]) -> None:
    reversed_d = dict(reversed(list(d.items())))
    assert metadata_hash(d) == metadata_hash(reversed_d)
    assert canonical_json(d) == canonical_json(reversed_d)


def test_chunk_create_uses_content_and_position() -> None:
    a = Chunk.create("doc", "hello", 0)
    assert a.id == chunk_id("doc", content_hash("hello"), 0)
    assert Chunk.create("doc", "hello", 0).id == a.id
    assert Chunk.create("doc", "hello", 1).id != a.id
