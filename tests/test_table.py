"""The shared table printer (rdpjax._table) and the tables built on it."""

import pytest

from rdpjax._table import Column, markdown_table, text_table


def test_markdown_table_has_a_rule_and_escapes_pipes():
    lines = markdown_table(("a", "b|c"), [(1, "x|y"), ("", 2.5)])
    assert lines == [
        "| a | b\\|c |",
        "|---|---|",
        "| 1 | x\\|y |",
        "|  | 2.5 |",
    ]


def test_text_table_aligns_titles_and_values_per_column():
    columns = [Column("name", 6, align="<"), Column("value", 8, ".3f")]
    lines = text_table(columns, [("ab", 1.5), ("abcdefgh", -2.0)], tails=[" !", "", " ok"])
    assert lines == [
        "name      value !",
        "ab        1.500",
        "abcdefgh   -2.000 ok",  # a wider value widens its row, not the column
    ]
    assert text_table(columns, [("a", 1)], sep="|")[1] == "a     |   1.000"


@pytest.mark.parametrize(
    "call",
    [
        lambda: markdown_table(("a", "b"), [(1,)]),
        lambda: text_table([Column("a", 3)], [(1, 2)]),
        lambda: text_table([Column("a", 3)], [(1,)], tails=["x"]),
    ],
)
def test_rows_that_do_not_fit_the_columns_raise(call):
    with pytest.raises(ValueError, match="cells|values|tails"):
        call()


def test_coverage_table_escapes_a_pipe_in_a_mechanism_name():
    from rdpjax.studies import format_coverage

    cell = {
        "mechanism": "a|b", "n": 1000, "reps": 10, "lam": [2.0], "exact": [0.5],
        "coverage": [0.9], "coverage_low": [0.6], "coverage_high": [0.98],
        "simultaneous": 0.9, "simultaneous_low": 0.6, "simultaneous_high": 0.98,
        "tightness": [0.4],
    }  # fmt: skip
    row = format_coverage([cell]).splitlines()[2]
    assert row == (
        "| a\\|b | 1,000 | 10 | 2 | 0.500000 | 0.900 [0.600, 0.980] | 0.900 [0.600, 0.980] "
        "| 0.400 |"
    )
