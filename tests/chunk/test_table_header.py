"""A table whose first row is a sparse group row (merged header cells, as PDF and XLSX tables give
them): the column-label rows under it belong to the header and open every row group."""

from ragwright.chunk import StructuralChunker
from ragwright.chunk.split import Budget, header_forms, split_table, table_header
from ragwright.generate.lines import pieces
from ragwright.model.document import Document, Element, ElementKind
from ragwright.testing.doubles import HashingEmbedder

count = HashingEmbedder().count_tokens
GROUP = "|  | Sales |  |  | Returns |  |"
RULE = "| --- | --- | --- | --- | --- | --- |"
LABELS = "| Region | Units | Amount | Share | Units | Amount |"
DATA = [f"| R{i} | {i} | {i * 10} | {i} % | {i + 1} | {i * 3} |" for i in range(40)]


def table(*rows: str) -> str:
    return "\n".join(rows)


def chunks_of(text: str, window: int) -> list[str]:
    document = Document("doc", (Element(ElementKind.TABLE, text),))
    return [c.text for c in StructuralChunker(count, window).chunk(document)]


def body(piece: str, header: str) -> list[str]:
    assert piece.startswith(header + "\n")
    return piece[len(header) + 1 :].split("\n")


def test_label_row_under_a_sparse_group_row_is_repeated_in_every_group() -> None:
    text = table(GROUP, RULE, LABELS, *DATA)
    header = table(GROUP, RULE, LABELS)
    assert table_header(text) == (header, DATA)
    pieces_ = chunks_of(text, 80)
    assert len(pieces_) > 3
    assert all(count(p) <= 80 for p in pieces_)
    assert [row for p in pieces_ for row in body(p, header)] == DATA  # every row once, in order


def test_labels_alone_are_repeated_when_the_whole_header_is_too_large() -> None:
    text = table(GROUP, RULE, LABELS, *DATA)
    repeat = table(LABELS, RULE)
    budget = Budget([len], [140])  # the three header rows (121 characters) leave room for no row
    got = split_table(text, budget.limits, budget)
    assert len(got) > 3 and all(budget.fits(p) for p in got)
    assert got[0].split("\n")[:3] == [GROUP, RULE, LABELS]  # the whole header once, first
    rows = got[0].split("\n")[3:] + [row for p in got[1:] for row in body(p, repeat)]
    assert rows == DATA
    assert sum(GROUP in p for p in got) == 1


def test_a_row_in_a_later_group_is_read_with_its_column_labels() -> None:
    budget = Budget([len], [140])
    later = split_table(table(GROUP, RULE, LABELS, *DATA), budget.limits, budget)[-1]
    (row,) = [p for k, p in pieces(later) if k == "row" and "R39" in p]
    assert row == "Region: R39; Units: 39; Amount: 390; Share: 39 %; Units: 40; Amount: 117"
    wide = chunks_of(table(GROUP, RULE, LABELS, *DATA), 80)[-1]  # the whole header: group over labels
    (row,) = [p for k, p in pieces(wide) if k == "row" and "R39" in p]
    assert row == "Region: R39; Sales Units: 39; Amount: 390; Share: 39 %; Returns Units: 40; Amount: 117"


def test_a_plain_table_keeps_its_one_row_header() -> None:
    head = "| Region | Units | Amount | Share | Units | Amount |"
    text = table(head, RULE, *DATA)
    assert table_header(text) == (table(head, RULE), DATA)
    assert header_forms(text) == [table(head, RULE)]
    pieces_ = chunks_of(text, 60)
    assert len(pieces_) > 3
    assert [row for p in pieces_ for row in body(p, table(head, RULE))] == DATA


def test_text_rows_under_a_sparse_row_stay_body_rows() -> None:
    words = [f"| item {i} | note | kept | as | is | here |" for i in range(40)]
    text = table(GROUP, RULE, *words)
    assert table_header(text) == (table(GROUP, RULE), words)  # no data row: nothing is a label
    pieces_ = chunks_of(text, 60)
    assert len(pieces_) > 3
    assert [row for p in pieces_ for row in body(p, table(GROUP, RULE))] == words


def test_a_data_row_first_is_not_taken_for_labels() -> None:
    text = table(GROUP, RULE, *DATA)
    assert table_header(text) == (table(GROUP, RULE), DATA)


def test_at_most_three_label_rows() -> None:
    three = [LABELS, "| a | b | c | d | e | f |", "| g | h | i | j | k | l |"]
    assert table_header(table(GROUP, RULE, *three, *DATA)) == (table(GROUP, RULE, *three), DATA)
    four = [*three, "| m | n | o | p | q | r |"]
    assert table_header(table(GROUP, RULE, *four, *DATA)) == (table(GROUP, RULE), [*four, *DATA])


def test_a_dense_title_row_takes_no_labels() -> None:
    title = "| Region | Sales | Units | Amount | Returns | Share |"
    text = table(title, RULE, LABELS, *DATA)
    assert table_header(text) == (table(title, RULE), [LABELS, *DATA])


def test_a_row_labelling_a_group_of_rows_is_no_column_label() -> None:
    title = "| ASSETS | 2021 |  |  | 2020 |  |"
    rows = ["| Current assets: |  |  |  |  |  |", *DATA]
    assert table_header(table(title, RULE, *rows)) == (table(title, RULE), rows)
