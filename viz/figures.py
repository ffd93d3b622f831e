"""Plotly figures of sampled predictions and attention maps. Pure functions of numpy arrays."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.express as px
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from uqlab.tasks import DOMAINS
from viz.titles import PANEL_TITLE_CHARS, TITLE_FONT, phone_titles, wrap_title

_BLUE = "#1f5fbf"  # the theme's primaryColor (.streamlit/config.toml)
_RED = "#d1495b"
_CLASS_COLORS = ("#d1495b", "#1f5fbf", "#2e8b57", "#e09f3e")
_MARGIN = {"l": 10, "r": 10, "t": 60, "b": 10}


def unique_labels(tokens: Sequence[str]) -> list[str]:
    """Position-prefixed token labels (``"0:[CLS]"``, ``"1:john"``, ...), unique even when a word
    repeats, so plotly does not merge the rows and columns of equal words."""
    return [f"{i}:{tok}" for i, tok in enumerate(tokens)]


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
        fig.add_trace(go.Histogram(
            x=sel, name=f"predicts {name} ({sel.size})", marker_color=_CLASS_COLORS[c % 4],
            xbins={"start": 0.0, "end": 1.0 + 1e-9, "size": 0.025}, marker_line_width=0,
        ))  # fmt: skip
    mean = float(p.mean())
    side = "top left" if mean > 0.8 else "top right" if mean < 0.2 else "top"  # text stays in
    fig.add_vline(x=mean, line_dash="dash", line_color="#1a1d24",
                  annotation_text=f"mean {mean:.3f}", annotation_position=side)  # fmt: skip
    role = "gold" if gold else "predicted"
    fig.update_layout(
        barmode="stack", title=f"p({names[target]}) per sample ({role} class), T = {p.size}",
        xaxis_title=f"p({names[target]})", yaxis_title="samples", xaxis_range=[0, 1],
        legend={"orientation": "h", "y": -0.25}, margin=_MARGIN, height=380,
    )  # fmt: skip
    return fig


@phone_titles
def running_mean_figure(mean: np.ndarray, se: np.ndarray, name: str) -> go.Figure:
    """The running mean of ``p(name)`` after 1..T samples with a ±2 standard-error band."""
    t = np.arange(1, mean.size + 1)
    fig = go.Figure([
        go.Scatter(x=np.r_[t, t[::-1]], y=np.r_[mean + 2 * se, (mean - 2 * se)[::-1]],
                   fill="toself", fillcolor="rgba(31,95,191,0.15)", line={"width": 0},
                   name="±2 standard errors", hoverinfo="skip"),
        go.Scatter(x=t, y=mean, line={"color": _BLUE}, name="running mean"),
    ])  # fmt: skip
    fig.update_layout(
        title=f"Running mean of p({name}) as samples accumulate", xaxis_title="samples drawn",
        yaxis_title=f"mean p({name})", yaxis_range=[0, 1], margin=_MARGIN, height=380,
        legend={"orientation": "h", "y": -0.25},
    )  # fmt: skip
    return fig


def _flat_bar(title: str, x: float, below_px: float, plot_px: float) -> dict:
    """A colour bar lying flat ``below_px`` under a plot area ``plot_px`` high, centred at
    ``x``: panels keep the full width, and two bars never overlap however narrow the screen."""
    return {"orientation": "h", "x": x, "y": -below_px / plot_px, "yanchor": "top",
            "thickness": 12, "len": 0.42, "title": {"text": title, "side": "top"}}  # fmt: skip


@phone_titles
def attention_panels(
    panels: dict[str, np.ndarray], tokens: Sequence[str], title: str, zmax: float | None = 1.0,
    own_scale: Sequence[str] = (),
) -> go.Figure:  # fmt: skip
    """Side-by-side heat maps (one faceted figure) of ``[L, L]`` matrices, e.g. one sample,
    the mean and the standard deviation over samples. Rows = queries, columns = keys.

    Attention weights share one colour scale fixed to ``[0, zmax]`` (1 by default: a uniform
    row looks pale and a one-hot row dark, on every figure alike; None = up to the largest
    value shown). The panels named in ``own_scale`` (a standard deviation, a difference) get a
    second scale of their own, from 0 to their largest value."""
    names = list(panels)
    stack = np.stack([np.asarray(panels[n], dtype=float) for n in names])  # [P, L, L]
    if stack.shape[1:] != (len(tokens), len(tokens)):
        raise ValueError(f"maps must be [L, L] with L = {len(tokens)}, got {stack.shape[1:]}.")
    labels = unique_labels(tokens)
    shared = [i for i, n in enumerate(names) if n not in own_scale]
    top = zmax if zmax is not None else float(stack[shared].max(initial=0.0) or 1.0)
    fig = px.imshow(
        stack, x=labels, y=labels, facet_col=0, facet_col_spacing=0.04, zmin=0.0, zmax=top,
        color_continuous_scale="Blues", aspect="auto",
        labels={"x": "key (attended to)", "y": "query", "color": "weight"},
    )  # fmt: skip
    for i, name in enumerate(names):
        fig.layout.annotations[i].text = name
    fig.update_traces(hovertemplate="query %{y}<br>key %{x}<br>%{z:.3f}<extra></extra>")
    own = [i for i, n in enumerate(names) if n in own_scale]
    # colour bars lie flat under the panels, below the key labels and the axis title, so they
    # never overlap each other or a panel however narrow the screen (a phone gives each panel
    # about 100 px); the room below the plot is measured in pixels from the longest label
    labels_px = 14 + 5 * max(len(x) for x in labels) if len(tokens) <= 64 else 10
    below = labels_px + 28  # tick labels (at -45 degrees) and the axis title
    height = max(480, min(980, 280 + 18 * len(tokens)))
    plot_px = height - _MARGIN["t"] - (below + 70)
    fig.update_layout(coloraxis_colorbar=_flat_bar("weight", 0.22 if own else 0.5, below,
                                                   plot_px))  # fmt: skip
    if own:
        for i in own:
            fig.data[i].coloraxis = "coloraxis2"
        label = "/".join(names[i] for i in own)[:16]
        fig.update_layout(coloraxis2={
            "colorscale": "Oranges", "cmin": 0.0, "cmax": float(stack[own].max() or 1.0),
            "colorbar": _flat_bar(label, 0.78, below, plot_px),
        })  # fmt: skip
    for annotation in fig.layout.annotations:  # the panels' names
        annotation.font = {"size": 12}
    fig.update_xaxes(tickangle=-45, showticklabels=len(tokens) <= 64, title_text="")
    fig.update_yaxes(showticklabels=len(tokens) <= 64)
    fig.layout["xaxis"].title.text = "key (attended to)"  # once, under the first panel
    for i in range(2, len(names) + 1):  # token labels once, on the first panel
        fig.layout[f"yaxis{i}"].showticklabels = False
        fig.layout[f"yaxis{i}"].title.text = ""
    fig.update_layout(title=title, margin={**_MARGIN, "b": below + 70}, height=height)
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
        stack, x=[f"centroid {j}" for j in range(c)], y=unique_labels(tokens), facet_col=0,
        facet_col_spacing=0.08, zmin=0.0, zmax=1.0, color_continuous_scale="Purples",
        aspect="auto", labels={"x": "centroid", "y": "token", "color": "weight"},
    )  # fmt: skip
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
    fig.update_layout(coloraxis_colorbar=_flat_bar("weight", 0.5, below,
                                                   height - _MARGIN["t"] - below - 70),
                      margin={**_MARGIN, "b": below + 70}, height=height,
                      title="Centroid assignments of the keys")  # fmt: skip
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
        fig.add_trace(go.Scatter(x=labels, y=row, mode="markers", legendgroup="samples",
                                 name=f"posterior samples 0-{len(samples) - 1}",
                                 hovertemplate=f"sample {i}: %{{y:.3f}}<extra></extra>",
                                 marker={"color": _RED, "size": 6, "opacity": 0.6},
                                 showlegend=i == 0))  # fmt: skip
    fig.update_layout(barmode="group", title=f"Prior vs posterior attention of query {query}",
                      yaxis_title="attention weight", margin=_MARGIN, height=380,
                      legend={"orientation": "h", "y": -0.3})  # fmt: skip
    fig.update_xaxes(tickangle=-45, showticklabels=len(tokens) <= 64)
    return fig


@phone_titles
def reliability_figure(curves: dict) -> go.Figure:
    """Reliability diagram: per checkpoint, accuracy against mean confidence of each non-empty
    bin (``curves``: name -> uqcore.stats.ReliabilityData); the diagonal is perfect calibration."""
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration",
                               line={"dash": "dot", "color": "#888"}))  # fmt: skip
    for i, (name, rd) in enumerate(curves.items()):
        keep = rd.count > 0
        fig.add_trace(go.Scatter(
            x=rd.confidence[keep], y=rd.accuracy[keep], mode="lines+markers", name=name,
            marker={"size": 4 + 10 * np.sqrt(rd.count[keep] / rd.count.max())},
            line={"color": _CLASS_COLORS[(i + 1) % 4] if i < 4 else None},
            customdata=rd.count[keep], hovertemplate="confidence %{x:.2f}<br>accuracy %{y:.2f}"
            "<br>%{customdata} examples<extra></extra>",
        ))  # fmt: skip
    fig.update_layout(title="Reliability diagram (in-domain, 15 bins; marker size = examples)",
                      xaxis_title="mean confidence (max probability)", yaxis_title="accuracy",
                      xaxis_range=[0.45, 1.0], yaxis_range=[0, 1.02], margin=_MARGIN,
                      height=420, legend={"orientation": "h", "y": -0.25})  # fmt: skip
    return fig


@phone_titles
def risk_coverage_figure(curves: dict) -> go.Figure:
    """Risk (error rate) against coverage when only the most confident examples are kept, one
    line per checkpoint (``curves``: name -> ui.dataset.risk_coverage), with the oracle and the
    random selection of the first checkpoint dotted; the legend gives each AURC."""
    fig = go.Figure()
    for i, (name, c) in enumerate(curves.items()):
        fig.add_trace(go.Scatter(x=c["coverage"], y=c["risk"], mode="lines",
                                 name=f"{name} (AURC {c['aurc']:.3f})",
                                 line={"color": _CLASS_COLORS[(i + 1) % 4]}))  # fmt: skip
    if curves:
        first = next(iter(curves.values()))
        for key, dash in (("oracle", "dot"), ("random", "dash")):
            fig.add_trace(go.Scatter(x=first["coverage"], y=first[key], mode="lines",
                                     name=f"{key} ({next(iter(curves))})",
                                     line={"color": "#888", "dash": dash}))  # fmt: skip
    fig.update_layout(title="Risk-coverage (in-domain): keep the most confident first",
                      xaxis_title="coverage (share of examples answered)",
                      yaxis_title="risk (error rate among them)", xaxis_range=[0, 1],
                      margin=_MARGIN, height=380,
                      legend={"orientation": "h", "y": -0.3})  # fmt: skip
    return fig


@phone_titles
def roc_figure(curves: dict, score: str) -> go.Figure:
    """ROC curves of OOD detection (OOD = positive); ``curves``: name -> dict with fpr, tpr,
    auroc."""
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance",
                               line={"dash": "dot", "color": "#888"}))  # fmt: skip
    for name, c in curves.items():
        fig.add_trace(go.Scatter(x=c["fpr"], y=c["tpr"], mode="lines",
                                 name=f"{name} (AUROC {c['auroc']:.3f})"))  # fmt: skip
    fig.update_layout(
        title=f"Out-of-domain detection by {score}",
        xaxis_title="false positive rate (in-domain flagged)",  # fits under a half-width plot
        yaxis_title="TPR (OOD flagged)",  # the full words were cut beside a half-width plot
        margin=_MARGIN,
        height=420,
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


@phone_titles
def domain_histograms(values: dict, label: str, title: str) -> go.Figure:
    """Overlaid, normalised histograms of one uncertainty score per domain
    (``values``: domain -> 1-D array)."""
    fig = go.Figure()
    every = np.concatenate([np.asarray(v, float) for v in values.values()] or [np.zeros(1)])
    top = float(every.max(initial=0.0))
    # bins from 0 to the largest value; all zeros (a deterministic model) gives one thin bar at
    # 0 instead of plotly's default block from -0.5 to 0.5
    bins = {"start": 0.0, "end": top * 1.0001 if top > 0 else 1e-9, "size": top / 40 or 1e-9}
    for i, (domain, v) in enumerate(values.items()):
        fig.add_trace(go.Histogram(x=np.asarray(v, float), name=f"{domain} ({len(v)})",
                                   histnorm="probability", opacity=0.6, xbins=bins,
                                   marker_color=(_BLUE, "#e09f3e")[i % 2]))  # fmt: skip
    if top <= 0:
        fig.add_annotation(text="every value is 0: this model's samples never disagree",
                           x=0.5, y=0.9, xref="paper", yref="paper", showarrow=False)
        fig.update_xaxes(range=[-0.05, 1.0])
    fig.update_layout(barmode="overlay", title=title, xaxis_title=label,
                      yaxis_title="share of examples", margin=_MARGIN, height=380,
                      legend={"orientation": "h", "y": -0.25})  # fmt: skip
    return fig


@phone_titles
def compare_histograms(samples: dict, name: str) -> go.Figure:
    """One histogram of ``p(name)`` per checkpoint on a shared [0, 1] axis (``samples``:
    checkpoint -> [T] array), stacked vertically so their spreads compare at a glance."""
    n = len(samples)
    fig = make_subplots(rows=n, cols=1, shared_xaxes=True, vertical_spacing=0.02,
                        subplot_titles=list(samples))  # fmt: skip
    for i, p in enumerate(samples.values(), start=1):
        fig.add_trace(go.Histogram(x=np.asarray(p, float), xbins={"start": 0, "end": 1.0001,
                                   "size": 0.02}, marker_color=_BLUE, showlegend=False,
                                   marker_line_width=0), row=i, col=1)  # fmt: skip
    fig.update_xaxes(range=[0, 1])
    fig.update_xaxes(title_text=f"p({name})", row=n, col=1)
    fig.update_layout(title=f"p({name}) per sample, one row per checkpoint", margin=_MARGIN,
                      height=90 + 110 * n, bargap=0.05)  # fmt: skip
    for a in fig.layout.annotations:
        a.font.size = 11
    return fig


@phone_titles
def sweep_figure(table, tau_name: str) -> go.Figure:
    """The paper's Figure 3: accuracy (left) and mean mutual information (right) in and out of
    domain against the swept temperature. ``table``: DataFrame with tau, domain, accuracy, mi."""
    # each panel gets half the width (about 150 px on a phone): titles wrap to fit it
    fig = make_subplots(rows=1, cols=2, subplot_titles=[
        wrap_title(t, PANEL_TITLE_CHARS) for t in ("accuracy", "mean mutual information")])
    for a in fig.layout.annotations:
        a.font.size = TITLE_FONT - 1
    for i, domain in enumerate(DOMAINS.values()):  # the display names of ui.dataset frames
        part = table[table["domain"] == domain].sort_values("tau")
        color = (_BLUE, "#e09f3e")[i]
        fig.add_trace(
            go.Scatter(
                x=part["tau"],
                y=part["accuracy"],
                name=domain,
                mode="lines+markers",
                line={"color": color},
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=part["tau"],
                y=part["mi"],
                name=domain,
                showlegend=False,
                mode="lines+markers",
                line={"color": color},
            ),
            row=1,
            col=2,
        )
    grid = sorted({float(t) for t in table["tau"]})
    # ticks at the swept values only, written plainly (plotly's own log ticks read "2 5 2 5")
    fig.update_xaxes(type="log", title_text=tau_name, tickvals=grid,
                     ticktext=[f"{t:g}" for t in grid], tickangle=0)  # fmt: skip
    fig.update_layout(title=f"Sweeping {tau_name} at inference", height=440,
                      margin={**_MARGIN, "t": 90},  # the title above two-line panel titles
                      legend={"orientation": "h", "y": -0.25})  # fmt: skip
    return fig


def for_export(fig: go.Figure, width: int = 1400) -> go.Figure:
    """A copy of ``fig`` laid out for a static file (SVG/PNG): every axis grows its margin to
    fit its tick labels and title (``automargin``), the title keeps room above the plot, and the
    size is fixed (a file has no browser window to fill). The app's own figures are unchanged."""
    out = go.Figure(fig)
    out.update_xaxes(automargin=True)
    out.update_yaxes(automargin=True)
    height = out.layout.height or 500
    out.update_layout(width=width, height=height + 80, title={"automargin": True, "y": 0.98},
                      margin={"l": 20, "r": 20, "t": 90, "b": 20})  # fmt: skip
    return out

