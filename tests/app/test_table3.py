"""AppTest of the Table 3 page on tiny checkpoints (``tests/app_fixtures.py``)."""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import open_link
from ui.logic.exports import read_header
from uqlab.catalog.tasks import PAPER_CHECKPOINT
from uqlab.evaluation.paper import TABLES, p_gold_cell

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


def _paper_view(at: AppTest) -> pd.DataFrame:
    """Every domain's table of the page, one below the other."""
    return pd.concat([f.value for f in at.dataframe], ignore_index=True)


def test_table3_shows_the_papers_cells_beside_ours_on_its_sentences(monkeypatch):
    """Issue 34: the paper's Table 3 cells appeared only in docs; the page now shows them beside
    ours, with a note on how the set-ups differ, and its CSV carries them and that note."""
    from ui.logic import exports
    from ui.logic.tables import PAPER_COLUMNS

    files = []
    real = exports.download

    def keep(where, label, data, *args, **kwargs):  # the CSV is made on click: make it here
        files.append(data() if callable(data) else data)
        return real(where, label, data, *args, **kwargs)

    monkeypatch.setattr(exports, "download", keep)
    at = goto_table3(open_link(**{**LINK, "T": "5"}))  # the examples: the paper's sentences
    at.button[0].click().run()
    assert not at.exception, at.exception
    table = _paper_view(at)
    stat, corr = PAPER_COLUMNS
    for row in TABLES[3].rows:
        (got,) = table.loc[table["sentence"] == row.text, [stat, corr]].itertuples(index=False)
        assert tuple(got) == (
            p_gold_cell(row.p_gold_mean, row.p_gold_var),
            f"{row.correct}/{row.samples}",
        )
    (note,) = [c.value for c in at.caption if "quoted from its Table 3" in c.value]
    assert PAPER_CHECKPOINT in note and "T = 5, seed 1" in note  # the paper's set-up and ours
    csv = files[-1]  # the last run's file (a run may rerun the page)
    assert "paper" in read_header(csv)
    assert all(c in csv.splitlines()[len(read_header(csv)) + 1] for c in PAPER_COLUMNS)


def test_table3_matches_a_paper_sentence_as_written_and_dashes_the_others():
    """A paper sentence typed as prose (capitals, "didn't", no space before the full stop) is
    the paper's row; a sentence the paper does not report shows "—" in its columns."""
    from ui.logic.tables import MISSING, PAPER_COLUMNS

    row = next(r for r in TABLES[3].rows if "n't" in r.text)
    typed = row.text.replace(" n't", "n't").replace(" .", ".").capitalize()
    at = goto_table3(open_link(**{**LINK, "T": "5"}))
    at.radio(key="t3_source").set_value("Paste lines").run()
    at.text_area(key="t3_pasted").set_value(f"{typed}\t{row.gold}\nnora sent the book\t1").run()
    at.button[0].click().run()
    assert not at.exception, at.exception
    table = _paper_view(at).set_index("sentence")
    stat, corr = PAPER_COLUMNS
    assert table.loc[typed, stat] == p_gold_cell(row.p_gold_mean, row.p_gold_var)
    assert table.loc[typed, corr] == f"{row.correct}/{row.samples}"
    assert table.loc["nora sent the book", stat] == MISSING
    assert table.loc["nora sent the book", corr] == MISSING


def test_table3_shows_no_paper_columns_without_a_paper_sentence():
    from ui.logic.tables import PAPER_COLUMNS

    at = goto_table3(open_link(**{**LINK, "T": "5"}))
    at.radio(key="t3_source").set_value("Paste lines").run()
    at.text_area(key="t3_pasted").set_value("nora sent the book\t1").run()
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not set(PAPER_COLUMNS) & set(_paper_view(at).columns)
    assert not any("quoted from its Table 3" in c.value for c in at.caption)


def test_table3_states_its_upload_limit_from_the_constant():
    """Issue 34: the CSV uploader said "100MB per file" (the server's limit) while 2 MB are
    read: the widget's limit and its label are now the one constant's."""
    from ui.logic.inputs import MAX_UPLOAD_BYTES

    at = goto_table3(open_link(**LINK))
    at.radio(key="t3_source").set_value("Upload CSV").run()
    (up,) = at.get("file_uploader")
    assert up.proto.max_upload_size_mb * 2**20 == MAX_UPLOAD_BYTES
    assert f"at most {MAX_UPLOAD_BYTES // 2**20} MB" in up.proto.label
