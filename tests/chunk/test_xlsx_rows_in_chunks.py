"""Issue 26 item 5 at the chunk level: every data row of a wide sheet stays whole, with its row label, in one
chunk (a group of records is split between its lines, never inside a row that fits), not only in the
parsed element."""

from ragwright.models.embedders import OnnxEmbedder
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from tests.parse.test_xlsx import _half_year_segments, workbook_bytes


def test_each_row_of_a_wide_sheet_is_whole_in_one_chunk() -> None:
    data = workbook_bytes(_half_year_segments)
    with Rag(MemoryStore(), OnnxEmbedder.default()) as rag:
        rag.ingest(BytesSource({"h1.xlsx": data}))
        chunks = rag.store.document_chunks("h1.xlsx")
    lines = [line for c in chunks for line in c.text.splitlines() if line.strip()]
    rows = [line for line in lines if line.startswith("Sheet: Segments;")]
    assert len(rows) == 3  # one line per data row, each starting with its sheet and row label
    europe = next(r for r in rows if "Zone Europe" in r)
    assert europe.endswith("Change / Profit / %: 2.8%")  # the whole row, its last column included
    assert not any(line.startswith(("Organic growth", "Sales / Organic")) for line in lines)  # no cut-off tail
