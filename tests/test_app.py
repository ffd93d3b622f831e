"""AppTest of the single-page app: checkpoints notice and the untrained-model sampling demo."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from viz.figures import unique_labels

APP = str(Path(__file__).resolve().parent.parent / "app.py")


@pytest.fixture()
def at() -> AppTest:
    app = AppTest.from_file(APP, default_timeout=60).run()
    assert not app.exception, app.exception
    return app


def submit(at: AppTest, **changes) -> AppTest:
    """Set form widgets (text, seed, T) and press the form's submit button."""
    if "text" in changes:
        at.text_input[0].set_value(changes["text"])
    if "seed" in changes:
        at.number_input[0].set_value(changes["seed"])
    if "T" in changes:
        at.slider[0].set_value(changes["T"])
    at.get("form_submit_button")[0].click().run()
    assert not at.exception, at.exception
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def histogram_x(at: AppTest) -> list[float]:
    """The histogram's samples; plotly ships numpy arrays base64-encoded (``bdata``)."""
    x = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]["x"]
    if isinstance(x, dict):
        x = np.frombuffer(base64.b64decode(x["bdata"]), dtype=x["dtype"])
    return [float(v) for v in x]


def test_lists_the_shipped_checkpoints_with_their_metrics():
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception
    table = at.dataframe[0].value
    assert "imdb-hsto" in list(table["name"])
    row = table[table["name"] == "imdb-hsto"].iloc[0]
    assert row["status"] in ("evaluated", "not evaluated")


def test_says_how_to_get_checkpoints_when_the_folder_is_empty(tmp_path, monkeypatch):
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(tmp_path))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert any("No trained checkpoints" in i.value for i in at.info)
    assert "python -m uqcore.train" in at.info[0].value


def test_runs_and_shows_the_untrained_demo(at):
    assert any("Untrained model" in w.value for w in at.warning)
    assert not at.get("plotly_chart"), "no figures before the form is submitted"
    assert at.selectbox[0].value == "hsto"


def test_submit_default_text_shows_charts_and_metrics(at):
    submit(at)
    assert not at.error
    charts = at.get("plotly_chart")
    assert len(charts) == 2
    assert len(histogram_x(at)) == 50  # one p(class 1) per sample, T = 50
    heat = json.loads(charts[1].proto.spec)["data"][0]
    assert heat["x"][:2] == ["0:[CLS]", "1:john"]
    m = metrics(at)
    assert set(m) == {
        "p(class 1), mean ± variance",
        "Samples predicting class 1",
        "Predictive entropy",
        "Mutual information",
    }
    assert m["Samples predicting class 1"].endswith("/ 50")


def test_seed_changes_samples_of_a_stochastic_family(at):
    submit(at, seed=0)
    first, x0 = metrics(at), histogram_x(at)
    submit(at, seed=1)
    assert histogram_x(at) != x0
    assert metrics(at) != first
    submit(at, seed=0)  # and the same seed reproduces them
    assert histogram_x(at) == x0


def test_empty_text_shows_an_error_not_a_traceback(at):
    submit(at, text="")
    assert at.error and "empty" in at.error[0].value
    assert not at.get("plotly_chart")


def test_deterministic_family_disables_tau_sliders(at):
    at.selectbox[0].select("trans").run()
    sliders = {s.key: s for s in at.slider if s.key}
    assert sliders["tau1"].disabled and sliders["tau2"].disabled
    assert "only H-STO-TRANS uses tau1" in sliders["tau1"].help
    at.selectbox[0].select("sto").run()
    sliders = {s.key: s for s in at.slider if s.key}
    assert sliders["tau1"].disabled and not sliders["tau2"].disabled
    submit(at)
    assert metrics(at) and not at.exception


def test_unique_labels():
    assert unique_labels(["[CLS]", "the", "the"]) == ["0:[CLS]", "1:the", "2:the"]
