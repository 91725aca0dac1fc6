from ragwright.generate.extractive import ExtractiveAnswerer, _pieces
from ragwright.model.chunk import Chunk
from ragwright.model.results import SearchResult
from ragwright.options import RagOptions
from ragwright.testing.doubles import HashingEmbedder


def test_table_rows_become_self_describing_records() -> None:
    text = "Prices below.\n\n| Service | Cost |\n| --- | --- |\n| Express | 12.90 EUR |\n| Standard | 4.90 EUR |"
    assert _pieces(text) == ["Prices below.", "Service: Express; Cost: 12.90 EUR", "Service: Standard; Cost: 4.90 EUR"]


def test_answer_quotes_and_cites_the_supporting_sentence() -> None:
    sources = [
        SearchResult(Chunk.create("a", "The cafeteria opens at nine. Parking is free for staff members.", 0), 0.5),
        SearchResult(
            Chunk.create("b", "Refunds are possible within thirty days of delivery for all customers.", 0), 0.4
        ),
    ]
    response = ExtractiveAnswerer(HashingEmbedder()).answer(
        "refunds within thirty days of delivery", sources, RagOptions(extractive_min_similarity=0.3)
    )
    assert not response.declined
    assert response.answer == "Refunds are possible within thirty days of delivery for all customers. [Source 2]"
    assert [(c.source, c.document_id) for c in response.citations] == [(2, "b")]


def test_relative_floor_drops_weak_padding() -> None:
    sources = [SearchResult(Chunk.create("a", "alpha beta gamma delta. alpha words unrelated entirely here.", 0), 0.5)]
    opts = RagOptions(extractive_min_similarity=0.1, extractive_relative_floor=0.99)
    response = ExtractiveAnswerer(HashingEmbedder()).answer("alpha beta gamma delta", sources, opts)
    assert len(response.citations) == 1
