"""ask(use_corrective_answer=True): graded evidence is answered from; nothing relevant → rewrite, retry, decline."""

from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

DOCS = {
    "refunds.md": b"# Refunds\n\nCustomers may request a refund within thirty days of delivery.",
    "dogs.md": b"# Office dog\n\nBiscuit the office dog naps under the reception desk.",
}


def rag(llm: object = None) -> Rag:
    r = Rag(MemoryStore(), HashingEmbedder(), llm=llm)  # type: ignore[arg-type]
    r.ingest(BytesSource(DOCS))
    return r


def test_relevant_evidence_is_answered_from() -> None:
    response = rag().ask("How many days to request a refund after delivery?", use_corrective_answer=True)
    assert not response.declined and response.citations
    assert all(s.document_id == "refunds.md" for s in response.sources)  # the irrelevant passage was graded out


def test_nothing_relevant_rewrites_once_then_declines() -> None:
    chat = ScriptedChat(lambda messages: '{"query": "quantum chromodynamics lattice"}')
    response = rag(chat).ask("What is the gluon mass in lattice QCD?", use_corrective_answer=True)
    assert response.declined and response.decline_reason == "no_relevant_evidence"
    assert any("rewrite" in c.messages[0].content.lower() for c in chat.calls)
