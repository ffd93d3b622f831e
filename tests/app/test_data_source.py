"""The examples picker of the dataset pages (ui.data_source): the visitor's labelled file, picked
once and kept for every dataset page of the session, with its own summary line."""

from __future__ import annotations

import numpy as np
import pytest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import open_link
from ui.logic import keys as K
from uqcore import stats
from uqlab.workbench import dataset
from uqlab.workbench.your_data import MAX_BYTES, read_upload

pytestmark = pytest.mark.usefixtures("app_checkpoints")

SENTENCES = [
    "The cat slept.",
    "She reads books every day.",
    "Him went home.",
    "They is happy.",
    "The dog barked loudly.",
    "We saw a film yesterday.",
    "Books the read she.",
    "A boy ran to school.",
]
CSV = "sentence,judgement\n" + "\n".join(
    f"{s},{'yes' if i % 3 else 'no'}" for i, s in enumerate(SENTENCES)
)


def _kept_file(at, name: str = "mine.csv", text: str = CSV):
    """The session as if the visitor had uploaded ``text`` on an earlier page."""
    at.session_state[K.DATA_KEPT] = {"id": read_upload(name, text.encode())}
    return at


def _map_yes_no(at):
    """Map the file's yes/no values to the checkpoint's labels (they are not its names)."""
    for value in ("yes", "no"):
        box = next(s for s in at.selectbox if s.label == f"{value} is")
        box.set_value(1 if value == "yes" else 0)
        at.run()
        assert not at.exception, at.exception
    return at


def test_the_labelled_file_uploaders_state_the_limit_they_enforce():
    """Issue 34: the caption said 20 MB under an uploader that said "100MB per file" (the
    server's limit): the widget's limit and the caption are now the one constant's."""
    at = open_link("app_pages/results.py", ckpt="cola-hsto")
    at.radio(key=K.DATA_KIND).set_value("mine").run()
    assert not at.exception, at.exception
    uploaders = at.get("file_uploader")
    assert len(uploaders) == 2  # the labelled file and the optional out-of-domain one
    mb = MAX_BYTES // 2**20
    assert all(up.proto.max_upload_size_mb == mb for up in uploaders)
    assert any(f"{mb} MB per file" in c.value for c in at.caption)


def test_a_kept_file_is_the_default_source_and_replaces_the_uploader():
    at = _kept_file(open_link(ckpt="cola-hsto"))  # uploaded on an earlier page
    at.switch_page("app_pages/errors.py").run()
    assert not at.exception, at.exception
    assert at.radio(key=K.DATA_KIND).value == "mine"
    assert len(at.get("file_uploader")) == 1  # only the empty out-of-domain slot
    assert any("mine.csv" in m.value and "kept for this session" in m.value for m in at.markdown)
    at.button(key=f"{K.DATA_FORGET}_id").click().run()
    assert not at.exception, at.exception
    assert "id" not in at.session_state[K.DATA_KEPT]
    assert len(at.get("file_uploader")) == 2


def test_error_analysis_states_the_files_accuracy_and_ece_as_uqcore_computes_them():
    """Issue 34: a visitor's file got no summary: rows, accuracy, ECE (bootstrap interval)
    now head the page, and they are uqcore.stats' numbers on the frame's rows."""
    at = _kept_file(open_link(ckpt="cola-hsto"))
    at = _map_yes_no(at.switch_page("app_pages/errors.py").run())
    at.button(key=K.ERR_GO).click().run()
    assert not at.exception, at.exception
    _, df, _ = at.session_state[K.ERR_FRAME]
    assert set(df["domain"]) == {dataset.YOURS}  # not "in-domain": the visitor's own rows
    assert len(df) == len(SENTENCES)
    p, y = dataset.mean_probs(df), df["gold"].to_numpy()
    acc = stats.bootstrap_interval(stats.accuracy, p, y, seed=0)
    ece = stats.bootstrap_interval(stats.ece, p, y, seed=0)
    line = next(m.value for m in at.markdown if m.value.startswith("**your file:"))
    assert f"{len(SENTENCES)} rows" in line
    assert f"accuracy {acc.value:.3f} [{acc.low:.3f}, {acc.high:.3f}]" in line
    assert f"ECE {ece.value:.3f} [{ece.low:.3f}, {ece.high:.3f}]" in line
    assert "macro-F1" not in line  # two classes
    assert np.isclose(acc.value, (p.argmax(1) == y).mean())
    assert at.selectbox(key=K.ERR_DOMAIN).options == ["all", dataset.YOURS]


def test_results_uses_every_row_of_the_file_and_keeps_the_checkpoints_picked():
    """Issue 34: Results sampled 300 rows of a file by default, emptied its checkpoint picker
    when the source changed and said the *task* had no out-of-domain examples."""
    at = open_link("app_pages/results.py", ckpt="cola-hsto")
    before = at.multiselect(key=K.RES_CKPTS).value
    assert before
    at.radio(key=K.DATA_KIND).set_value("mine").run()  # no file yet: the page stops early
    assert not at.exception, at.exception
    _map_yes_no(_kept_file(at).run())
    assert at.multiselect(key=K.RES_CKPTS).value == before
    assert at.number_input(key=K.RES_N_MINE).value == 0  # every row
    at.button(key=K.RES_GO).click().run()
    assert not at.exception, at.exception
    frames = [d.value for d in at.dataframe if "ECE" in d.value.columns]
    assert frames and set(frames[0]["rows"]) == {len(SENTENCES)}
    assert "file" not in frames[0].columns  # one file: no column to tell files apart
    assert any("Your file has no out-of-domain part" in i.value for i in at.info)


def test_a_hostile_files_name_and_columns_stay_text_and_out_of_widget_keys():
    """A file named like a link, with markup and a 5,000-character header: shown as typed,
    no widget key carries the visitor's text."""
    long = "x" * 5000
    text = f"<b>sentence</b>,{long}\n" + "\n".join(f"{s},yes" for s in SENTENCES)
    at = _kept_file(open_link(ckpt="cola-hsto"), "[click](http://evil.example).csv", text)
    at.switch_page("app_pages/errors.py").run()
    assert not at.exception, at.exception
    line = next(m.value for m in at.markdown if "kept for this session" in m.value)
    assert "](http" not in line and "\\[click\\]" in line  # escaped: never a live link
    assert any(long == box.value for box in at.selectbox)  # the header is offered as a column
    assert all(long not in str(box.key) for box in at.selectbox)
