"""The one table printer of the CLI (lit3r/cli/tables.py): every column shown, every value in
full, and no number split across lines, however narrow the terminal."""

from __future__ import annotations

import re

import pytest

from lit3r.cli.tables import render

#: The scores table of `lit3r eval` (one row of it) and a row with long words and long numbers.
EVAL_ROW = {"group": "task_family=hidden_source_single_paper", "questions": 17, "overall": "0.0955",
            "paper_f1": "0.1176", "evidence_f1": "0.1176", "mc_acc": "0.1538", "freeform_em": "0.0000",
            "row_f1": "123456789.0123", "cell_acc_macro": "-", "cell_acc_micro": "-12,345.5%"}
MIXED = [{"paper_id": "1706.03762", "title": "Attention Is All You Need " * 6, "score": 0.912345678,
          "works": "work:" + "x" * 90}]
#: A number wider than the words of the other column: rich's layout alone would split it.
WIDE_NUMBER = [{"n": "1234567890.123456789012345", "text": "a b c d e f g h i j k l m n o p q r s t u v w x y z " * 3}]


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


@pytest.mark.parametrize("width", [20, 40, 80, 160])
@pytest.mark.parametrize("rows", [[EVAL_ROW], MIXED, WIDE_NUMBER], ids=["eval", "mixed", "wide_number"])
def test_no_number_is_split_and_no_column_is_dropped(rows: list[dict], width: int) -> None:
    text = render(rows, width=width)
    words = text.split()
    for row in rows:
        for value in row.values():
            value = str(value)
            if re.fullmatch(r"[-+]?[\d,]*\.?\d+%?", value):
                assert value in words, (value, text)  # the number whole, as one word of one line
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if set(line.strip()) == {"\u2500"})
    chars = lambda texts: sum(len("".join(str(t).split())) for t in texts)  # noqa: E731
    # every header and every value in full: no character cut, no column dropped (folded is fine)
    assert chars(lines[:rule]) == chars(rows[0]), text
    assert chars(lines[rule + 1:]) == sum(chars(row.values()) for row in rows), text

def test_a_table_that_fits_is_one_line_per_row() -> None:
    rows = [{"group": "all", "overall": "0.7150"}, {"group": "family=multi_paper", "overall": "0.6000"}]
    lines = [line for line in _lines(render(rows, width=160)) if line]
    assert lines[0].split() == ["group", "overall"] and len(lines) == 4
    assert lines[2].split() == ["all", "0.7150"] and lines[3].split() == ["family=multi_paper", "0.6000"]
