"""AppTest of the Table 3 page on tiny checkpoints (``tests/app_fixtures.py``)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import open_link

LINK = {
    "ckpt": "cola-hsto",
    "text": "John is tall on several occasions.",
    "label": "0",
    "T": "50",
    "seed": "1",
}


pytestmark = pytest.mark.usefixtures("app_checkpoints")


def goto_table3(at: AppTest) -> AppTest:
    at.switch_page("app_pages/table3.py").run()
    assert not at.exception, at.exception
    return at


def test_table3_on_the_examples_computes_and_offers_the_csv():
    at = goto_table3(open_link(**{**LINK, "T": "10"}))
    at.button[0].click().run()
    assert not at.exception
    frames = at.dataframe
    assert len(frames) == 2  # in-domain and out-of-domain
    assert {s.value for s in at.subheader} >= {"in-domain", "out-of-domain"}
    table = frames[0].value
    assert any("correct/T" in c for c in table.columns)
    assert at.get("download_button")


def test_table3_reports_bad_pasted_labels_and_uploads():
    at = goto_table3(open_link(**LINK))
    at.radio(key="t3_source").set_value("Paste lines").run()
    at.text_area(key="t3_pasted").set_value("nora sent the book\tmaybe\njohn is tall\t1").run()
    assert any("not one of" in w.value for w in at.warning)
    assert "2 sentence(s)" in " ".join(c.value for c in at.caption)


def test_table3_says_what_unlabelled_lines_are_scored_against_and_counts_repeats_once():
    """Defects: unlabelled lines showed p(predicted) under "p(gold)"; a repeated line was merged
    silently while the caption counted it."""
    at = goto_table3(open_link(**{**LINK, "T": "5"}))
    at.radio(key="t3_source").set_value("Paste lines").run()
    at.text_area(key="t3_pasted").set_value(
        "nora sent the book\njohn is tall\t1\nnora sent the book"
    ).run()
    captions = " ".join(c.value for c in at.caption)
    assert "1 repeated line(s) counted once" in captions and "2 sentence(s)" in captions
    at.button[0].click().run()
    assert not at.exception
    columns = " ".join(" ".join(f.value.columns) for f in at.dataframe)
    assert "p(gold, else predicted)" in columns
    table = next(f.value for f in at.dataframe if "nora sent the book" in set(f.value["sentence"]))
    stat = next(c for c in table.columns if c.startswith("p(gold"))
    cell = table.loc[table["sentence"] == "nora sent the book", stat].iloc[0]
    assert cell.endswith("(acceptable)") or cell.endswith("(unacceptable)")
