from ragwright.generate.evidence import Evidence, gather
from ragwright.generate.extractive import ExtractiveAnswerer, _pieces, choose_units
from ragwright.generate.question import analyze
from ragwright.model.chunk import Chunk
from ragwright.model.results import SearchResult
from ragwright.models.embedders import default_embedder
from ragwright.options import RagOptions
from ragwright.testing.doubles import HashingEmbedder

OFF = RagOptions(answerability="off", extractive_min_similarity=0.0)


def source(doc: str, text: str, score: float = 0.5) -> SearchResult:
    return SearchResult(Chunk.create(doc, text, 0), score)


def test_table_rows_become_self_describing_records() -> None:
    text = "Prices below.\n\n| Service | Cost |\n| --- | --- |\n| Express | 12.90 EUR |\n| Standard | 4.90 EUR |"
    assert _pieces(text) == ["Prices below.", "Service: Express; Cost: 12.90 EUR", "Service: Standard; Cost: 4.90 EUR"]


def test_answer_quotes_and_cites_the_supporting_sentence() -> None:
    sources = [
        source("a", "The cafeteria opens at nine. Parking is free for staff members."),
        source("b", "Refunds are possible within thirty days of delivery for all customers.", 0.4),
    ]
    response = ExtractiveAnswerer(HashingEmbedder()).answer("refunds within thirty days of delivery", sources, OFF)
    assert not response.declined
    assert response.answer == "Refunds are possible within thirty days of delivery for all customers. [Source 2]"
    assert [(c.source, c.document_id) for c in response.citations] == [(2, "b")]


def test_a_title_heading_or_see_also_line_is_never_the_answer() -> None:
    text = (
        "# Duck\n\nDuck\n\nFor duck as a food, see .\n\n"
        "Duck is the common name for numerous species of waterfowl in the family Anatidae."
    )
    response = ExtractiveAnswerer(HashingEmbedder()).answer("duck", [source("w", text)], OFF)
    assert response.answer.startswith("Duck is the common name") and "see ." not in response.answer


def test_a_date_question_gets_the_date_not_the_time() -> None:
    text = (
        "Tuesday, January 13, 2009\n\nThe above-entitled matter came on for oral argument before the Supreme "
        "Court of the United States at 1:01 p.m."
    )
    response = ExtractiveAnswerer(default_embedder()).answer(
        "On what date was the oral argument before the Supreme Court?", [source("t", text)], OFF
    )
    assert not response.declined
    assert "January 13, 2009" in response.answer and response.citations[0].source == 1


def test_a_table_row_answers_with_its_header_and_is_cited() -> None:
    text = (
        "Table 1: EU Countries Information\n\n| Country | Population (millions) | Capital |\n| --- | --- | --- |\n"
        "| Austria | 8.9 | Vienna |\n| Belgium | 11.5 | Brussels |"
    )
    response = ExtractiveAnswerer(default_embedder()).answer(
        "What is the capital of Belgium?", [source("eu", text)], OFF
    )
    assert not response.declined, response
    assert "Country: Belgium" in response.answer and "Capital: Brussels" in response.answer
    assert "[Source 1]" in response.answer and response.citations[0].quote is not None


def test_a_second_sentence_only_when_the_first_lacks_the_asked_type() -> None:
    text = "The treaty was signed by both kings after long talks. It happened in 1066."
    ev = gather(analyze("When was the treaty signed by both kings?"), [source("h", text)], HashingEmbedder())
    ev.scores = [0.9, 0.1]
    ev.order = [0, 1]
    assert choose_units(ev, 3, relative_floor=0.99) == [0, 1]  # the year is in the neighbour
    assert choose_units(ev, 1) == [0]
    ev2 = gather(analyze("Who signed the treaty?"), [source("h", text)], HashingEmbedder())
    ev2.scores, ev2.order = [0.9, 0.1], [0, 1]
    assert choose_units(ev2, 3, relative_floor=0.7) == [0]


def test_a_which_thing_question_gets_the_neighbour_that_names_it() -> None:
    text = (
        "A common legend claims that duck quacks do not echo, which has been proven false. "
        "This myth was first debunked by the Acoustics Research Centre at the University of Salford. "
        "It was also discussed on television."
    )
    ev = gather(analyze("Which research centre debunked the myth?"), [source("d", text)], HashingEmbedder())
    ev.scores, ev.order = [0.9, 0.3, 0.2], [0, 1, 2]
    assert choose_units(ev, 2, relative_floor=0.7) == [0, 1]  # the best names nothing; its neighbour does
    assert choose_units(ev, 1) == [0]
    # a best sentence that names something new is enough
    ev.scores, ev.order = [0.3, 0.9, 0.2], [1, 0, 2]
    assert choose_units(ev, 2, relative_floor=0.7) == [1]
    # "What is …" asks for no named thing: the relative floor alone decides
    ev2 = gather(analyze("What is the myth about duck quacks?"), [source("d", text)], HashingEmbedder())
    ev2.scores, ev2.order = [0.9, 0.3, 0.2], [0, 1, 2]
    assert choose_units(ev2, 2, relative_floor=0.7) == [0]


def test_the_answerability_model_declines_off_topic_questions_with_a_reason() -> None:
    sources = [source("ibm", "IBM was founded in 1911 as the Computing-Tabulating-Recording Company.")]
    response = ExtractiveAnswerer(default_embedder()).answer(
        "How long do ducks live in captivity?", sources, RagOptions()
    )
    assert response.declined and response.decline_reason is not None
    assert response.decline_reason.startswith("answerability_") and response.answerability is not None
    assert response.answerability < 0.5


def test_off_falls_back_to_the_similarity_floor() -> None:
    sources = [source("a", "alpha beta gamma delta. epsilon zeta eta theta iota.")]
    response = ExtractiveAnswerer(HashingEmbedder()).answer(
        "kappa lambda mu nu", sources, RagOptions(answerability="off", extractive_min_similarity=0.9)
    )
    assert response.declined and response.decline_reason == "no_supporting_sentence"
    assert response.answerability is None


def test_a_typed_question_ranks_first_the_unit_that_holds_the_type_and_covers_more() -> None:
    from ragwright.generate.answerability import LogisticModel

    prefers_prose = LogisticModel(features=("row",), mean=(0.0,), scale=(1.0,), coef=(-4.0,), intercept=0.0)
    text = (
        "Smaller models trained on the new encoding perform better in the accuracy tests.\n\n"
        "| # enc-layers | accuracy |\n| --- | --- |\n| 4 | 0.91 |"
    )
    q = analyze("What accuracy score does the model reach with 4 encoder layers?")
    assert q.answer_type == "number"
    ev = gather(q, [source("p", text)], HashingEmbedder(), model=prefers_prose)
    row = next(i for i, u in enumerate(ev.units) if u.kind == "row")
    assert ev.scores[row] < max(ev.scores)  # the model alone prefers the sentence
    assert ev.best == row  # the row holds the asked number and covers more of the question
    # a question for no type, or a rival covering no more, leaves the model's order alone
    ev = gather(
        analyze("Do smaller models perform better?"), [source("p", text)], HashingEmbedder(), model=prefers_prose
    )
    assert ev.units[ev.best].kind == "sentence"


def test_table_rows_the_question_cannot_tell_apart_are_both_quoted() -> None:
    text = (
        "Sheet: Titles Since 1990; Club: Rovers; City: Leeds; Titles: 2\n\n"
        "Sheet: Titles; Club: Rovers; City: Leeds; Titles: 9\n\n"
        "Sheet: Titles; Club: United; City: York; Titles: 4"
    )
    ev = gather(analyze("How many titles have the Rovers won?"), [source("x", text)], HashingEmbedder())
    chosen = choose_units(ev, 3, relative_floor=1.0)
    assert sorted(ev.units[i].text[-9:] for i in chosen) == ["Titles: 2", "Titles: 9"]
    # a row that matches fewer of the question's words is not a twin
    ev = gather(
        analyze("How many titles have the Rovers of Leeds won?"),
        [source("x", text.replace("City: Leeds; Titles: 9", "City: Bath; Titles: 9"))],
        HashingEmbedder(),
    )
    assert len(choose_units(ev, 3, relative_floor=1.0)) == 1


def ranked_first(question: str, text: str, marker: str) -> tuple[Evidence, int]:
    """The evidence of *question* in one source of *text*, with the unit holding *marker* ranked first."""
    ev = gather(analyze(question), [source("s", text)], HashingEmbedder())
    first = next(i for i, u in enumerate(ev.units) if marker in u.text)
    ev.order = [first] + [i for i in ev.order if i != first]
    return ev, first


def quoted(ev: Evidence, max_units: int) -> list[str]:
    return [ev.units[i].text for i in choose_units(ev, max_units, relative_floor=1.0)]


def test_a_short_line_is_quoted_with_the_line_that_says_what_it_is_about() -> None:
    text = (
        "IN THE HIGH COURT OF THE REALM x JANE ROE, :\n\nv. : No. 12-4410 RICHARD DOE. :\n\n"
        "The hearing before the High Court began at ten in the morning."
    )
    ev, docket = ranked_first("What is the case number of Roe v. Doe in the High Court?", text, "12-4410")
    assert quoted(ev, 3) == ["IN THE HIGH COURT OF THE REALM x JANE ROE, :", "v. : No. 12-4410 RICHARD DOE. :"]
    assert choose_units(ev, 1) == [docket]  # one unit asked for, one quoted


def test_a_quoted_line_loses_its_trailing_separator() -> None:
    response = ExtractiveAnswerer(HashingEmbedder()).answer(
        "case number Roe", [source("t", "v. : No. 12-4410 RICHARD ROE. :")], OFF.merged(max_answer_sentences=1)
    )
    assert response.answer == "v. : No. 12-4410 RICHARD ROE. [Source 1]"


def test_a_sentence_that_trails_off_is_quoted_with_the_line_it_announces() -> None:
    text = (
        "HTTP/2 support has been optional since 2019.\n"
        "You can do so by first making sure to install the optional HTTP/2 dependencies...\n"
        "$ pip install httpx[http2]\n"
        "And then instantiating a client with HTTP/2 support enabled."
    )
    announced = [
        "You can do so by first making sure to install the optional HTTP/2 dependencies...",
        "$ pip install httpx[http2]",
    ]
    ev, lead = ranked_first("How do I install the optional HTTP/2 dependencies?", text, "dependencies...")
    assert quoted(ev, 3) == announced
    assert choose_units(ev, 1) == [lead]  # one unit asked for, one quoted
    # a typed question: the rule that adds a neighbour holding the type (the dated sentence) adds no third unit
    ev, _ = ranked_first("When do I install the optional HTTP/2 dependencies?", text, "dependencies...")
    assert quoted(ev, 2) == announced


SETTINGS = (
    "Type: boolean\n\nDefault: true\n\nEnvironment Variable: TOOL_INSTALLER_PARALLEL\n\nIntroduced in 1.1.4\n\n"
    "Use parallel execution when using the new installer."
)


def setting_source(name: str, text: str) -> SearchResult:
    return SearchResult(Chunk.create("cfg", text, 0, section_path=("Configuration", name)), 0.5)


def test_a_labelled_value_line_is_a_unit_and_answers_the_question_that_names_its_label() -> None:
    sources = [
        setting_source("installer.parallel", SETTINGS),
        setting_source("requests.max-retries", SETTINGS.replace("true", "0").replace("PARALLEL", "MAX_RETRIES")),
    ]
    ev = gather(analyze("What is the default value of installer.parallel?"), sources, HashingEmbedder())
    assert "Default: true" in [u.text for u in ev.units]  # two words, no digit: kept, for its label
    first = choose_units(ev, 1)[0]
    assert (ev.units[first].source, ev.units[first].text) == (1, "Default: true")  # under the named heading
    ev = gather(analyze("Which environment variable sets installer.parallel?"), sources, HashingEmbedder())
    assert ev.units[choose_units(ev, 1)[0]].text == "Environment Variable: TOOL_INSTALLER_PARALLEL"


def test_a_heading_naming_a_setting_in_code_matches_the_question_that_names_it_whole() -> None:
    ev = gather(
        analyze("What is the default value of requests.max-retries?"),
        [setting_source("requests.max-retries", SETTINGS)],
        HashingEmbedder(),
    )
    default = next(i for i, u in enumerate(ev.units) if u.text == "Default: true")
    assert "requests.max-retri" in ev.window_stems[default]  # the name whole, as the question has it


def test_a_labelled_line_may_start_lowercase_and_answers_for_its_label() -> None:
    text = (
        "The config.toml file is created when you first run the config command. It is found in:\n\n"
        "- macOS: ~/Library/Application Support/tool\n- Windows: %APPDATA%\\tool"
    )
    ev = gather(analyze("Where is the config.toml file on macOS?"), [source("c", text)], HashingEmbedder())
    assert "macOS: ~/Library/Application Support/tool" in [u.text for u in ev.units]  # three words, kept
    assert ev.units[choose_units(ev, 1)[0]].text == "macOS: ~/Library/Application Support/tool"


def test_which_setting_names_the_code_heading_its_sentence_is_under() -> None:
    chunk = Chunk.create(
        "cfg",
        "Create the virtualenv inside the project's root directory.",
        0,
        section_path=("Configuration", "virtualenvs.in-project"),
    )
    response = ExtractiveAnswerer(HashingEmbedder()).answer(
        "Which setting makes the tool create the virtualenv inside the project's root directory?",
        [SearchResult(chunk, 0.5)],
        OFF,
    )
    assert response.answer == (
        "virtualenvs.in-project: Create the virtualenv inside the project's root directory. [Source 1]"
    )
    # a heading in prose, or one the question already names, is not the answer
    for path, question in (
        (("Configuration", "Project layout"), "Which setting makes the tool create the virtualenv inside the project?"),
        (("virtualenvs.in-project",), "Which value does virtualenvs.in-project take to create it inside the project?"),
    ):
        chunk = Chunk.create("cfg", "Create the virtualenv inside the project's root directory.", 0, section_path=path)
        answer = ExtractiveAnswerer(HashingEmbedder()).answer(question, [SearchResult(chunk, 0.5)], OFF).answer
        assert answer.startswith("Create the virtualenv")


def test_a_labelled_value_is_matched_with_the_heading_it_is_the_value_of() -> None:
    question = analyze("What is the default value of requests.max-retries?")
    text = "Type: int\n\nDefault: 0\n\nSet the maximum number of retries in an unstable network."

    def default_cosine(path: tuple[str, ...]) -> float:
        ev = gather(question, [SearchResult(Chunk.create("c", text, 0, section_path=path), 0.5)], HashingEmbedder())
        return next(c for u, c in zip(ev.units, ev.cosines, strict=True) if u.text == "Default: 0")

    assert default_cosine(("Configuration", "requests.max-retries")) > default_cosine(())


def test_the_labelled_line_under_the_named_setting_wins_over_another_settings() -> None:
    def section(name: str, syntax: str, default: str) -> SearchResult:
        text = f"Syntax: {syntax}\n\nDefault: {default}\n\nContext: server config"
        return SearchResult(Chunk.create(name, text, 0, section_path=("Module", f"{name} Directive")), 0.5)

    sources = [  # both "Default:" lines cover two of the three terms: one "value", the other the name
        section("DemoWindowSize", "DemoWindowSize value", "DemoWindowSize 15"),
        section("DemoAlterETag", "DemoAlterETag AddSuffix|Remove", "DemoAlterETag AddSuffix"),
    ]
    ev = gather(analyze("What is the default value of DemoAlterETag?"), sources, HashingEmbedder())
    other = next(i for i, u in enumerate(ev.units) if u.text == "Default: DemoWindowSize 15")
    ev.order = [other] + [i for i in ev.order if i != other]  # the model prefers the other setting's number
    assert ev.units[choose_units(ev, 1)[0]].text == "Default: DemoAlterETag AddSuffix"


def test_the_labelled_line_under_the_heading_the_question_names_whole_wins() -> None:
    """ "What is the default backlog?": the section `backlog`, not `enable_backlog_metric` — whose words hold
    "backlog" too, and which the ranking puts first."""
    sources = [
        setting_source("enable_backlog_metric", "Command line: --enable-backlog-metric\n\nDefault: False"),
        setting_source("`backlog`", "Command line: --backlog INT\n\nDefault: 2048"),
    ]
    ev = gather(analyze("What is the default backlog?"), sources, HashingEmbedder())
    other = next(i for i, u in enumerate(ev.units) if u.text == "Default: False")
    ev.order = [other] + [i for i in ev.order if i != other]
    assert ev.units[choose_units(ev, 1)[0]].text == "Default: 2048"


FLAGS = (
    "* `--ws-max-size <int>` - Set the WebSockets max message size, in bytes. **Default:** *16777216* (16 MB).\n"
    "* `--ws-max-queue <int>` - Set the maximum length of the WebSocket incoming message queue. **Default:** *32*.\n"
    "* `--ws-ping-interval <float>` - Set the WebSockets ping interval, in seconds. **Default:** *20.0*.\n"
    "* `--timeout-graceful-shutdown <int>` - Maximum number of seconds to wait for graceful shutdown.\n"
)


def test_a_labelled_value_ending_a_line_is_the_value_of_that_line() -> None:
    """ "**Default:** *32*." ends the `--ws-max-queue` item: it is read with that item's first sentence (its
    context), and quoted with it — not with the next item, whose sentence stands beside it too."""
    from ragwright.generate.lines import pieces_in_context

    pieces = pieces_in_context(FLAGS)
    assert (
        "sentence",
        "Default: 32.",
        "--ws-max-queue <int> - Set the maximum length of the WebSocket incoming message queue.",
    ) in pieces
    assert all(c == "" for k, p, c in pieces if not p.startswith("Default"))  # only a labelled value has one
    ev = gather(
        analyze("What is the default maximum length of the WebSocket incoming message queue?"),
        [source("u", FLAGS)],
        HashingEmbedder(),
    )
    other = next(i for i, u in enumerate(ev.units) if u.text.startswith("Default: 16777216"))
    ev.order = [other] + [i for i in ev.order if i != other]  # the previous item's value ranked first
    assert [ev.units[i].text for i in choose_units(ev, 2)] == [
        "--ws-max-queue <int> - Set the maximum length of the WebSocket incoming message queue.",
        "Default: 32.",
    ]


def test_a_labelled_line_counts_as_stating_the_asked_value() -> None:
    """ "What is the default value of X?": a sentence elsewhere that says "the value of X" covers the word
    "value"; the "Default:" line under X states the default value by its form and is still quoted."""
    sources = [
        setting_source("forwarded_allow_ips", "Command line: --forwarded-allow-ips STRING\n\nDefault: '127.0.0.1'"),
        source("n", "By default, the value of forwarded_allow_ips is read from an environment variable."),
    ]
    ev = gather(analyze("What is the default value of forwarded_allow_ips?"), sources, HashingEmbedder())
    assert ev.units[choose_units(ev, 1)[0]].text == "Default: '127.0.0.1'"


def test_a_labelled_line_ranked_below_another_is_not_quoted_twice() -> None:
    """The runner-up of a labelled value is another unit of its own section — never the labelled line itself
    (it was quoted twice when the model ranked it second) and never another setting's line."""
    sources = [
        setting_source("requests.max-retries", SETTINGS.replace("true", "0")),
        setting_source("installer.parallel", SETTINGS),
    ]
    ev = gather(analyze("What is the default value of requests.max-retries?"), sources, HashingEmbedder())
    labelled = next(i for i, u in enumerate(ev.units) if u.source == 1 and u.text == "Default: 0")
    top = next(i for i, u in enumerate(ev.units) if u.source == 2 and u.text.startswith("Use parallel"))
    ev.order = [top, labelled] + [i for i in ev.order if i not in (top, labelled)]
    ev.scores = [1.0] * len(ev.units)  # every runner-up is close enough to be quoted
    chosen = choose_units(ev, 2)
    assert labelled in chosen and len(set(chosen)) == len(chosen) == 2
    assert all(ev.units[i].source == 1 for i in chosen)


def test_which_setting_reads_only_the_first_quoted_line_for_names() -> None:
    """A second quoted line that names something ("DDOS") does not stop the heading from naming the setting
    the first line is about."""
    chunk = Chunk.create(
        "cfg",
        "Limit the number of HTTP headers fields in a request.\n\n"
        "This parameter is used to limit the number of headers in a request to prevent DDOS attack.",
        0,
        section_path=("Security", "limit_request_fields"),
    )
    answer = (
        ExtractiveAnswerer(HashingEmbedder())
        .answer(
            "Which setting limits the number of HTTP header fields in a request?",
            [SearchResult(chunk, 0.5)],
            RagOptions(answerability="off", extractive_min_similarity=0.0, extractive_relative_floor=0.0),
        )
        .answer
    )
    assert answer.startswith("limit_request_fields: Limit the number of HTTP headers fields in a request.")
    assert "DDOS" in answer  # the second line was quoted too
