import json
from pathlib import Path

import pytest

from ragwright.errors import ConfigError
from ragwright.eval.items import load_rag_benchmark
from ragwright.eval.rag_eval import evaluate_rag, ingest_benchmark
from ragwright.rag import Rag
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder


def make_set(root: Path) -> Path:
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "pub.md").write_text("# Garden\n\nTomatoes need six hours of direct sunlight every day.")
    (root / "docs" / "secret.md").write_text("# Payroll\n\nThe payroll run happens on the twenty fifth of each month.")
    corpus = [
        {"id": "garden", "path": "docs/pub.md"},
        {"id": "payroll", "path": "docs/secret.md", "acl": ["finance"]},
    ]
    items = [
        {
            "id": "a",
            "question": "How many hours of direct sunlight do tomatoes need?",
            "relevant": {"garden": 2},
            "key_facts": ["six hours"],
            "tags": ["garden"],
        },
        {
            "id": "b",
            "question": "When does the payroll run happen each month?",
            "relevant": {"payroll": 2},
            "key_facts": ["twenty fifth"],
            "tags": ["permission"],
            "identity": {"tenant": "default", "groups": ["finance"]},
        },
        {
            "id": "c",
            "question": "When does the payroll run happen each month?",
            "unanswerable": True,
            "tags": ["permission"],
            "identity": {"tenant": "default", "groups": []},
        },
        {
            "id": "d",
            "question": "What is the airspeed velocity of an unladen swallow?",
            "unanswerable": True,
            "tags": ["unanswerable"],
        },
    ]
    (root / "corpus.jsonl").write_text("".join(json.dumps(c) + "\n" for c in corpus))
    (root / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    return root


def test_end_to_end_scores(tmp_path: Path) -> None:
    bench = load_rag_benchmark(make_set(tmp_path / "set"))
    rag = Rag(MemoryStore(), HashingEmbedder(), rag_options=None)
    ingest_benchmark(rag, bench)
    result = evaluate_rag(rag, bench, extractive_min_similarity=0.45)
    by_id = {r.item.id: r for r in result.results}
    assert by_id["a"].scores["key_fact_recall"] == 1.0 and by_id["a"].category == "ok"
    assert by_id["b"].scores["citation_precision"] == 1.0
    assert by_id["c"].scores["leak"] == 0.0 and by_id["c"].declined and by_id["c"].category == "ok"
    assert by_id["d"].scores["decline_accuracy"] == 1.0
    payload = result.to_dict()
    assert payload["metrics"]["leak"]["mean"] == 0.0
    assert set(payload["by_tag"]) == {"garden", "permission", "unanswerable"}


def test_unknown_relevant_document_is_refused(tmp_path: Path) -> None:
    root = make_set(tmp_path / "set")
    with (root / "items.jsonl").open("a") as fh:
        fh.write(json.dumps({"id": "z", "question": "q", "relevant": {"ghost": 1}}) + "\n")
    with pytest.raises(ConfigError, match="ghost"):
        load_rag_benchmark(root)


def test_faithfulness_checks_cited_support() -> None:
    from ragwright.eval.rag_eval import faithfulness
    from ragwright.model.chunk import Chunk
    from ragwright.model.results import RagResponse, SearchResult

    sources = (SearchResult(Chunk.create("d", "The sky is blue on clear days.", 0), 1.0),)
    good = RagResponse("The sky is blue on clear days. [Source 1]", sources)
    bad = RagResponse("The sky is blue. [Source 1] Grass grows on the moon quickly. [Source 1]", sources)
    assert faithfulness(good) == 1.0
    assert faithfulness(bad) == 0.5
    assert faithfulness(RagResponse("no citations here", sources)) is None
