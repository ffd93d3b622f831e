"""AppTest of the explorer's "Why is it unsure?" views (ui.why_views) on tiny checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import chart_titles, open_link
from ui.logic import keys as K

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TEXT = "the film was dull and the movie was great"
pytestmark = pytest.mark.usefixtures("app_checkpoints")


def explorer(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    for key, value in {"ckpt": "cola-hsto", "text": TEXT, "T": "12", **params}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    assert not any(t.startswith("Salience of") for t in chart_titles(at))  # off at first
    at.toggle(key=K.WHY_ON).set_value(True).run()
    assert not at.exception, at.exception
    return at


def _captions(at) -> str:
    return "\n".join(c.value for c in at.caption)


def test_salience_occlusion_edit_and_head_grid_render():
    at = explorer()
    titles = chart_titles(at)
    assert any(t.startswith("Salience of p(") and "gradient × input" in t for t in titles)
    assert any("Attribution of the mutual information" in t for t in titles)
    assert any(t.startswith("Mean p(") and "removing each word" in t for t in titles)
    assert "Mean attention, every layer and head" in titles
    occlusion = next(d.value for d in at.dataframe if "shift of p" in d.value.columns)
    assert list(occlusion["word"]) == TEXT.split()
    salience = next(d.value for d in at.dataframe if "top share" in d.value.columns)
    assert list(salience["token"]) == TEXT.split()
    exported = set(at.session_state[K.FIGURES])  # the export panel offers each view's figure
    assert {"salience", "salience_mi", "occlusion", "occlusion_mi", "head_grid"} <= exported
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Salience per token (CSV)" in labels and "Occlusion table (CSV)" in labels
    # integrated gradients wait for their button, then report completeness
    at.radio(key="why_method").set_value("integrated_gradients").run()
    assert any(b.label == "Compute integrated gradients" for b in at.button)
    at.button(key="why_go").click().run()
    assert not at.exception, at.exception
    assert "Completeness: each sample's attributions add up" in _captions(at)
    assert any("integrated gradients, 32 steps" in t for t in chart_titles(at))
    # the head grid opens a cell in the detailed view
    at.selectbox(key="grid_pick").set_value("1,1").run()
    at.button[[b.label for b in at.button].index("Open it")].click().run()
    assert at.selectbox(key="att_layer").value == 1 and at.selectbox(key="att_head").value == 1


def test_the_edit_view_compares_two_texts_on_one_axis():
    at = explorer()
    at.text_area(key="edit_text").set_value("the film was great and the movie was great")
    submit = next(b for b in at.button if b.label == "Compare with the original")
    submit.click().run()
    assert not at.exception, at.exception
    assert any("the original and the edit" in t for t in chart_titles(at))
    assert any("edit minus original" in t for t in chart_titles(at))
    table = next(
        d.value
        for d in at.dataframe
        if "text" in d.value.columns and list(d.value["text"]) == ["original", "edit"]
    )
    assert len(table) == 2


def test_a_deterministic_checkpoint_says_its_spread_is_zero():
    at = explorer(ckpt="cola-trans")
    assert any("spread of the salience is 0" in i.value for i in at.info)


def test_an_ensemble_is_explained_per_member():
    at = explorer(ckpt="cola-ensemble")
    assert any("each of its 3 members is explained once" in i.value for i in at.info)


def test_a_single_word_and_a_long_text_are_handled():
    at = explorer(text="film")
    assert any("single word" in i.value for i in at.info)
    long = " ".join(["the film was dull"] * 15)  # 60 words: occlusion is windowed
    at = explorer(text=long, T="50")
    assert any(b.label.startswith("Remove each of these 40 words") for b in at.button)
    assert any("waits for the button" in c.value for c in at.caption)
    at.button(key=K.OCC_GO).click().run()  # pressed: the prompt goes, the result shows
    assert not at.exception, at.exception
    assert not any(b.label.startswith("Remove each of these") for b in at.button)
    assert not any("so it waits for the button" in c.value for c in at.caption)
    assert any("removing each word" in t for t in chart_titles(at))


def test_the_why_views_start_on_when_the_app_samples_on_a_gpu(monkeypatch):
    """Off at first on a CPU server (a class on different links would pay for them on every
    view); on at first where the device is a GPU (``UQ_DEVICE=auto`` picks it)."""
    from ui import cached

    link = {"ckpt": "cola-hsto", "text": TEXT, "T": "12"}
    monkeypatch.setattr(cached, "on_gpu", lambda: True)
    at = open_link(**link)
    assert at.toggle(key=K.WHY_ON).value is True
    assert any(t.startswith("Salience of") for t in chart_titles(at))
    monkeypatch.setattr(cached, "on_gpu", lambda: False)
    assert open_link(**link).toggle(key=K.WHY_ON).value is False


def test_the_integrated_gradients_prompt_estimates_its_time_and_goes_away_when_pressed():
    """Issue: the prompt guessed from gradient x input (about 40 s for a 13 s run) and stayed
    above the result. Now it says the server has not timed one yet, then estimates from the
    runs it timed; once pressed, only the result shows."""
    from ui.logic import estimate

    estimate.RECENT.clear()
    at = explorer(text="the movie was great and the film was dull")
    at.radio(key=K.WHY_METHOD).set_value("integrated_gradients").run()
    (prompt,) = [i.value for i in at.info if i.value.startswith("Integrated gradients run")]
    assert "32 forward and backward passes of all 12 samples" in prompt
    assert "not timed integrated gradients" in prompt and "about" not in prompt.lower()
    at.button(key=K.WHY_GO).click().run()
    assert not at.exception, at.exception
    assert not [i for i in at.info if i.value.startswith("Integrated gradients run")]
    assert not [b for b in at.button if b.label == "Compute integrated gradients"]
    assert "Completeness: each sample's attributions add up" in _captions(at)
    at.number_input(key=K.WHY_STEPS).set_value(16).run()  # a new run: estimated from the last
    (prompt,) = [i.value for i in at.info if i.value.startswith("Integrated gradients run")]
    assert "here, judging by this server's last run of integrated gradients" in prompt


def test_opening_a_head_grid_cell_says_so():
    at = explorer()
    at.selectbox(key=K.GRID_PICK).set_value("1,0").run()
    at.button(key=K.GRID_OPEN).click().run()
    assert not at.exception, at.exception
    toasts = [t.proto.body for t in at.get("toast")]
    assert "Opened layer 1, head 0 in 'Attention, sample by sample' above." in toasts
    assert "above shows layer 1, head 0 (the cell just opened)." in _captions(at)
    at.run()  # the toast is said once; the caption stays
    assert not at.get("toast")
    assert "above shows layer 1, head 0." in _captions(at)


def test_every_why_figure_exports_with_its_view_settings(monkeypatch):
    """Each exported figure of the why views (and the explorer's attention and centroid maps)
    records its view's own choices (method, class, steps, window, stat, layer...) inside the
    file and in its name, beside the sidebar's."""
    from ui import export_views
    from ui.logic.exports import stamped

    made, saved = [], []
    monkeypatch.setattr(  # no Chromium needed: an SVG stamped like the real one
        export_views,
        "figure_file",
        lambda fig, fmt, record: made.append(record) or stamped(b"<svg></svg>", fmt, record, "t"),
    )
    real = export_views.download
    monkeypatch.setattr(
        export_views,
        "download",
        lambda where, label, data, name, mime, **kw: (
            saved.append((name, data)) or real(where, label, data, name, mime, **kw)
        ),
    )
    at = explorer()
    at.text_area(key=K.EDIT_TEXT).set_value("the film was great and the movie was great")
    next(b for b in at.button if b.label == "Compare with the original").click().run()
    at.radio(key=K.GRID_STAT).set_value("std").run()
    expected = {
        "salience": {"explained", "method", "steps", "samples_explained", "tokens"},
        "salience_mi": {"explained", "method", "steps"},
        "occlusion": {"explained", "words"},
        "occlusion_mi": {"explained", "words"},
        "edit_histograms": {"explained", "edited_text"},
        "edit_attention": {"layer", "head", "edited_text"},
        "attention": {"layer", "head", "sample", "tokens", "auto_spread"},
        "centroids": {"layer", "head", "sample", "keys"},
        "centroid_usage": {"layer", "head"},
        "head_grid": {"stat", "tokens"},  # last: its name is checked below
    }
    for key, fields in expected.items():
        made.clear(), saved.clear()
        at.selectbox(key=K.EXPORT_FIG).set_value(key)
        at.radio(key=K.EXPORT_FMT).set_value("svg")
        at.button(key=K.EXPORT_RENDER).click().run()
        assert not at.exception, at.exception
        (record,) = made
        assert fields <= set(record)
        assert record["checkpoint"] == "cola-hsto" and record["T"] == 12
        assert list(record)[-1] in ("text", "edited_text")  # the texts last
        name, data = next((n, d) for n, d in saved if n.endswith(f"-{key}.svg"))
        assert "edited" not in name and TEXT.split()[1] not in name  # no free text in names
        for field in fields - {"edited_text"}:
            assert f"{field}_" in name, (key, field, name)
        first = sorted(fields - {"edited_text"})[0]  # the settings inside the file too
        assert f"; {first} = {record[first]}".encode() in data
    assert "stat_std" in name and "tokens_0-" in name
