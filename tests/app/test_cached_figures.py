"""The explorer's figures are cached across sessions (issue 32): one link opened by thirty
visitors builds each figure once; a different result, setting or view choice is another
figure; the cache is bounded by bytes."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import chart_titles, open_link
from ui import cached, explore_views
from ui.logic import keys as K
from uqlab.workbench.compute import ExploreResult

LINK = {
    "ckpt": "cola-hsto",
    "text": "John is tall on several occasions.",
    "label": "0",
    "T": "20",
    "seed": "1",
}


@pytest.fixture(autouse=True)
def _fresh_cache():
    cached.figures().clear()
    yield
    cached.figures().clear()


def _result(key) -> ExploreResult:
    return ExploreResult(
        probs=np.full((4, 2), 0.5),
        tokens=["a"],
        unknown=[False],
        n_used=1,
        n_dropped=0,
        captured=4,
        maps={},
        members=None,
        probs_before_em=None,
        stochastic=True,
        settings=None,
        seconds=0.0,
        key=key,
    )


def _counting():
    calls = []

    def build():
        calls.append(1)
        return {"data": [], "layout": {"title": {"text": f"figure {len(calls)}"}}}

    return build, calls


def test_a_figure_is_built_once_per_result_figure_and_choice():
    build, calls = _counting()
    res = _result(("cola-hsto", "/ck", "v1", "text", 50, 1, (), None))
    first = explore_views.figure(res, "attention", (5, 0, 0), build)
    assert explore_views.figure(res, "attention", (5, 0, 0), build) is first and len(calls) == 1
    explore_views.figure(res, "attention", (5, 1, 0), build)  # another head
    explore_views.figure(res, "centroids", (5, 0, 0), build)  # another figure, the same choices
    other_seed = _result(("cola-hsto", "/ck", "v1", "text", 50, 2, (), None))
    explore_views.figure(other_seed, "attention", (5, 0, 0), build)
    new_files = _result(("cola-hsto", "/ck", "v2", "text", 50, 1, (), None))
    explore_views.figure(new_files, "attention", (5, 0, 0), build)
    assert len(calls) == 5 and len(cached.figures().keys()) == 5


def test_a_result_without_a_key_is_never_cached():
    build, calls = _counting()
    res = _result(None)
    explore_views.figure(res, "histogram", (), build)
    explore_views.figure(res, "histogram", (), build)
    assert len(calls) == 2 and not cached.figures().keys()


def test_the_cache_is_bounded_by_bytes(monkeypatch):
    store = cached.figures()
    assert store.budget == cached.FIGURE_BYTES
    monkeypatch.setattr(store, "budget", 300_000)
    res = _result(("k",))
    for i in range(10):  # 10 figures of ~80 kB each
        explore_views.figure(
            res, "attention", (i,), lambda: {"data": [{"z": np.zeros((100, 100))}]}
        )
    assert store.bytes <= 300_000
    kept = [k[-1] for k in store.keys()]
    assert 0 < len(kept) < 10 and kept == list(range(10 - len(kept), 10))  # the newest stay


def _specs(at: AppTest) -> dict[str, str]:
    """Each chart's plotly JSON as sent, by its widget key."""
    return {chart.key: chart.proto.spec for chart in at.get("plotly_chart")}


@pytest.mark.usefixtures("app_checkpoints")
def test_a_link_opened_again_builds_no_figure_and_shows_the_same(monkeypatch):
    from uqlab.workbench import figures

    first = open_link(**LINK)
    shown = _specs(first)
    assert len(shown) >= 4  # histogram, running mean, attention, centroids, usage
    n = len(cached.figures().keys())
    assert n == len(first.get("plotly_chart")) - 2  # the attention view: three panels, one entry
    built = []
    for name in (
        "prediction_histogram",
        "running_mean_figure",
        "attention_panels",
        "centroid_panels",
        "bar_figure",
    ):
        builder = getattr(figures, name)

        def spy(*args, _spec=builder.spec, **kwargs):
            built.append(1)
            return _spec(*args, **kwargs)

        monkeypatch.setattr(builder, "spec", spy)
    again = open_link(**LINK)  # another session
    assert not built and _specs(again) == shown
    figs = again.session_state[K.FIGURES]  # the export panel's figures: the session's own
    assert all(isinstance(f, go.Figure) for f in figs.values())
    assert len(figs) == len(shown)
    reseeded = open_link(**{**LINK, "seed": "2"})
    assert built and len(cached.figures().keys()) == 2 * n
    hist = K.FIGURE_PREFIX + "histogram"
    assert _specs(reseeded)[hist] != shown[hist]  # another seed: other samples


@pytest.mark.usefixtures("app_checkpoints")
def test_another_layer_is_another_figure():
    at = open_link(**LINK)
    before = {t for t in chart_titles(at) if t.startswith("Attention")}
    at.selectbox(key=K.ATT_LAYER).set_value(0).run()
    after = {t for t in chart_titles(at) if t.startswith("Attention")}
    assert before != after and any("layer 0" in t for t in after)
