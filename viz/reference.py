"""The explorer's figure builders as they were before issue 32 (plotly's validated API:
``go.Figure``, ``px.imshow``, ``update_*``), kept as the reference that the dict builders of
:mod:`uqlab.workbench.figures` must match exactly (tests/uqlab/workbench/test_figures.py, a golden
test): the same JSON reaches the browser, so every figure looks the same. No page uses them;
``python -m tools.bench_visit`` times them as the "before" of its table."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.express as px
import plotly.graph_objects as go

from uqlab.workbench.figures import _BLUE, _CLASS_COLORS, _MARGIN, _RED, _flat_bar, unique_labels
from uqlab.workbench.titles import PANEL_NAME_CHARS, phone_titles, top_title, wrap_name


@phone_titles
def prediction_histogram(
    probs: np.ndarray, names: Sequence[str], target: int, gold: bool
) -> go.Figure:
    """Histogram of ``p_t(target)`` over the samples of ``probs [T, C]``, each sample coloured
    by the class it predicts; the mean is a dashed line. ``gold``: ``target`` is the gold label
    (else the predicted class)."""
    probs = np.asarray(probs, dtype=float)  # [T, C]
    p = probs[:, target]  # [T]
    pred = probs.argmax(1)  # [T]
    fig = go.Figure()
    for c, name in enumerate(names):
        sel = p[pred == c]
        fig.add_trace(
            go.Histogram(
                x=sel,
                name=f"predicts {name} ({sel.size})",
                marker_color=_CLASS_COLORS[c % 4],
                xbins={"start": 0.0, "end": 1.0 + 1e-9, "size": 0.025},
                marker_line_width=0,
            )
        )
    mean = float(p.mean())
    side = "top left" if mean > 0.8 else "top right" if mean < 0.2 else "top"  # text stays in
    fig.add_vline(
        x=mean,
        line_dash="dash",
        line_color="#1a1d24",
        annotation_text=f"mean {mean:.3f}",
        annotation_position=side,
    )
    role = "gold" if gold else "predicted"
    fig.update_layout(
        barmode="stack",
        title=f"p({names[target]}) per sample ({role} class), T = {p.size}",
        xaxis_title=f"p({names[target]})",
        yaxis_title="samples",
        xaxis_range=[0, 1],
        legend={"orientation": "h", "y": -0.25},
        margin=_MARGIN,
        height=380,
    )
    return fig


@phone_titles
def running_mean_figure(mean: np.ndarray, se: np.ndarray, name: str) -> go.Figure:
    """The running mean of ``p(name)`` after 1..T samples with a ±2 standard-error band."""
    t = np.arange(1, mean.size + 1)
    fig = go.Figure(
        [
            go.Scatter(
                x=np.r_[t, t[::-1]],
                y=np.r_[mean + 2 * se, (mean - 2 * se)[::-1]],
                fill="toself",
                fillcolor="rgba(31,95,191,0.15)",
                line={"width": 0},
                name="±2 standard errors",
                hoverinfo="skip",
            ),
            go.Scatter(x=t, y=mean, line={"color": _BLUE}, name="running mean"),
        ]
    )
    fig.update_layout(
        title=f"Running mean of p({name}) as samples accumulate",
        xaxis_title="samples drawn",
        yaxis_title=f"mean p({name})",
        yaxis_range=[0, 1],
        margin=_MARGIN,
        height=380,
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


@phone_titles
def attention_panels(
    panels: dict[str, np.ndarray],
    tokens: Sequence[str],
    title: str,
    zmax: float | None = 1.0,
    own_scale: Sequence[str] = (),
    own_zmax: float | None = None,
) -> go.Figure:
    """Side-by-side heat maps (one faceted figure) of ``[L, L]`` matrices, e.g. one sample,
    the mean and the standard deviation over samples. Rows = queries, columns = keys.

    Attention weights share one colour scale fixed to ``[0, zmax]`` (1 by default: a uniform
    row looks pale and a one-hot row dark, on every figure alike; None = up to the largest
    value shown). The panels named in ``own_scale`` (a standard deviation, a difference) get a
    second scale of their own, from 0 to ``own_zmax``, or to their largest value when it is
    None (issue 34: the fixed scale and the wrapped names and top title were added to both)."""
    names = list(panels)
    stack = np.stack([np.asarray(panels[n], dtype=float) for n in names])  # [P, L, L]
    if stack.shape[1:] != (len(tokens), len(tokens)):
        raise ValueError(f"maps must be [L, L] with L = {len(tokens)}, got {stack.shape[1:]}.")
    labels = unique_labels(tokens)
    shared = [i for i, n in enumerate(names) if n not in own_scale]
    top = zmax if zmax is not None else float(stack[shared].max(initial=0.0) or 1.0)
    fig = px.imshow(
        stack,
        x=labels,
        y=labels,
        facet_col=0,
        facet_col_spacing=0.04,
        zmin=0.0,
        zmax=top,
        color_continuous_scale="Blues",
        aspect="auto",
        labels={"x": "key (attended to)", "y": "query", "color": "weight"},
    )
    width = max(8, PANEL_NAME_CHARS // len(names))
    shown = [wrap_name(name, width) for name in names]
    for i, name in enumerate(shown):
        fig.layout.annotations[i].text = name
    head, top_px = top_title(title, max(n.count("<br>") + 1 for n in shown))
    fig.update_traces(hovertemplate="query %{y}<br>key %{x}<br>%{z:.3f}<extra></extra>")
    own = [i for i, n in enumerate(names) if n in own_scale]
    # colour bars lie flat under the panels, below the key labels and the axis title, so they
    # never overlap each other or a panel however narrow the screen (a phone gives each panel
    # about 100 px); the room below the plot is measured in pixels from the longest label
    labels_px = 14 + 5 * max(len(x) for x in labels) if len(tokens) <= 64 else 10
    below = labels_px + 28  # tick labels (at -45 degrees) and the axis title
    height = max(480, min(980, 280 + 18 * len(tokens))) + top_px - _MARGIN["t"]
    plot_px = height - top_px - (below + 70)
    two = bool(own and shared)  # issue 45: bars of the plot's width, three level ticks
    span = 0.46 if two else None
    fig.update_layout(
        coloraxis_colorbar=_flat_bar("weight", 0.25 if two else 0.5, below, plot_px, top, span)
    )
    if own:
        for i in own:
            fig.data[i].coloraxis = "coloraxis2"
        label = "/".join(names[i] for i in own)[:16]
        own_top = own_zmax if own_zmax is not None else float(stack[own].max() or 1.0)
        fig.update_layout(
            coloraxis2={
                "colorscale": "Oranges",
                "cmin": 0.0,
                "cmax": own_top,
                "colorbar": _flat_bar(label, 0.75 if two else 0.5, below, plot_px, own_top, span),
            }
        )
    for annotation in fig.layout.annotations:  # the panels' names
        annotation.font = {"size": 12}
    fig.update_xaxes(tickangle=-45, showticklabels=len(tokens) <= 64, title_text="")
    fig.update_yaxes(showticklabels=len(tokens) <= 64)
    fig.layout["xaxis"].title.text = "key (attended to)"  # once, under the first panel
    for i in range(2, len(names) + 1):  # token labels once, on the first panel
        fig.layout[f"yaxis{i}"].showticklabels = False
        fig.layout[f"yaxis{i}"].title.text = ""
    fig.update_layout(title=head, margin={**_MARGIN, "t": top_px, "b": below + 70}, height=height)
    return fig


@phone_titles
def centroid_panels(
    sample: np.ndarray, frequency: np.ndarray, tokens: Sequence[str], t: int
) -> go.Figure:
    """Token x centroid weights of one sample beside how often each token's largest weight
    falls on each centroid across the samples. Both ``[L, c]``."""
    c = sample.shape[1]
    stack = np.stack([np.asarray(sample, float), np.asarray(frequency, float)])  # [2, L, c]
    fig = px.imshow(
        stack,
        x=[f"centroid {j}" for j in range(c)],
        y=unique_labels(tokens),
        facet_col=0,
        facet_col_spacing=0.08,
        zmin=0.0,
        zmax=1.0,
        color_continuous_scale="Purples",
        aspect="auto",
        labels={"x": "centroid", "y": "token", "color": "weight"},
    )
    fig.layout.annotations[0].text = f"P, sample {t}"  # short: a phone gives each ~100 px;
    # the page's caption says what P is (the keys' centroid assignment probabilities)
    fig.layout.annotations[1].text = "across samples"
    for annotation in fig.layout.annotations:
        annotation.font = {"size": 12}
    fig.update_traces(hovertemplate="%{y}<br>%{x}<br>%{z:.3f}<extra></extra>")
    fig.update_xaxes(tickangle=-45, title_text="")
    fig.update_yaxes(showticklabels=len(tokens) <= 64)
    fig.layout["xaxis"].title.text = "centroid"  # once, under the first panel
    fig.layout["yaxis2"].showticklabels = False
    fig.layout["yaxis2"].title.text = ""
    below = 14 + 5 * len(f"centroid {c - 1}") + 28  # rotated labels and the axis title
    height = max(420, min(960, 220 + 18 * len(tokens)))
    fig.update_layout(
        coloraxis_colorbar=_flat_bar("weight", 0.5, below, height - _MARGIN["t"] - below - 70, 1.0),
        margin={**_MARGIN, "b": below + 70},
        height=height,
        title="Centroid assignments of the keys",
    )
    return fig


@phone_titles
def bar_figure(values: Sequence[float], labels: Sequence[str], title: str, axis: str) -> go.Figure:
    fig = go.Figure(go.Bar(x=list(labels), y=list(values), marker_color=_BLUE))
    fig.update_layout(title=title, yaxis_title=axis, margin=_MARGIN, height=320)
    return fig


@phone_titles
def prior_posterior_figure(
    prior: np.ndarray, mean: np.ndarray, samples: np.ndarray, tokens: Sequence[str], query: str
) -> go.Figure:
    """BAM, one query row over the keys: the contextual prior ``prior [L]``, the posterior mean
    ``mean [L]`` and a few posterior samples ``samples [S, L]``."""
    labels = unique_labels(tokens)
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=prior, name="prior π (keys only)", marker_color="#e09f3e"))
    fig.add_trace(go.Bar(x=labels, y=mean, name="posterior mean", marker_color=_BLUE))
    for i, row in enumerate(samples):  # one legend entry for all of them
        fig.add_trace(
            go.Scatter(
                x=labels,
                y=row,
                mode="markers",
                legendgroup="samples",
                name=f"posterior samples 0-{len(samples) - 1}",
                hovertemplate=f"sample {i}: %{{y:.3f}}<extra></extra>",
                marker={"color": _RED, "size": 6, "opacity": 0.6},
                showlegend=i == 0,
            )
        )
    fig.update_layout(
        barmode="group",
        title=f"Prior vs posterior attention of query {query}",
        yaxis_title="attention weight",
        margin=_MARGIN,
        height=380,
        legend={"orientation": "h", "y": -0.3},
    )
    fig.update_xaxes(tickangle=-45, showticklabels=len(tokens) <= 64)
    return fig
