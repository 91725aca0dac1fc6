""" "What does RCAC stand for?" — answered by the line that spells the acronym out, declined when none does.

The line that defines an acronym sits once in a long chunk, while short chunks that only use the acronym
rank above it; the frame words ("stand for") match everywhere. An expansion question is searched by its
acronym, looks deeper once for a chunk that defines it, and the answerability rules decide (the model,
trained on SQuAD, cannot know that the line answers: its similarity to the question is low)."""

import pytest

from ragwright import Rag
from ragwright.models.embedders import default_embedder
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore

FILLER = " ".join(
    f"Section {i} explains how the security officer reviews the audit journal and the access reports."
    for i in range(12)
)
DEFINING = f"{FILLER} This paper describes Row and Column Access Control (RCAC) in DB2 for i. {FILLER}"
LEADERS = " ." * 20
CONTENTS = "\n\n".join(f"3.{i} Row and Column Access Control (RCAC) part {i}{LEADERS} {10 + i}" for i in range(6))
USES = {
    f"note{i:02d}.md": f"# Note {i}\n\nRCAC rule {i}: activate RCAC and the QMX masks for table T{i}.".encode()
    for i in range(12)
}


@pytest.fixture(scope="module")
def rag() -> Rag:
    rag = Rag(MemoryStore(), default_embedder())
    rag.ingest(BytesSource({"paper.md": DEFINING.encode(), "contents.md": CONTENTS.encode(), **USES}))
    return rag


def test_the_defining_line_answers_though_chunks_that_only_use_the_acronym_rank_above_it(rag: Rag) -> None:
    ranked = [r.document_id for r in rag.search("What does RCAC stand for?", top_k=5)]
    assert "paper.md" not in ranked  # searched as asked, the definition is not among the sources
    response = rag.ask("What does RCAC stand for?")
    assert not response.declined, response.decline_reason
    assert "Row and Column Access Control" in response.answer
    assert response.citations and response.citations[0].document_id == "paper.md"
    assert response.sources[0].document_id == "paper.md"  # a contents page that spells it out never answers
    assert "contents.md" not in [s.document_id for s in response.sources]


def test_an_acronym_the_documents_use_but_never_spell_out_is_declined(rag: Rag) -> None:
    response = rag.ask("What does QMX stand for?")
    assert response.declined and response.decline_reason == "answerability_answer_type"
