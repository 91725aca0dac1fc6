"""Candidate answer units: what may answer (sentences, table rows with headers) and what never does."""

import pytest

from ragwright.generate.evidence import (
    EmbeddingCache,
    Evidence,
    clean_inline,
    gather,
    is_navigation,
    is_title_like,
    pieces,
    units_of,
)
from ragwright.generate.question import analyze
from ragwright.model.chunk import Chunk
from ragwright.model.results import SearchResult
from ragwright.testing.doubles import HashingEmbedder


def texts(text: str) -> list[str]:
    return [p for _, p in pieces(text)]


def evidence_for(question: str, chunk: Chunk) -> Evidence:
    """The evidence ``gather`` finds for *question* in one retrieved *chunk*."""
    return gather(analyze(question), [SearchResult(chunk, 0.5)], HashingEmbedder())


def test_headings_titles_navigation_and_lead_ins_never_answer() -> None:
    text = (
        "# Duck\n\nSwimming in the Lake\n\nFor duck as a food, see .\n\nSee also: Goose\n\n"
        "3.1.2 Enabling and activating RCAC . . . . . . . . . . 16\n\n"
        "Here are some interesting things a respectful duck could eat:\n\n"
        "Duck is the common name for numerous species of waterfowl. Ducks are smaller than swans."
    )
    assert texts(text) == [
        "Duck is the common name for numerous species of waterfowl.",
        "Ducks are smaller than swans.",
    ]


def test_short_captions_are_labels_but_long_ones_inform() -> None:
    assert texts(
        "Table 1: EU Countries Information\n\nTable 2: HPO performed in OTSL and HTML on the same architecture."
    ) == ["Table 2: HPO performed in OTSL and HTML on the same architecture."]


def test_title_and_navigation_rules() -> None:
    assert is_title_like("Swimming in the Lake") and is_title_like("Row and Column Access Control")
    assert not is_title_like("Tuesday, January 13, 2009")  # a date line is content
    assert not is_title_like("The cafeteria opens at nine.")
    assert is_navigation("For duck as a food, see .") and is_navigation("Main article: Mallard")
    assert is_navigation("For the recipes, see.") and is_navigation("See:")
    assert not is_navigation("The feature limits what each user can see.")  # a sentence, not a lost link


def test_table_rows_answer_with_their_header_even_over_two_header_rows() -> None:
    text = (
        "| | | TEDs | |\n| --- | --- | --- | --- |\n| enc | dec | simple | complex |\n"
        "| 6 | 6 | 0.965 | 0.934 |\n| Notices | 3.6.6 Activating RCAC . . . . . . . 28 | x | y |"
    )
    assert pieces(text) == [("row", "enc: 6; dec: 6; TEDs simple: 0.965; complex: 0.934")]


def test_a_second_header_row_that_repeats_the_first_merges_even_with_a_number_in_it() -> None:
    # the OTSL paper's table: the second header row repeats "# enc-layers" … and holds "(0.75)"
    text = (
        "| # enc | # dec | TEDs | TEDs | mAP |\n| --- | --- | --- | --- | --- |\n"
        "| # enc | # dec | simple | complex | (0.75) |\n| 6 | 6 | 0.965 | 0.934 | 0.88 |"
    )
    assert pieces(text) == [("row", "# enc: 6; # dec: 6; TEDs simple: 0.965; TEDs complex: 0.934; mAP (0.75): 0.88")]
    # a first data row that merely shares a value with the header is still data (mostly numbers)
    text = "| year | count | share |\n| --- | --- | --- |\n| year | 12 | 0.5 |\n| 2020 | 13 | 0.6 |"
    assert pieces(text)[0] == ("row", "year: year; count: 12; share: 0.5")


def test_reference_markers_are_not_part_of_a_unit() -> None:
    # "[5]" is no number of the text: a "how many" question must not find it, and the quote reads clean
    assert pieces("Ducks are found on every continent except Antarctica.[5] Several species live on islands.[20]") == [
        ("sentence", "Ducks are found on every continent except Antarctica."),
        ("sentence", "Several species live on islands."),
    ]
    assert clean_inline("trained on PubTabNet [22] and FinTabNet [1, 2][citation needed].") == (
        "trained on PubTabNet and FinTabNet."
    )


def test_a_split_after_an_initial_or_abbreviation_is_undone() -> None:
    assert pieces("John F. Kennedy was born in 1917. The case is Knowles v. Mirzayance, No. 07-1315 here.") == [
        ("sentence", "John F. Kennedy was born in 1917."),
        ("sentence", "The case is Knowles v. Mirzayance, No. 07-1315 here."),
    ]


def test_a_spaced_colon_is_a_separator_not_a_lead_in() -> None:
    # a transcript caption keeps its docket line; a lead-in ("… could eat:") still answers nothing
    assert pieces("v. : No. 07-1315 ALEXANDRE MIRZAYANCE. :\nHere are things a duck could eat:") == [
        ("sentence", "v. : No. 07-1315 ALEXANDRE MIRZAYANCE. :")
    ]


def test_code_lines_do_not_lean_on_their_neighbours() -> None:
    from ragwright.generate.lines import Unit, is_code, leans_on_neighbours

    for line in (
        "limits = httpx.Limits(max_connections=10)",
        "$ pip install httpx[http2]",
        ">>> client.get(url)",
        "client.close()",
        "x += 1",
    ):
        assert is_code(line) and not leans_on_neighbours(Unit(1, 0, line)), line
    for line in ("Tuesday, January 13, 2009", "v. : No. 07-1315 RICHARD DOE", "Key: value of it"):
        assert not is_code(line) and leans_on_neighbours(Unit(1, 0, line)), line
    assert not is_code("The limit (ten connections) applies to each client.")


def test_a_parenthetical_after_a_sentence_stays_with_it() -> None:
    # a list item's "(Default 100)" belongs to the sentence before it: alone it says nothing
    assert pieces("max_connections, maximum number of allowable connections, or None for no limits. (Default 100)") == [
        ("sentence", "max_connections, maximum number of allowable connections, or None for no limits. (Default 100)")
    ]
    assert pieces("The city grew fast. (By 1900 it had doubled.)") == [
        ("sentence", "The city grew fast. (By 1900 it had doubled.)")
    ]
    # a sentence that only opens with a parenthesis goes on by itself
    assert pieces("The city grew fast. (Rome) was its rival for a century.") == [
        ("sentence", "The city grew fast."),
        ("sentence", "(Rome) was its rival for a century."),
    ]


def test_a_short_reply_opens_the_sentence_after_it_and_a_question_never_answers() -> None:
    assert pieces("Not yet. Black is fundamentally a command line tool. Yes.") == [
        ("sentence", "Not yet. Black is fundamentally a command line tool."),
        ("sentence", "Yes."),
    ]
    ev = evidence_for(
        "Why did they choose double quotes?",
        Chunk.create("d", "Why settle on double quotes? They anticipate apostrophes in English text.", 0),
    )
    assert ev.units[ev.best].text == "They anticipate apostrophes in English text."
    # a table row ending in "?" is data, not a question
    rows = "| Question | Reply |\n| --- | --- |\n| Open on Sundays | Only in summer? |"
    ev = evidence_for("Is the shop open on Sundays?", Chunk.create("t", rows, 0))
    assert ev.units[ev.best].kind == "row" and ev.scores[ev.best] > 0.0


def test_brackets_in_code_are_kept_but_reference_marks_go() -> None:
    assert clean_inline("run pip install 'black[d]' or use x[1]=2") == "run pip install 'black[d]' or use x[1]=2"
    assert clean_inline("Antarctica.[5] The word[a] is here, as is TableFormer [9].") == (
        "Antarctica. The word is here, as is TableFormer."
    )


def test_spreadsheet_records_are_rows() -> None:
    assert pieces("Sheet: Stanley Cups; Team: Maple Leafs; Location: TOR; Stanley Cups: 13") == [
        ("row", "Sheet: Stanley Cups; Team: Maple Leafs; Location: TOR; Stanley Cups: 13")
    ]


def test_units_keep_short_lines_with_numbers_and_number_sources() -> None:
    results = [
        SearchResult(Chunk.create("a", "Tuesday, January 13, 2009\n\nThe argument began at one.", 0), 0.9),
        SearchResult(Chunk.create("b", "Too short.\n\nA second source sentence is here.", 0), 0.5),
    ]
    units = units_of(results)
    assert [(u.source, u.text) for u in units] == [
        (1, "Tuesday, January 13, 2009"),
        (1, "The argument began at one."),
        (2, "A second source sentence is here."),
    ]


def test_embedding_cache_embeds_each_text_once() -> None:
    calls: list[int] = []

    class Counting(HashingEmbedder):
        def embed_documents(self, texts):  # type: ignore[no-untyped-def]
            calls.append(len(texts))
            return super().embed_documents(texts)

    cache, emb = EmbeddingCache(max_entries=10), Counting()
    first = cache.vectors(emb, ["a b c", "d e f"])
    again = cache.vectors(emb, ["d e f", "a b c", "g h i"])
    assert calls == [2, 1]
    assert (again[0] == first[1]).all() and (again[1] == first[0]).all()


def test_a_table_row_keeps_the_line_before_its_table_as_context() -> None:
    from ragwright.generate.evidence import pieces_in_context

    text = "Things a duck could eat:\n\n| | Food |\n| --- | --- |\n| Leaves | Ash, Elm |"
    assert pieces_in_context(text) == [("row", "Leaves; Food: Ash, Elm", "Things a duck could eat:")]


def test_a_row_is_matched_under_its_lead_in_when_that_matches_better() -> None:
    import numpy as np

    from ragwright.generate.evidence import gather
    from ragwright.generate.question import analyze

    emb = HashingEmbedder()
    text = "Things a respectful duck could eat:\n\n| | Food |\n| --- | --- |\n| Leaves | Ash, Elm, Maple |"
    question = "Which trees' leaves could a respectful duck eat?"
    ev = gather(analyze(question), [SearchResult(Chunk.create("d", text, 0), 0.5)], emb)
    q = np.asarray(emb.embed_query(question))
    alone, under = (
        float(np.asarray(v) @ q)
        for v in emb.embed_documents([ev.units[0].text, f"{ev.units[0].context} {ev.units[0].text}"])
    )
    assert under > alone
    assert ev.cosines == [pytest.approx(under)]
    # a row that matches better alone keeps its own similarity; prose is never read with a context
    ev = gather(analyze("Which food: Ash, Elm or Maple leaves?"), [SearchResult(Chunk.create("d", text, 0), 0.5)], emb)
    assert (
        ev.cosines[0]
        >= float(
            np.asarray(emb.embed_documents([ev.units[0].text])[0])
            @ np.asarray(emb.embed_query("Which food: Ash, Elm or Maple leaves?"))
        )
        - 1e-6
    )


def test_a_rule_of_spaced_dashes_is_decoration() -> None:
    assert clean_inline("FIRST COURT OF APPEAL - - - - - - x JANE ROE, :") == "FIRST COURT OF APPEAL x JANE ROE, :"
    assert clean_inline("the scores were 3 - 4 and a - b") == "the scores were 3 - 4 and a - b"  # not a rule


def test_a_short_line_that_is_no_sentence_leans_on_its_neighbours() -> None:
    from ragwright.generate.evidence import Unit, leans_on_neighbours

    assert leans_on_neighbours(Unit(1, 0, "Friday, March 4, 2011"))
    assert leans_on_neighbours(Unit(1, 0, "Case No. 12-4410 ROE. :"))
    assert not leans_on_neighbours(Unit(1, 0, "The hall was opened in 1911."))  # a sentence says it itself
    assert not leans_on_neighbours(Unit(1, 0, "Sheet: Prices; Item: tea; Cost: 3", "row"))
    assert not leans_on_neighbours(Unit(1, 0, "one two three four five six seven eight nine 10"))


def test_a_short_line_is_matched_with_the_words_of_its_neighbours() -> None:
    from ragwright.generate.question import stem

    text = "Friday, March 4, 2011\n\nThe public hearing on the harbour extension was held in the town hall."
    ev = evidence_for("On what date was the hearing on the harbour extension?", Chunk.create("t", text, 0))
    date_line = next(i for i, u in enumerate(ev.units) if u.text.startswith("Friday"))
    assert {stem("hearing"), stem("harbour"), stem("extension")} <= ev.stems[date_line]
    assert ev.coverage[date_line] == ev.coverage[date_line + 1] > 0
    # a sentence keeps its own words
    assert stem("friday") not in ev.stems[date_line + 1]


def test_hyphen_parts_and_clipped_header_words_cover_the_question() -> None:
    from ragwright.generate.question import stem

    text = "| # enc-layers | accuracy |\n| --- | --- |\n| 4 | 0.91 |\n\nIt is a well-known result of the field."
    ev = evidence_for("What accuracy with 4 encoder layers?", Chunk.create("p", text, 0))
    row = ev.units[0]
    assert row.kind == "row" and {stem("layers"), stem("encoder")} <= ev.stems[0]
    assert ev.coverage[0] == 1.0
    assert stem("known") in ev.stems[1]  # prose: the parts of a hyphenated word, no clipped words


def test_a_chunks_heading_counts_around_each_of_its_lines() -> None:
    from ragwright.generate.question import stem

    chunk = Chunk.create(
        "m",
        "Hello team,\n\nThe quarterly report is attached to this message.",
        0,
        section_path=("memo-with-spreadsheet",),
    )
    ev = evidence_for("What is attached to the memo with a spreadsheet?", chunk)
    i = next(i for i, u in enumerate(ev.units) if "attached" in u.text)
    assert {stem("memo"), stem("spreadsheet")} <= ev.window_stems[i] and ev.window_coverage[i] == 1.0
    assert stem("spreadsheet") not in ev.stems[i]  # the line's own words stay its own
    assert stem("spreadsheet") in ev.source_stems


def test_a_row_holds_the_words_and_numbers_of_its_lead_in() -> None:
    from ragwright.generate.features import answer_features
    from ragwright.generate.question import stem

    text = "Background Checks November - 2015\n\n| State | Totals |\n| --- | --- |\n| Alabama | 71,137 |"
    chunk = Chunk.create("n", text, 0)
    question = "What is the total of background checks for Alabama in November 2015?"
    ev = evidence_for(question, chunk)
    row = next(i for i, u in enumerate(ev.units) if u.kind == "row")
    assert {stem("November"), stem("checks"), stem("Alabama")} <= ev.stems[row]
    assert ev.coverage[row] == 1.0
    ev.order = [row, *(i for i in ev.order if i != row)]
    x = answer_features(ev, [SearchResult(chunk, 0.5)])
    assert x["number_conflict"] == 0.0  # 2015 is the lead-in's: the row's numbers do not contradict it
    # prose keeps only its own words: a sentence under the same line is no row
    text = "Background Checks November - 2015\n\nAlabama ran 71,137 of them."
    prose = evidence_for(question, Chunk.create("p", text, 0))
    i = next(i for i, u in enumerate(prose.units) if u.text.startswith("Alabama"))
    assert stem("November") not in prose.stems[i]


def test_the_line_that_spells_out_the_asked_acronym_answers_what_it_stands_for() -> None:
    text = (
        "Now that you have created the row permission, RCAC must be activated on the table.\n\n"
        "You must activate RCAC before the masks apply.\n\n"
        "This publication describes the DB2 feature Row and Column Access Control (RCAC) in detail."
    )
    from ragwright.generate.evidence import _spelled_out

    ev = evidence_for("What does RCAC stand for?", Chunk.create("r", text, 0))
    assert "Row and Column Access Control" in ev.units[ev.best].text
    ev.order = [0, 1, 2]  # as if the sentence model preferred the lines that only use the acronym
    assert _spelled_out(ev) == 2
    ev.order = [2, 0, 1]
    assert _spelled_out(ev) is None  # already first
    # a question that is no expansion question leaves the model's order alone
    other = evidence_for("When must RCAC be activated?", Chunk.create("r", text, 0))
    assert "Row and Column" not in other.units[other.best].text
