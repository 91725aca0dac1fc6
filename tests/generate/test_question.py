"""Question analysis: answer types, focus terms, constraints, and answer-type spans in passages."""

import pytest

from ragwright.generate.question import analyze, answer_type, content_stems, new_type_spans, type_spans


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("When was IBM founded?", "date"),
        ("In what year did the war end?", "date"),
        ("On what date was the oral argument?", "date"),
        ("What time does the shop open?", "time"),
        ("How many ducks are slaughtered each year?", "number"),
        ("How much does the licence cost?", "number"),
        ("Who created Howard the Duck?", "person"),
        ("Which company built the engine?", "person"),
        ("Where is IBM headquartered?", "place"),
        ("In which country is Normandy?", "place"),
        ("Why did the Huguenots leave France?", "reason"),
        ("How does the engine work?", "manner"),
        ("Is the store open on Sundays?", "yesno"),
        ("What does RCAC stand for?", "expansion"),
        ("What is the capital of Belgium?", "place"),
        ("What is the docket number of the case?", "number"),
        ("What is IBM's nickname?", "other"),
        # a "when" after another wh-word opens a clause: it asks for no date
        ("What response code does the server return when the input is well formed?", "other"),
        ("Which tag is used when the tag is omitted?", "other"),
        ("What year was it when the war ended?", "date"),
        ("How long does it wait when idle?", "number"),
        # a measured quantity asks for a number; a harbour does not
        ("What torque should be applied to the nut?", "number"),
        ("What is the default timeout of the client?", "number"),
        ("What is the main port of the city?", "other"),
        # a default may be a word ("'sync'", "Off"): no type is asked; another value is a number
        ("What is the default value of worker_class?", "other"),
        ("What is the value of the efficiency ratio?", "number"),
    ],
)
def test_answer_types(question: str, kind: str) -> None:
    assert answer_type(question) == kind


def test_terms_entities_numbers_and_constraints() -> None:
    q = analyze("Who was the first director of the American Geographical Society in 1917?")
    assert q.answer_type == "person"
    assert "director" in q.terms and "1917" in q.terms and "who" not in q.terms
    assert "American Geographical Society" in q.entities
    assert q.numbers == ("1917",) and q.qualifiers == ("first",)
    assert not q.negated
    assert {"1917", "first", "american"} <= q.key_terms
    assert analyze("Why did the Huguenots not leave France?").negated


def test_stems_meet_across_inflections() -> None:
    assert content_stems("The Normans exported horses") == content_stems("normans export horse")


def test_type_spans_find_dates_numbers_and_names() -> None:
    assert "January 13" in " ".join(type_spans("date", "Tuesday, January 13, 2009 at 1:01 p.m."))
    assert type_spans("date", "in the 10th and 11th centuries") == ["10th and 11th centuries"]
    assert "1:01" in type_spans("time", "at 1:01 p.m.")
    assert "3" in type_spans("number", "Approximately 3 billion ducks")
    assert "Steve Gerber" in type_spans("person", "In this story by writer Steve Gerber and artist Val Mayerik")


def test_expansions_and_identifiers() -> None:
    text = "It describes the IBM DB2 for i Row and Column Access Control (RCAC) feature."
    assert type_spans("expansion", text) == ["Row and Column Access Control (RCAC)"]
    assert analyze("What is the file number of the 10-K filing?").numbers == ()  # an identifier, not a number


def test_new_type_spans_ignore_what_the_question_already_says() -> None:
    q = analyze("When did Telenet start operations in 1975?")
    assert new_type_spans(q, "Telenet started operations in 1975.") == []
    assert new_type_spans(q, "Telenet was incorporated in 1973.") == ["1973"]


def test_numbers_and_swapped_terms() -> None:
    from ragwright.generate.opposites import swapped_terms
    from ragwright.generate.question import all_stems, numbers_in

    assert numbers_in("a 60-minute debate with 18,000 men, the fourth of 10 in 1917") == {
        "60",
        "18000",
        "4",
        "10",
        "1917",
    }
    # a numeral inside a code is a name, not a quantity the evidence must repeat (as analyze() reads it)
    assert numbers_in("the Form 10-K and 8-K filings, COVID-19 and F-16") == frozenset()
    assert numbers_in("a 10-kg weight, pages 10-12, the Boeing 747-400") == {"10", "12", "747", "400"}
    assert swapped_terms(all_stems("What were the Normans' major imports?"), all_stems("Normandy exported horses")) == [
        "import"
    ]
    assert swapped_terms(all_stems("held immediately before what?"), all_stems("held immediately after it")) == [
        "befor"
    ]
    assert swapped_terms(all_stems("growth under non-imperialism"), all_stems("growth under imperialism"))
    assert not swapped_terms(all_stems("What did they export?"), all_stems("They exported horses"))


def test_before_and_after_contradict_only_about_the_same_thing() -> None:
    from ragwright.generate.opposites import contradicting_swaps

    # "before raising X" and "after 5 seconds" speak of different things: no contradiction
    assert not contradicting_swaps(
        "How long does it wait by default before raising a TimeoutException?",
        "The default behavior is to raise a TimeoutException after 5 seconds of network inactivity.",
    )
    # the same object on both sides: a swapped relation
    assert contradicting_swaps(
        "What did Rollo do before the siege of Paris?", "After the siege of Paris, Rollo left."
    ) == ["befor"]
    # an object on one side only cannot tell them apart: the swap stands (as swapped_terms says)
    assert contradicting_swaps("held immediately before what?", "held immediately after it") == ["befor"]
    # other opposites are not relations to an object: unchanged
    assert contradicting_swaps("What were the Normans' major imports?", "Normandy exported horses") == ["import"]


def test_a_year_inside_a_numeric_code_is_no_date() -> None:
    from ragwright.generate.question import type_spans

    assert type_spans("date", "Case No. 12-1987 ROE") == []  # a docket number, not the year 1987
    assert type_spans("date", "Call 555-2010 today") == []
    assert type_spans("date", "the war of 1914-1918") == ["1914"]  # a range still holds its first year
    assert type_spans("date", "on 2009-01-04") == ["2009"]


def test_an_expansion_questions_frame_is_not_among_its_terms() -> None:
    from ragwright.generate.question import stem

    for question in ("What does RCAC stand for?", "RCAC is short for what?", "What is the acronym RCAC?"):
        q = analyze(question)
        assert q.answer_type == "expansion" and q.terms == (stem("RCAC"),), question
    # other questions keep the words
    assert stem("stand") in analyze("Where does the statue stand?").terms


def test_names_written_as_code_are_constraints() -> None:
    q = analyze("Which header corresponds to the --line-length flag of pyproject.toml and use_pyproject?")
    assert {"line-length", "pyproject.toml", "use_pyproject"} <= set(q.entities)
    assert {"line-length", "pyproject.toml"} <= q.key_terms
    assert analyze("How long does a well-known ice age last?").entities == ()  # a hyphenated word is prose


def test_a_name_in_camel_case_is_not_stemmed() -> None:
    from ragwright.generate.question import stem

    assert content_stems("PyPy and PyPI on GitHub's runners") == ["pypy", "pypi", "github", "runner"]
    assert stem("Normans") == stem("norman")  # a plain name still loses its plural


def test_a_negation_inside_a_condition_clause_does_not_negate_what_is_asked() -> None:
    assert not analyze("Which exception does FileType raise when Click cannot open the file?").negated
    assert not analyze("If the server does not respond, what does the client raise?").negated
    assert not analyze("What happens if the timeout is not set?").negated
    # a question that opens with "when" asks a time; its negation is the asked relation's
    assert analyze("When did the Normans not rule England?").negated
    assert analyze("Which country did not join the union when it was founded?").negated
