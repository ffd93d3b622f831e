"""The app's tables (ui.logic.tables) on the pages: column order and widths (AppTest, tiny
checkpoints)."""

from __future__ import annotations

import json

import pytest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import open_link

LINK = {
    "ckpt": "cola-hsto",
    "text": "John is tall on several occasions.",
    "label": "0",
    "T": "5",
    "seed": "1",
}


pytestmark = pytest.mark.usefixtures("app_checkpoints")


def test_table3_puts_the_sentence_and_gold_first_pinned_and_wrapped():
    """Issue 45 (reversing issue 34's order): with the numbers first, a phone (390x844) showed
    no sentence and no gold label beside them. The sentence comes first, pinned at the left
    (a sideways scroll keeps it beside every number) and wrapped in rows tall enough for three
    lines; the gold label next, then each checkpoint's numbers."""
    from ui.logic.tables import SENTENCE_PX, WRAP_ROW_PX

    at = open_link("app_pages/table3.py", **LINK)
    at.multiselect[0].set_value(["cola-hsto", "cola-trans"]).run()
    at.button[0].click().run()
    assert not at.exception, at.exception
    for frame in at.dataframe:
        columns = list(frame.value.columns)
        assert columns[:6] == [
            "sentence",
            "gold",
            "cola-hsto: p(gold) mean ± var",
            "cola-hsto: correct/T",
            "cola-trans: p(gold) mean ± var",
            "cola-trans: correct/T",
        ], columns
        assert frame.value.iloc[0, 2].startswith("0.")
        config = column_config(frame)
        assert config["sentence"]["pinned"] is True
        assert config["sentence"]["width"] == SENTENCE_PX
        assert frame.proto.row_height == WRAP_ROW_PX > 64  # the grid wraps over 4 rem


def column_config(frame) -> dict:
    """The ``column_config`` an ``st.dataframe`` was drawn with, by column name."""
    return json.loads(frame.proto.columns)


def test_results_gives_the_checkpoint_names_their_width_and_pins_them():
    """Defect: the Results table cut the names ("cola-minilm-mcdro"): the grid sized the column
    from its first rows."""
    from ui.logic.tables import CHAR_PX

    at = open_link("app_pages/results.py", ckpt="cola-hsto")
    table = at.dataframe[0]
    name = column_config(table)["checkpoint"]
    assert name["pinned"] is True
    longest = max(len(n) for n in table.value["checkpoint"])
    assert name["width"] >= CHAR_PX * longest + 16, (name, longest)
    assert list(table.value.columns)[0] == "checkpoint"


def test_error_analysis_headers_fit_and_the_numbers_come_before_the_text():
    """Defect: at 1400 px the "mean p(gold)" header was cut (the column sat past the text)."""
    from ui.logic.tables import CHAR_PX

    at = open_link("app_pages/errors.py", **LINK)
    at.number_input(key="err_n").set_value(5)
    at.button(key="err_go").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0]
    columns = list(table.value.columns)
    assert columns.index("p_gold") < columns.index("text") and columns.index("p_gold") <= 2
    for column, config in column_config(table).items():
        label = config.get("label") or column
        if column not in ("_index", "open", "text"):
            assert config["width"] >= CHAR_PX * len(label) + 16, (column, config)
    assert column_config(table)["p_gold"]["label"] == "p(gold)"


def test_the_papers_cells_of_a_sentence_are_its_table_3_row_or_a_dash():
    from ui.logic.tables import MISSING, paper_cells
    from uqlab.evaluation.paper import TABLE3, correct_cell, p_gold_cell

    names = ("unacceptable", "acceptable")
    row = TABLE3[0]
    ours = (p_gold_cell(row.p_gold_mean, row.p_gold_var), correct_cell(row.correct, row.samples))
    assert paper_cells("cola", row.text, row.gold, names) == ours
    assert paper_cells("cola", row.text, None, names) == ours  # unlabelled: still its row
    assert paper_cells("cola", "not a sentence of the paper", 1, names) == (MISSING, MISSING)
    assert paper_cells("imdb", row.text, row.gold, names) == (MISSING, MISSING)
    other = paper_cells("cola", row.text, 1 - row.gold, names)  # another gold: no numbers
    assert other == (f"{MISSING} (the paper's gold: {names[row.gold]})", MISSING)
