"""The explorer's figures written as plotly JSON (issue 32) look exactly as the validated plotly
builders drew them: the same JSON reaches the browser (viz/reference.py keeps those
builders), and the figure cache keeps one entry per view, bounded by bytes."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from uqlab.workbench import figures
from viz import reference as R

EVIL = "<a href='https://evil.example'>x</a>"


def sent(fig: go.Figure) -> str:
    """What st.plotly_chart sends to the browser for ``fig`` (its to_json of to_dict), with
    the keys sorted: the same text means the same figure."""
    assert isinstance(fig, go.Figure)
    return json.dumps(json.loads(pio.to_json(fig.to_dict(), validate=False)), sort_keys=True)


def same(new: go.Figure, old: go.Figure) -> None:
    a, b = sent(new), sent(old)
    if a != b:  # the first difference, readable
        i = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
        raise AssertionError(
            f"new: ...{a[max(0, i - 150) : i + 150]}\nold: ...{b[max(0, i - 150) : i + 150]}"
        )


def _probs(rng, T, C, centre):
    p = np.clip(rng.normal(centre, 0.05, T), 0.001, 0.999)
    out = rng.dirichlet(np.ones(C), T) * (1 - p)[:, None]
    out[:, 1] += p
    return out / out.sum(1, keepdims=True)


@pytest.mark.parametrize("T", [1, 5, 50, 1000])
@pytest.mark.parametrize("centre", [0.01, 0.5, 0.99])
def test_prediction_histogram(T, centre):
    rng = np.random.default_rng(T)
    for names in (("neg", "pos"), ("a", EVIL, "c")):
        probs = _probs(rng, T, len(names), centre)
        for target, gold in ((1, True), (0, False)):
            same(
                figures.prediction_histogram(probs, names, target, gold),
                R.prediction_histogram(probs, names, target, gold),
            )


@pytest.mark.parametrize("T", [1, 2, 50, 127, 128, 300, 40000])
def test_running_mean(T):
    from uqlab.workbench.compute import running_mean

    p = np.random.default_rng(T).random(T)
    mean, se = running_mean(p)
    for name in ("acceptable", EVIL):
        same(figures.running_mean_figure(mean, se, name), R.running_mean_figure(mean, se, name))


def _tokens(n: int) -> list[str]:
    words = ["[CLS]", "john", "is", "tall", "⟨unk⟩x", "##able", EVIL, "extraordinarily", "."]
    return [words[i % len(words)] for i in range(n)]


@pytest.mark.parametrize("L", [1, 4, 9, 64, 65])
def test_attention_panels(L):
    rng = np.random.default_rng(L)
    maps = rng.dirichlet(np.ones(L), (5, L)).astype(np.float16).astype(np.float32)  # [5, L, L]
    tokens = _tokens(L)
    cases = [
        ({"every sample": maps[0]}, "Attention, layer 5, head 0", 1.0, ()),
        (
            {"sample 3": maps[3], "mean of 5": maps.mean(0), "std of 5": maps.std(0)},
            f"Attention, layer 5, head 11, tokens 0-{L - 1} of {L + 40}",
            None,
            ("std of 5",),
        ),
        (
            {"sample 0": maps[0], "mean of 5": maps.mean(0), "std of 5": maps.std(0)},
            "Attention, layer 0, head 1",
            1.0,
            ("std of 5",),
        ),
        (
            {
                "trained keys (prior)": maps[0],
                "after EM (posterior)": maps[1],
                "difference": np.abs(maps[1] - maps[0]),
            },
            "before and after EM",
            1.0,
            ("difference",),
        ),
        ({"mean": maps.mean(0), EVIL: maps[1]}, f"a {EVIL} title", 1.0, ()),
        ({"mean": np.zeros((L, L)), "std": np.zeros((L, L))}, "all zero", None, ("std",)),
        (  # Compare's four checkpoints: long names wrap at their hyphens
            {name: maps[i] for i, name in enumerate(("cola-minilm-mcdropout", "b", "c-d", EVIL))},
            "Layer 5, head 0: mean attention",
            1.0,
            (),
        ),
    ]
    for panels, title, zmax, own in cases:
        for own_zmax in (None, figures.STD_MAX) if own else (None,):
            same(
                figures.attention_panels(
                    panels, tokens, title, zmax=zmax, own_scale=own, own_zmax=own_zmax
                ),
                R.attention_panels(
                    panels, tokens, title, zmax=zmax, own_scale=own, own_zmax=own_zmax
                ),
            )


def test_the_std_panel_has_a_fixed_scale_unless_asked_to_scale_itself():
    """Issue 34: a spread of 0.004 looked as dark as one of 0.3 (each std map was scaled to its
    own largest value). The std panel's colours now run from 0 to STD_MAX = 0.5 (the largest
    standard deviation of a weight in [0, 1]), its data the std values themselves."""
    rng = np.random.default_rng(0)
    tokens = _tokens(6)
    intensity = {}
    for spread in (0.3, 0.004):
        maps = np.clip(1 / 6 + spread * rng.standard_normal((20, 6, 6)), 0, 1)  # [T, L, L]
        std = maps.std(0)
        panels = {"sample 0": maps[0], "mean of 20": maps.mean(0), "std of 20": std}
        spec = figures.attention_panels.spec(
            panels, tokens, "t", own_scale=("std of 20",), own_zmax=0.5
        )
        trace = spec["data"][2]
        assert trace["coloraxis"] == "coloraxis2" and np.array_equal(trace["z"], std)
        assert spec["layout"]["coloraxis2"]["cmax"] == figures.STD_MAX == 0.5
        intensity[spread] = float(np.mean(trace["z"]) / spec["layout"]["coloraxis2"]["cmax"])
        auto = figures.attention_panels.spec(panels, tokens, "t", own_scale=("std of 20",))
        assert auto["layout"]["coloraxis2"]["cmax"] == pytest.approx(std.max())
    assert intensity[0.3] > 20 * intensity[0.004]  # more disagreement is darker


def test_long_panel_names_wrap_under_a_title_that_does_not_reach_them():
    """Issue 34: Compare's four checkpoint names ran into each other on a phone, and a wrapped
    title grew down into them (plotly centres a title in the top margin)."""
    from uqlab.workbench.titles import PANEL_NAME_CHARS, TITLE_PAD

    names = ("cola-minilm-mcdropout", "cola-minilm-ensemble", "cola-bayesformer", "cola-sto")
    panels = {n: np.eye(3) for n in names}
    spec = figures.attention_panels.spec(panels, ["a", "b", "c"], "Layer 5, head 0: mean attention")
    texts = [a["text"] for a in spec["layout"]["annotations"]]
    assert PANEL_NAME_CHARS // 4 == 10  # a phone's share of four panels, in characters
    assert texts == [  # at most 10 a line, a longer piece alone on its line
        "cola-<br>minilm-<br>mcdropout",
        "cola-<br>minilm-<br>ensemble",
        "cola-<br>bayesformer",
        "cola-sto",
    ]
    title, margin = spec["layout"]["title"], spec["layout"]["margin"]
    lines = title["text"].count("<br>") + 1
    assert title["yanchor"] == "top" and title["yref"] == "container"
    # the title's lines (20 px each) end above three lines of names (16 px each)
    assert margin["t"] >= TITLE_PAD + 20 * lines + 3 * 16


def test_attention_panels_check_their_shape():
    with pytest.raises(ValueError, match="maps must be"):
        figures.attention_panels({"a": np.eye(3)}, ["x", "y"], "t")


@pytest.mark.parametrize(("L", "c"), [(1, 2), (9, 4), (30, 16), (70, 4)])
def test_centroid_panels(L, c):
    rng = np.random.default_rng(L * c)
    p = rng.dirichlet(np.ones(c), (6, L)).astype(np.float16).astype(np.float32)  # [6, L, c]
    hits = np.eye(c)[p.argmax(-1)].mean(0)
    for t in (0, 5):
        same(
            figures.centroid_panels(p[t], hits, _tokens(L), t),
            R.centroid_panels(p[t], hits, _tokens(L), t),
        )


def test_bar_figure():
    rng = np.random.default_rng(0)
    for values in (
        rng.random(4).astype(np.float32),
        rng.random(12),
        [0.2, 0.8],
        [1, 2],
        np.array([3, 4], dtype=np.int64),
    ):
        labels = [f"head {h}" for h in range(len(values))]
        for title in ("Short", "Centroid usage (mean weight over tokens and samples)", EVIL):
            same(
                figures.bar_figure(values, labels, title, "nats per (query, key) pair"),
                R.bar_figure(values, labels, title, "nats per (query, key) pair"),
            )


@pytest.mark.parametrize(("L", "S"), [(1, 1), (9, 5), (70, 3)])
def test_prior_posterior(L, S):
    rng = np.random.default_rng(L)
    prior = rng.dirichlet(np.ones(L)).astype(np.float32)
    mean = rng.dirichlet(np.ones(L)).astype(np.float32)
    samples = rng.dirichlet(np.ones(L), S).astype(np.float32)
    tokens = _tokens(L)
    for query in (tokens[0], EVIL):
        same(
            figures.prior_posterior_figure(prior, mean, samples, tokens, query),
            R.prior_posterior_figure(prior, mean, samples, tokens, query),
        )


def test_a_spec_is_the_figure_and_never_shared_with_it():
    """``builder.spec`` is the JSON the figure is made of; changing the figure leaves it."""
    spec = figures.bar_figure.spec([0.1, 0.9], ["a", "b"], "t", "y")
    before = json.dumps(spec, sort_keys=True, default=str)
    fig = figures.bar_figure([0.1, 0.9], ["a", "b"], "t", "y")
    assert sent(fig) == sent(go.Figure(spec))
    fig.update_layout(title_text="changed")
    fig.data[0].marker.color = "red"
    assert json.dumps(spec, sort_keys=True, default=str) == before


def test_the_sweeps_panel_titles_are_whole_and_fit_half_a_phone():
    """Defect: the sweep's right panel title read "mean mutual informatior" (cut at the edge)."""
    import pandas as pd

    from uqlab.workbench.figures import sweep_figure
    from uqlab.workbench.titles import PANEL_TITLE_CHARS

    table = pd.DataFrame(
        {
            "tau": [1.0, 10.0] * 2,
            "accuracy": [0.7, 0.6, 0.6, 0.5],
            "mi": [0.1, 0.0, 0.2, 0.1],
            "domain": ["in-domain"] * 2 + ["out-of-domain"] * 2,
        }
    )
    fig = sweep_figure(table, "tau2")
    texts = [a.text for a in fig.layout.annotations]
    assert [t.replace("<br>", " ") for t in texts] == ["accuracy", "mean mutual information"]
    font = fig.layout.annotations[1].font.size
    for line in texts[1].split("<br>"):  # half a phone's plot is about 150 px wide
        assert len(line) <= PANEL_TITLE_CHARS and 0.6 * font * len(line) <= 150, line
    title_lines = fig.layout.title.text.count("<br>") + 1  # the title sits above both lines
    assert fig.layout.margin.t >= 20 * title_lines + 20 * len(texts[1].split("<br>")) + 20


def test_the_sweep_draws_a_visitors_file_and_its_out_of_domain_file():
    """Defect: the sweep drew only the bundled domains' names, so a visitor's file ("your
    file") gave an empty figure."""
    import pandas as pd

    from uqlab.workbench.figures import sweep_figure

    table = pd.DataFrame(
        {
            "tau": [1.0, 10.0] * 2,
            "accuracy": [0.7, 0.6, 0.6, 0.5],
            "mi": [0.1, 0.0, 0.2, 0.1],
            "domain": ["out-of-domain"] * 2 + ["your file"] * 2,
        }
    )
    fig = sweep_figure(table, "tau2")
    drawn = [(t.name, list(t.y)) for t in fig.data if t.showlegend is not False]
    assert drawn == [("your file", [0.6, 0.5]), ("out-of-domain", [0.7, 0.6])]


def test_attention_panels_scale_past_hidden_cells():
    m = np.array([[1.0, np.nan], [0.3, 0.7]])
    spec = figures.attention_panels.spec(
        {"mean": m, "std": m / 10}, ["a", "b"], "t", zmax=None, own_scale=("std",)
    )
    assert spec["layout"]["coloraxis"]["cmax"] == 1.0
    assert spec["layout"]["coloraxis2"]["cmax"] == 0.1


@pytest.mark.parametrize("own", [False, True])
def test_colour_bars_span_the_panel_with_few_level_ticks(own):
    """Issue 45: the bars were 0.42 of a panel (about 25 px on screen) with plotly's own ticks,
    rotated and printed over each other. A lone bar is BAR_PX long whatever the plot's width
    (a panel's plot is about 64 px at 1024 px); two bars in one figure take half the plot's
    width each, side by side; three ticks, level, from 0 to the scale's top."""
    tokens = _tokens(5)
    m = np.full((5, 5), 0.2)
    panels = {"mean of 4": m, "std of 4": m / 10} if own else {"mean of 4": m}
    spec = figures.attention_panels.spec(panels, tokens, "t", own_scale=("std of 4",), own_zmax=0.5)
    bars = [spec["layout"]["coloraxis"]["colorbar"]]
    if own:
        bars.append(spec["layout"]["coloraxis2"]["colorbar"])
    for bar, top in zip(bars, (1.0, 0.5), strict=False):
        assert bar["orientation"] == "h" and bar["tickangle"] == 0
        assert bar["tickvals"] == [0.0, top / 2, top] and bar["ticktext"][0] == "0"
        assert bar["len"] == (0.46 if own else figures.BAR_PX) >= 0.46
        assert bar.get("lenmode", "fraction") == ("fraction" if own else "pixels")
    if own:  # side by side, not over each other
        left, right = bars
        assert left["x"] + left["len"] / 2 <= right["x"] - right["len"] / 2
    alone = figures.attention_panels.spec(
        {"std of 4": m / 10}, tokens, "t", own_scale=("std of 4",), own_zmax=0.5
    )
    bar = alone["layout"]["coloraxis2"]["colorbar"]  # the explorer's std figure: one panel
    assert (bar["lenmode"], bar["len"], bar["xanchor"]) == ("pixels", figures.BAR_PX, "right")
    assert bar["ticktext"] == ["0", "0.25", "0.5"]
