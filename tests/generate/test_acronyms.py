"""Acronyms matched between a question and its evidence, both ways, without inventing matches."""

from ragwright.generate.acronyms import acronym_stems, acronyms_in, expansions
from ragwright.generate.question import analyze, is_negated, stem


def test_a_units_acronym_covers_the_question_words_it_stands_for() -> None:
    q = "Which data set was chosen to perform hyper parameter optimization?"
    found = acronym_stems(q, "We have chosen the PubTabNet data set to perform HPO, since it is diverse.")
    assert found == {stem("hyper"), stem("parameter"), stem("optimization")}


def test_a_unit_that_spells_out_the_questions_acronym_covers_it() -> None:
    unit = "IBM i 7.2 introduces Row and Column Access Control in DB2 for i."
    assert acronym_stems("What does RCAC stand for?", unit) == {stem("RCAC")}
    assert acronym_stems("What does RCAC stand for?", "Row permissions and column masks.") == frozenset()


def test_no_invented_matches() -> None:
    # two letters need capitalised words; stop words never spell a letter; plurals of acronyms count
    assert acronym_stems("What does every user need?", "The EU decided.") == frozenset()
    assert acronym_stems("When was the European Union founded?", "The EU was founded in 1993.") == {
        stem("European"),
        stem("Union"),
    }
    assert acronyms_in("LLMs and the API, not Ok or X") == {"LLM", "API"}
    assert expansions("TO", "The Other one") == []  # "The" is a stop word, never a letter
    # an acronym the question already writes adds nothing
    assert acronym_stems("What is HPO?", "HPO tunes parameters.") == frozenset()


def test_except_is_a_negation() -> None:
    assert is_negated("Ducks are found on every continent except Antarctica.")
    assert analyze("On which continent are ducks not found?").negated
    assert not is_negated("Ducks are found on every continent.")


def test_a_header_label_that_clips_a_question_word_covers_it() -> None:
    from ragwright.generate.acronyms import abbreviation_stems

    assert abbreviation_stems("How many encoder and decoder layers?", "# enc-layers # dec-layers") == {
        stem("encoder"),
        stem("decoder"),
    }
    assert abbreviation_stems("What is the population?", "Pop. (millions)") == {stem("population")}
    # two letters are too few; a label as long as the word is no clipping; stop words never count
    assert abbreviation_stems("Which encoder?", "en; encoder") == frozenset()
    assert abbreviation_stems("Is the theory right?", "the") == frozenset()


def test_a_definition_is_the_expansion_written_beside_the_acronym() -> None:
    from ragwright.generate.acronyms import definitions

    spelt = [["Row", "Column", "Access", "Control"]]
    assert definitions("RCAC", "the DB2 feature Row and Column Access Control (RCAC) in detail") == spelt
    assert definitions("RCAC", "RCAC (Row and Column Access Control) applies to tables") == spelt
    assert definitions("RCAC", "RCAC stands for Row and Column Access Control.") == spelt
    # a parenthesis of capitalised words may stand between the expansion and the acronym
    board = [["Public", "Company", "Accounting", "Oversight", "Board"]]
    assert (
        definitions("PCAOB", "registered with the Public Company Accounting Oversight Board (United States) (PCAOB)")
        == board
    )
    # words that merely share the initials somewhere define nothing (expansions() would take them)
    assert expansions("CPU", "a criminal punishment upon them; the CPU is fast") == [["criminal", "punishment", "upon"]]
    assert definitions("CPU", "a criminal punishment upon them; the CPU is fast") == []
    assert definitions("RCAC", "Row and Column Access Control is set up before RCAC is used") == []
    # names in other languages skip their particles
    assert definitions("FIS", "the Front Islamique de Salut (FIS) was formed in 1989") == [
        ["Front", "Islamique", "Salut"]
    ]


def test_an_expansion_question_is_searched_by_its_acronym_and_words() -> None:
    from ragwright.generate.acronyms import defines_asked, search_text

    assert search_text("What does ICT stand for?") == "ICT"
    assert search_text("What does DIA stand for in the LayoutParser paper?") == "DIA LayoutParser paper"
    assert search_text("What is the full name of an IED?") == "IED"
    assert search_text("Who founded IBM?") == "Who founded IBM?"  # any other question is searched as asked
    assert defines_asked("What does RCAC stand for?", "Row and Column Access Control (RCAC)")
    assert not defines_asked("What does RCAC stand for?", "RCAC must be activated")
    assert not defines_asked("When was RCAC added?", "Row and Column Access Control (RCAC)")
