"""tools/squad_extra.py: the SQuAD explorer page parser and the guard that keeps held-out and reserved
articles out of the extra training data (synthetic pages; the real data is not in the repository)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import squad_data
import squad_extra

PAGE = """<html><body><h1 id="title">Tiny_article</h1><div class="para-wrap"><div class="row">
<div class="col-md-6"><pre>The  river  rises in the Alps &amp; flows north.</pre></div><div class="col-md-6">
<div class="qas-wrap"><div class="qa-wrap" data-id="q1"><p>
<strong class="question">Where does the river rise?</strong></p>
<ul class="list-unstyled"><li><p><i>Ground Truth Answers: </i><span class="answer">in the Alps</span>
<span class="answer">the Alps</span><span class="answer">in the Alps</span></p></li><li class="prediction-holder"><p>
<i>Prediction: </i><span class="prediction"></span></p></li></ul></div>
<div class="qa-wrap" data-id="q2"><p> <strong class="question">Where does the river end?</strong></p>
<ul class="list-unstyled"><li><p><i>Ground Truth Answers: </i><span class="no-answer">&lt;No Answer&gt;</span></p>
</li><li class="prediction-holder"><p><i>Prediction: </i><span class="prediction">north</span></p></li></ul></div>
</div></div></div></div>
<div class="para-wrap"><pre>A second paragraph.</pre><div class="qa-wrap" data-id="q3"><p><strong class="question">
What is it?</strong></p><span class="answer">A second paragraph</span></div></div></body></html>"""


def test_explorer_page_gives_paragraphs_questions_answers_and_no_answer_labels() -> None:
    art = squad_extra.parse_explorer(PAGE, "Tiny_article")
    assert art.title == "Tiny_article"
    assert art.paragraphs == ("The river rises in the Alps & flows north.", "A second paragraph.")
    by_id = {q.id: q for q in art.questions}
    assert list(by_id) == ["q1", "q2", "q3"]
    assert by_id["q1"].answers == ("in the Alps", "the Alps") and not by_id["q1"].unanswerable
    assert by_id["q2"].answers == () and by_id["q2"].unanswerable  # the model prediction is not an answer
    assert by_id["q3"].question == "What is it?" and by_id["q3"].context == "A second paragraph."


def test_a_page_of_another_article_is_refused() -> None:
    with pytest.raises(SystemExit, match="titled"):
        squad_extra.parse_explorer(PAGE, "Other_article")


def _article(title: str, *paragraphs: str) -> squad_data.Article:
    return squad_data.Article(title, paragraphs, ())


def test_extra_articles_sharing_a_title_or_a_paragraph_with_guarded_ones_are_refused() -> None:
    guarded = [_article("Held_out", "Some guarded text.")]
    squad_extra.check_disjoint([_article("Fresh", "Other text.")], guarded)
    with pytest.raises(SystemExit, match="held-out or reserved articles: \\['Normans'\\]"):
        squad_extra.check_disjoint([_article("Normans", "x")], guarded)
    with pytest.raises(SystemExit, match="shares 1 paragraphs"):
        squad_extra.check_disjoint([_article("Fresh", "some  GUARDED text.", "new")], guarded)
