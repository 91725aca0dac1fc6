"""QA evaluation: records, answer matching, per-item scores, balanced accuracy, the judge's kappa, the CLI."""

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ragwright.errors import ConfigError
from ragwright.eval.qa import (
    QaItem,
    contains_answer,
    evaluate_qa,
    load_qa,
    normalize,
    render,
    score_qa,
    token_f1,
)
from ragwright.eval.stats import balanced_accuracy_ci, cohen_kappa
from ragwright.model.chunk import Chunk
from ragwright.model.results import Citation, RagResponse, SearchResult
from ragwright.testing.doubles import ScriptedChat


def write(path: Path, records: list[Any]) -> Path:
    path.write_text("\n".join(json.dumps(r) if not isinstance(r, str) else r for r in records) + "\n")
    return path


def test_load_qa_reads_records_and_names_bad_lines(tmp_path: Path) -> None:
    items = load_qa(
        write(
            tmp_path / "qa.jsonl",
            [{"question": "When?", "answers": ["1911"]}, {"id": "u1", "question": "Who?", "unanswerable": True}],
        )
    )
    assert items == [QaItem("1", "When?", ("1911",), False), QaItem("u1", "Who?", (), True)]
    with pytest.raises(ConfigError, match=":2: not valid JSON"):
        load_qa(write(tmp_path / "bad.jsonl", [{"question": "a", "answers": ["b"]}, "{oops"]))
    with pytest.raises(ConfigError, match="at least one gold answer"):
        load_qa(write(tmp_path / "bad2.jsonl", [{"question": "a", "answers": [], "unanswerable": False}]))
    with pytest.raises(ConfigError, match="'question'"):
        load_qa(write(tmp_path / "bad3.jsonl", [{"answers": ["x"]}]))


def test_squad_normalisation_containment_and_token_f1() -> None:
    assert normalize("The  Big-Blue, Inc.!") == "big blue inc"
    assert contains_answer("IBM, nicknamed Big Blue, is American. [Source 1]", ["big blue"])
    assert not contains_answer("Bigger Blues", ["big blue"])  # whole words only
    assert token_f1("in the 10th century", ["10th century"]) == pytest.approx(0.8)
    assert token_f1("nothing", ["10th century"]) == 0.0


def test_a_gold_answer_of_symbols_is_matched_as_written() -> None:
    # SQuAD's normalisation drops punctuation: "<=>" would become nothing and never match (nor fail loudly)
    assert contains_answer("Operator: <=>; Description: cosine distance [Source 1]", ["<=>"])
    assert not contains_answer("Operator: <->; Description: L2 distance", ["<=>"])
    assert contains_answer("Use  <=>  for it", [" <=> "])  # spaces around it do not matter
    assert token_f1("<=>", ["<=>"]) == 0.0  # no word to count: F1 stays a word measure


def response(answer: str, sources: list[str], *, declined: bool = False, cite: tuple[int, ...] = ()) -> RagResponse:
    results = tuple(SearchResult(Chunk.create(f"d{i}", t, 0), 1.0) for i, t in enumerate(sources))
    citations = tuple(Citation(n, results[n - 1].chunk.id, results[n - 1].chunk.document_id) for n in cite)
    return RagResponse(answer, results, citations, declined=declined, decline_reason="x" if declined else None)


def test_scores_of_an_answered_item() -> None:
    item = QaItem("1", "When was IBM founded?", ("1911",), False)
    r = response(
        "IBM was founded in 1911. [Source 2]", ["Ducks swim.", "IBM was founded in 1911 in New York."], cite=(2,)
    )
    s = score_qa(item, r)
    assert s["decline_correct"] == 1.0 and s["answer_accuracy"] == 1.0 and s["answered_correct"] == 1.0
    assert s["citation_correct"] == 1.0 and s["context_recall"] == 1.0
    assert s["context_precision"] == pytest.approx(0.5)  # the gold chunk is ranked second
    assert s["faithfulness"] == 1.0 and 0 < s["token_f1"] < 1


def test_scores_of_declines_and_wrong_citations() -> None:
    item = QaItem("1", "When was IBM founded?", ("1911",), False)
    declined = score_qa(item, response("No answer.", ["IBM was founded in 1911."], declined=True))
    assert declined["decline_correct"] == 0.0 and declined["answered_correct"] == 0.0
    assert "answer_accuracy" not in declined
    wrong = score_qa(item, response("It was 1911. [Source 1]", ["Ducks swim.", "IBM 1911."], cite=(1,)))
    assert wrong["answer_accuracy"] == 1.0 and wrong["citation_correct"] == 0.0
    unanswerable = QaItem("2", "Who?", (), True)
    assert score_qa(unanswerable, response("No.", ["x"], declined=True)) == {"decline_correct": 1.0}


def test_balanced_accuracy_interval_and_kappa() -> None:
    iv = balanced_accuracy_ci([1, 1, 1, 0], [1, 0], resamples=500)
    assert iv.mean == pytest.approx((0.75 + 0.5) / 2) and iv.low <= iv.mean <= iv.high and iv.n == 6
    with pytest.raises(ConfigError):
        balanced_accuracy_ci([1], [])
    assert cohen_kappa([True, False, True, False], [True, False, True, False]) == 1.0
    assert cohen_kappa([True, True, False, False], [True, False, True, False]) == 0.0
    assert cohen_kappa([True, True, True], [True, True, True]) == 1.0
    assert cohen_kappa([True, True, False, False], [False, False, True, True]) == -1.0


def test_evaluate_with_a_judge_reports_its_agreement() -> None:
    items = [
        QaItem("a", "When was IBM founded?", ("1911",), False),
        QaItem("b", "Who founded Apple?", (), True),
        QaItem("c", "Where is IBM?", ("Armonk",), False),
    ]
    replies = {
        "When was IBM founded?": response("Founded in 1911. [Source 1]", ["IBM was founded in 1911."], cite=(1,)),
        "Who founded Apple?": response("No answer.", ["IBM."], declined=True),
        "Where is IBM?": response("In Paris. [Source 1]", ["IBM is in Armonk."], cite=(1,)),
    }
    judge = ScriptedChat(['{"correct": true}', '{"correct": true}', "not json"])
    report = evaluate_qa(lambda q: replies[q], items, judge=judge)
    payload = report.to_dict()
    assert payload["metrics"]["balanced_decline_accuracy"]["mean"] == 1.0
    assert payload["metrics"]["answer_accuracy"]["mean"] == 0.5
    assert payload["judge_kappa"] == {"kappa": 1.0, "judged": 2}  # the unusable verdict is left out
    assert [f["id"] for f in payload["failures"]] == ["c"]
    assert "balanced_decline_accuracy" in render(report, "t") and "kappa" in render(report, "t")
    assert "UNANSWERABLE" in judge.calls[1].messages[-1].content


def test_cli_eval_of_a_qa_file_over_the_store(tmp_path: Path) -> None:
    from ragwright.cli import main

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ibm.md").write_text("# IBM\n\nIBM was founded in 1911 as the Computing-Tabulating-Recording Company.\n")
    store = str(tmp_path / "store.db")
    runner = CliRunner()
    assert runner.invoke(main, ["--store", store, "--embedder", "wordllama", "ingest", str(docs)]).exit_code == 0
    qa = write(
        tmp_path / "qa.jsonl",
        [
            {"question": "When was IBM founded?", "answers": ["1911"], "unanswerable": False},
            {"question": "Who founded Apple?", "answers": [], "unanswerable": True},
        ],
    )
    result = runner.invoke(main, ["--store", store, "--embedder", "wordllama", "--json", "eval", str(qa)])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["items"] == 2 and "balanced_decline_accuracy" in payload["metrics"]
    assert payload["metrics"]["answer_accuracy"]["mean"] == 1.0
    human = runner.invoke(main, ["--store", store, "--embedder", "wordllama", "eval", str(qa)])
    assert "answer_accuracy" in human.stdout
    judged = runner.invoke(main, ["--store", store, "--embedder", "wordllama", "eval", str(qa), "--judge"])
    assert judged.exit_code != 0 and "--judge needs a chat model" in judged.output + judged.stderr
