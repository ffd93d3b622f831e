"""Plotly figures of sampled predictions and attention maps. Pure functions of numpy arrays."""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence

import numpy as np
import plotly.express as px
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from uqlab.catalog.tasks import DOMAINS
from uqlab.workbench.titles import (
    PANEL_NAME_CHARS,
    PANEL_TITLE_CHARS,
    TITLE_FONT,
    FigureSpec,
    phone_specs,
    phone_titles,
    top_title,
    wrap_name,
    wrap_title,
)

_BLUE = "#1f5fbf"  # the theme's primaryColor (.streamlit/config.toml)
_RED = "#d1495b"
_CLASS_COLORS = ("#d1495b", "#1f5fbf", "#2e8b57", "#e09f3e")
_MARGIN = {"l": 10, "r": 10, "t": 60, "b": 10}
HIST_ROW_PX, HIST_NAME_PX = 100, 28  # compare_histograms: one row's plot, the gap of its name
STD_MAX = 0.5  # the largest standard deviation a weight in [0, 1] can have (half 0, half 1)


def unique_labels(tokens: Sequence[str]) -> list[str]:
    """Position-prefixed token labels (``"0:[CLS]"``, ``"1:john"``, ...), unique even when a word
    repeats, so plotly does not merge the rows and columns of equal words."""
    return [f"{i}:{tok}" for i, tok in enumerate(tokens)]


def _plain(values) -> list:
    """``values`` as a list of plain Python numbers (what plotly's validation makes of a list
    of numpy scalars)."""
    return [v.item() if isinstance(v, np.generic) else v for v in values]


@phone_specs
def prediction_histogram(
    probs: np.ndarray, names: Sequence[str], target: int, gold: bool
) -> FigureSpec:
    """Histogram of ``p_t(target)`` over the samples of ``probs [T, C]``, each sample coloured
    by the class it predicts; the mean is a dashed line. ``gold``: ``target`` is the gold label
    (else the predicted class)."""
    probs = np.asarray(probs, dtype=float)  # [T, C]
    p = probs[:, target]  # [T]
    pred = probs.argmax(1)  # [T]
    data = []
    for c, name in enumerate(names):
        sel = p[pred == c]
        data.append(
            {
                "type": "histogram",
                "x": sel,
                "name": f"predicts {name} ({sel.size})",
                "marker": {"color": _CLASS_COLORS[c % 4], "line": {"width": 0}},
                "xbins": {"start": 0.0, "end": 1.0 + 1e-9, "size": 0.025},
            }
        )
    mean = float(p.mean())
    # the text stays in: on the inner side of the line near an edge (plotly's add_vline
    # positions "top left", "top right" and "top")
    xanchor, yanchor = (
        ("right", "top") if mean > 0.8 else ("left", "top") if mean < 0.2 else ("center", "bottom")
    )
    role = "gold" if gold else "predicted"
    return {
        "data": data,
        "layout": {
            "shapes": [
                {
                    "type": "line",
                    "x0": mean,
                    "x1": mean,
                    "xref": "x",
                    "y0": 0,
                    "y1": 1,
                    "yref": "y domain",
                    "line": {"color": "#1a1d24", "dash": "dash"},
                }
            ],
            "annotations": [
                {
                    "showarrow": False,
                    "text": f"mean {mean:.3f}",
                    "x": mean,
                    "xanchor": xanchor,
                    "xref": "x",
                    "y": 1,
                    "yanchor": yanchor,
                    "yref": "y domain",
                }
            ],
            "barmode": "stack",
            "title": {"text": f"p({names[target]}) per sample ({role} class), T = {p.size}"},
            "xaxis": {"title": {"text": f"p({names[target]})"}, "range": [0, 1]},
            "yaxis": {"title": {"text": "samples"}},
            "legend": {"orientation": "h", "y": -0.25},
            "margin": dict(_MARGIN),
            "height": 380,
        },
    }


@phone_specs
def running_mean_figure(mean: np.ndarray, se: np.ndarray, name: str) -> FigureSpec:
    """The running mean of ``p(name)`` after 1..T samples with a ±2 standard-error band."""
    t = np.arange(1, mean.size + 1)
    return {
        "data": [
            {
                "type": "scatter",
                "x": np.r_[t, t[::-1]],
                "y": np.r_[mean + 2 * se, (mean - 2 * se)[::-1]],
                "fill": "toself",
                "fillcolor": "rgba(31,95,191,0.15)",
                "line": {"width": 0},
                "name": "±2 standard errors",
                "hoverinfo": "skip",
            },
            {
                "type": "scatter",
                "x": t,
                "y": mean,
                "line": {"color": _BLUE},
                "name": "running mean",
            },
        ],
        "layout": {
            "title": {"text": f"Running mean of p({name}) as samples accumulate"},
            "xaxis": {"title": {"text": "samples drawn"}},
            "yaxis": {"title": {"text": f"mean p({name})"}, "range": [0, 1]},
            "margin": dict(_MARGIN),
            "height": 380,
            "legend": {"orientation": "h", "y": -0.25},
        },
    }


BAR_PX = 160  # a lone colour bar's length (its colours about 110 px): three level ticks apart


def _flat_bar(
    title: str, x: float, below_px: float, plot_px: float, top: float, span: float | None = None
) -> dict:
    """A colour bar lying flat ``below_px`` under a plot area ``plot_px`` high, with three level
    ticks (0, ``top`` / 2, ``top``). Alone (``span`` None) it is :data:`BAR_PX` long, its right
    end under the plot's: a panel beside two others at 1024 px has a plot area of about 64 px
    (its token labels take the rest), where a bar the plot's width was 16 px with its ticks
    printed over each other. Two in one figure (``span``, a share of the plot's width each)
    are centred at ``x`` and never overlap."""
    ticks = [0.0, top / 2, top]
    place = (
        {"x": 1.0, "xanchor": "right", "lenmode": "pixels", "len": BAR_PX}
        if span is None
        else {"x": x, "len": span}
    )
    return {
        "orientation": "h",
        **place,
        "y": -below_px / plot_px,
        "yanchor": "top",
        "thickness": 14,
        "tickvals": ticks,
        "ticktext": [f"{v:.3g}" for v in ticks],
        "tickangle": 0,
        "title": {"text": title, "side": "top"},
    }


@functools.lru_cache(maxsize=32)
def _facets(panels: int, spacing: float, scale: str, x_label: str, y_label: str) -> dict:
    """What ``px.imshow`` with ``facet_col`` lays out for ``panels`` side-by-side heat maps,
    without their data: each trace's axes, names and colour axis, the axes (domains, anchors,
    reversed rows), the panels' titles and the colour axis (``scale``, its bar titled
    "weight"). Computed by plotly express itself once per shape (~40 ms) instead of on every
    figure; copy before changing it."""
    fig = px.imshow(
        np.zeros((panels, 1, 1)),
        x=["a"],
        y=["a"],
        facet_col=0,
        facet_col_spacing=spacing,
        zmin=0.0,
        zmax=1.0,
        color_continuous_scale=scale,
        aspect="auto",
        labels={"x": x_label, "y": y_label, "color": "weight"},
    ).to_dict()
    traces = [
        {k: v for k, v in t.items() if k not in ("x", "y", "z", "hovertemplate")}
        for t in fig["data"]
    ]
    layout = {k: v for k, v in fig["layout"].items() if k != "template"}
    return {"data": traces, "layout": layout}


def _facet_spec(
    stack: np.ndarray,
    x: list[str],
    y: list[str],
    spacing: float,
    scale: str,
    labels: tuple[str, str],
    hover: str,
) -> tuple[dict, list[str], list[str]]:
    """``stack [P, Ly, Lx]`` as :func:`_facets`' heat maps (a fresh copy to finish), with the
    names of its x and y axes in panel order."""
    grid = copy.deepcopy(_facets(len(stack), spacing, scale, *labels))
    for trace, z in zip(grid["data"], stack, strict=True):
        trace.update(x=x, y=y, z=z, hovertemplate=hover)
    xs = [t.get("xaxis", "x") for t in grid["data"]]
    ys = [t.get("yaxis", "y") for t in grid["data"]]
    return grid, [f"xaxis{a[1:]}" for a in xs], [f"yaxis{a[1:]}" for a in ys]


@phone_specs
def attention_panels(
    panels: dict[str, np.ndarray],
    tokens: Sequence[str],
    title: str,
    zmax: float | None = 1.0,
    own_scale: Sequence[str] = (),
    own_zmax: float | None = None,
) -> FigureSpec:
    """Side-by-side heat maps (one faceted figure) of ``[L, L]`` matrices, e.g. one sample,
    the mean and the standard deviation over samples. Rows = queries, columns = keys.

    Attention weights share one colour scale fixed to ``[0, zmax]`` (1 by default: a uniform
    row looks pale and a one-hot row dark, on every figure alike; None = up to the largest
    value shown). The panels named in ``own_scale`` (a standard deviation, a difference) get a
    second scale of their own, from 0 to ``own_zmax`` (e.g. :data:`STD_MAX`, the same for every
    figure, so a smaller spread looks paler), or to their largest value when it is None.

    The panels' names wrap (:func:`~.titles.wrap_name`) to share a phone's width, and the title
    sits at the top (:func:`~.titles.top_title`) with room for them under it."""
    names = list(panels)
    stack = np.stack([np.asarray(panels[n], dtype=float) for n in names])  # [P, L, L]
    if stack.shape[1:] != (len(tokens), len(tokens)):
        raise ValueError(f"maps must be [L, L] with L = {len(tokens)}, got {stack.shape[1:]}.")
    labels = unique_labels(tokens)
    shared = [i for i, n in enumerate(names) if n not in own_scale]
    # NaN cells (a decoder's keys after the query) are drawn empty and ignored by the scales
    top = zmax if zmax is not None else float(np.nanmax(stack[shared], initial=0.0) or 1.0)
    fig, xaxes, yaxes = _facet_spec(
        stack,
        labels,
        labels,
        0.04,
        "Blues",
        ("key (attended to)", "query"),
        "query %{y}<br>key %{x}<br>%{z:.3f}<extra></extra>",
    )
    layout = fig["layout"]
    width = max(8, PANEL_NAME_CHARS // len(names))  # characters of a panel's name per line
    shown = [wrap_name(name, width) for name in names]
    for annotation, name in zip(layout["annotations"], shown, strict=True):
        annotation.update(text=name, font={"size": 12})  # the panels' names
    head, top_px = top_title(title, max(n.count("<br>") + 1 for n in shown))
    own = [i for i, n in enumerate(names) if n in own_scale]
    # colour bars lie flat under the panels, below the key labels and the axis title, so they
    # never overlap each other or a panel however narrow the screen (a phone gives each panel
    # about 100 px); the room below the plot is measured in pixels from the longest label
    labels_px = 14 + 5 * max(len(x) for x in labels) if len(tokens) <= 64 else 10
    below = labels_px + 28  # tick labels (at -45 degrees) and the axis title
    height = max(480, min(980, 280 + 18 * len(tokens))) + top_px - _MARGIN["t"]
    plot_px = height - top_px - (below + 70)
    two = bool(own and shared)  # two bars side by side, half the width each
    span = 0.46 if two else None
    coloraxis = layout["coloraxis"]
    coloraxis.update(cmin=0.0, cmax=top)
    coloraxis["colorbar"] = {
        **coloraxis.get("colorbar", {}),
        **_flat_bar("weight", 0.25 if two else 0.5, below, plot_px, top, span),
    }
    if own:
        for i in own:
            fig["data"][i]["coloraxis"] = "coloraxis2"
        label = "/".join(names[i] for i in own)[:16]
        own_top = own_zmax if own_zmax is not None else float(np.nanmax(stack[own]) or 1.0)
        layout["coloraxis2"] = {
            "colorscale": _colorscale("Oranges"),
            "cmin": 0.0,
            "cmax": own_top,
            "colorbar": _flat_bar(label, 0.75 if two else 0.5, below, plot_px, own_top, span),
        }
    show = len(tokens) <= 64
    for i, (xa, ya) in enumerate(zip(xaxes, yaxes, strict=True)):
        layout[xa].update(tickangle=-45, showticklabels=show, title={"text": ""})
        layout[ya]["showticklabels"] = show
        if i:  # token labels once, on the first panel
            layout[ya].update(showticklabels=False, title={"text": ""})
    layout[xaxes[0]]["title"] = {"text": "key (attended to)"}  # once, under the first panel
    layout.update(
        title=head,
        margin={**layout.get("margin", {}), **_MARGIN, "t": top_px, "b": below + 70},
        height=height,
    )
    return fig


@functools.lru_cache(maxsize=8)
def _colorscale(name: str) -> list:
    """A named colour scale as plotly's validation writes it (``[[0.0, "rgb(...)"], ...]``)."""
    return go.layout.Coloraxis(colorscale=name).to_plotly_json()["colorscale"]


@phone_specs
def centroid_panels(
    sample: np.ndarray, frequency: np.ndarray, tokens: Sequence[str], t: int
) -> FigureSpec:
    """Token x centroid weights of one sample beside how often each token's largest weight
    falls on each centroid across the samples. Both ``[L, c]``."""
    c = sample.shape[1]
    stack = np.stack([np.asarray(sample, float), np.asarray(frequency, float)])  # [2, L, c]
    fig, xaxes, yaxes = _facet_spec(
        stack,
        [f"centroid {j}" for j in range(c)],
        unique_labels(tokens),
        0.08,
        "Purples",
        ("centroid", "token"),
        "%{y}<br>%{x}<br>%{z:.3f}<extra></extra>",
    )
    layout = fig["layout"]
    # short: a phone gives each ~100 px; the page's caption says what P is (the keys' centroid
    # assignment probabilities)
    for annotation, text in zip(
        layout["annotations"], (f"P, sample {t}", "across samples"), strict=True
    ):
        annotation.update(text=text, font={"size": 12})
    for xa in xaxes:
        layout[xa].update(tickangle=-45, title={"text": ""})
    for ya in yaxes:
        layout[ya]["showticklabels"] = len(tokens) <= 64
    layout[xaxes[0]]["title"] = {"text": "centroid"}  # once, under the first panel
    layout[yaxes[1]].update(showticklabels=False, title={"text": ""})
    below = 14 + 5 * len(f"centroid {c - 1}") + 28  # rotated labels and the axis title
    height = max(420, min(960, 220 + 18 * len(tokens)))
    coloraxis = layout["coloraxis"]
    coloraxis.update(cmin=0.0, cmax=1.0)
    coloraxis["colorbar"] = {
        **coloraxis.get("colorbar", {}),
        **_flat_bar("weight", 0.5, below, height - _MARGIN["t"] - below - 70, 1.0),
    }
    layout.update(
        margin={**layout.get("margin", {}), **_MARGIN, "b": below + 70},
        height=height,
        title={"text": "Centroid assignments of the keys"},
    )
    return fig


@phone_specs
def bar_figure(values: Sequence[float], labels: Sequence[str], title: str, axis: str) -> FigureSpec:
    return {
        "data": [
            {"type": "bar", "x": list(labels), "y": _plain(values), "marker": {"color": _BLUE}}
        ],
        "layout": {
            "title": {"text": title},
            "yaxis": {"title": {"text": axis}},
            "margin": dict(_MARGIN),
            "height": 320,
        },
    }


@phone_specs
def prior_posterior_figure(
    prior: np.ndarray, mean: np.ndarray, samples: np.ndarray, tokens: Sequence[str], query: str
) -> FigureSpec:
    """BAM, one query row over the keys: the contextual prior ``prior [L]``, the posterior mean
    ``mean [L]`` and a few posterior samples ``samples [S, L]``."""
    labels = unique_labels(tokens)
    data = [
        {
            "type": "bar",
            "x": labels,
            "y": prior,
            "name": "prior π (keys only)",
            "marker": {"color": "#e09f3e"},
        },
        {
            "type": "bar",
            "x": labels,
            "y": mean,
            "name": "posterior mean",
            "marker": {"color": _BLUE},
        },
    ]
    for i, row in enumerate(samples):  # one legend entry for all of them
        data.append(
            {
                "type": "scatter",
                "x": labels,
                "y": row,
                "mode": "markers",
                "legendgroup": "samples",
                "name": f"posterior samples 0-{len(samples) - 1}",
                "hovertemplate": f"sample {i}: %{{y:.3f}}<extra></extra>",
                "marker": {"color": _RED, "size": 6, "opacity": 0.6},
                "showlegend": i == 0,
            }
        )
    return {
        "data": data,
        "layout": {
            "barmode": "group",
            "title": {"text": f"Prior vs posterior attention of query {query}"},
            "yaxis": {"title": {"text": "attention weight"}},
            "margin": dict(_MARGIN),
            "height": 380,
            "legend": {"orientation": "h", "y": -0.3},
            "xaxis": {"tickangle": -45, "showticklabels": len(tokens) <= 64},
        },
    }


@phone_titles
def reliability_figure(curves: dict, rows: str = "in-domain") -> go.Figure:
    """Reliability diagram: per checkpoint, accuracy against mean confidence of each non-empty
    bin (``curves``: name -> uqcore.stats.ReliabilityData); the diagonal is perfect calibration.
    ``rows``: which rows the title says they are ("in-domain", or "your file": a visitor's file
    is not in-domain)."""
    fig = go.Figure(
        go.Scatter(
            x=[0, 1],
            y=[0, 1],
            mode="lines",
            name="perfect calibration",
            line={"dash": "dot", "color": "#888"},
        )
    )
    for i, (name, rd) in enumerate(curves.items()):
        keep = rd.count > 0
        fig.add_trace(
            go.Scatter(
                x=rd.confidence[keep],
                y=rd.accuracy[keep],
                mode="lines+markers",
                name=name,
                marker={"size": 4 + 10 * np.sqrt(rd.count[keep] / rd.count.max())},
                line={"color": _CLASS_COLORS[(i + 1) % 4] if i < 4 else None},
                customdata=np.stack([rd.count[keep], np.flatnonzero(keep)], 1),  # [k, 2]
                hovertemplate="confidence %{x:.2f}<br>accuracy %{y:.2f}"
                "<br>%{customdata[0]} examples<extra></extra>",
            )
        )
    fig.update_layout(
        title=f"Reliability diagram ({rows}, 15 bins; marker size = examples)",
        xaxis_title="mean confidence (max probability)",
        yaxis_title="accuracy",
        xaxis_range=[0.45, 1.0],
        yaxis_range=[0, 1.02],
        margin=_MARGIN,
        height=420,
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


@phone_titles
def risk_coverage_figure(curves: dict, rows: str = "in-domain") -> go.Figure:
    """Risk (error rate) against coverage when only the most confident examples are kept, one
    line per checkpoint (``curves``: name -> uqlab.workbench.dataset.risk_coverage), with the
    oracle and the random selection of the first checkpoint dotted; the legend gives each AURC.
    ``rows``: as in :func:`reliability_figure`."""
    fig = go.Figure()
    for i, (name, c) in enumerate(curves.items()):
        fig.add_trace(
            go.Scatter(
                x=c["coverage"],
                y=c["risk"],
                mode="lines+markers",  # the markers (unseen) make each point clickable
                marker={"size": 6, "opacity": 0},
                name=f"{name} (AURC {c['aurc']:.3f})",
                line={"color": _CLASS_COLORS[(i + 1) % 4]},
                hovertemplate="coverage %{x:.2f}<br>risk %{y:.3f}<extra>%{fullData.name}</extra>",
            )
        )
    if curves:
        first = next(iter(curves.values()))
        for key, dash in (("oracle", "dot"), ("random", "dash")):
            fig.add_trace(
                go.Scatter(
                    x=first["coverage"],
                    y=first[key],
                    mode="lines",
                    name=f"{key} ({next(iter(curves))})",
                    line={"color": "#888", "dash": dash},
                )
            )
    fig.update_layout(
        title=f"Risk-coverage ({rows}): keep the most confident first",
        xaxis_title="coverage (share of examples answered)",
        yaxis_title="risk (error rate among them)",
        xaxis_range=[0, 1],
        margin=_MARGIN,
        height=380,
        legend={"orientation": "h", "y": -0.3},
    )
    return fig


@phone_titles
def roc_figure(curves: dict, score: str) -> go.Figure:
    """ROC curves of OOD detection (OOD = positive); ``curves``: name -> dict with fpr, tpr,
    auroc."""
    fig = go.Figure(
        go.Scatter(
            x=[0, 1], y=[0, 1], mode="lines", name="chance", line={"dash": "dot", "color": "#888"}
        )
    )
    for name, c in curves.items():
        fig.add_trace(
            go.Scatter(
                x=c["fpr"],
                y=c["tpr"],
                mode="lines+markers",  # the markers (unseen) make each point clickable
                marker={"size": 6, "opacity": 0},
                name=f"{name} (AUROC {c['auroc']:.3f})",
            )
        )
    fig.update_layout(
        title=f"Out-of-domain detection by {score}",
        xaxis_title="false positive rate (in-domain flagged)",  # fits under a half-width plot
        yaxis_title="TPR (OOD flagged)",  # the full words were cut beside a half-width plot
        margin=_MARGIN,
        height=420,
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


def histogram_bins(values: dict) -> dict:
    """The bins of :func:`domain_histograms`: 40 from 0 to the largest value of any domain
    (``start``, ``end``, ``size``); all zeros (a deterministic model) gives one thin bar at 0
    instead of plotly's default block from -0.5 to 0.5. A clicked bar's rows are read back from
    these edges (Results -> Error analysis)."""
    every = np.concatenate([np.asarray(v, float) for v in values.values()] or [np.zeros(1)])
    top = float(every.max(initial=0.0))
    return {"start": 0.0, "end": top * 1.0001 if top > 0 else 1e-9, "size": top / 40 or 1e-9}


@phone_titles
def domain_histograms(values: dict, label: str, title: str) -> go.Figure:
    """Overlaid, normalised histograms of one uncertainty score per domain
    (``values``: domain -> 1-D array), binned by :func:`histogram_bins`."""
    fig = go.Figure()
    bins = histogram_bins(values)
    top = bins["end"] / 1.0001 if bins["end"] > 1e-9 else 0.0
    for i, (domain, v) in enumerate(values.items()):
        fig.add_trace(
            go.Histogram(
                x=np.asarray(v, float),
                name=f"{domain} ({len(v)})",
                histnorm="probability",
                opacity=0.6,
                xbins=bins,
                marker_color=(_BLUE, "#e09f3e")[i % 2],
            )
        )
    if top <= 0:
        fig.add_annotation(
            text="every value is 0: this model's samples never disagree",
            x=0.5,
            y=0.9,
            xref="paper",
            yref="paper",
            showarrow=False,
        )
        fig.update_xaxes(range=[-0.05, 1.0])
    fig.update_layout(
        barmode="overlay",
        title=title,
        xaxis_title=label,
        yaxis_title="share of examples",
        margin=_MARGIN,
        height=380,
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


@phone_titles
def confusion_figure(counts: np.ndarray, names: Sequence[str], title: str) -> go.Figure:
    """The confusion matrix ``counts [C, C]`` (row = gold label, column = predicted) as a heat
    map with each cell's count written in it; an unseen marker at each cell's centre carries
    ``customdata`` ``[gold, pred, count]`` and the hover, so a click selects the cell (Results ->
    Error analysis; a trace whose hover is skipped sends no click). Rows read top-down in label
    order."""
    counts = np.asarray(counts, dtype=np.int64)  # [C, C]
    labels = list(names) if len(set(names)) == len(names) else unique_labels(names)
    gold, pred = np.meshgrid(np.arange(len(names)), np.arange(len(names)), indexing="ij")
    fig = go.Figure(
        go.Heatmap(
            z=counts,
            x=labels,
            y=labels,
            colorscale="Blues",
            showscale=False,
            text=counts,
            texttemplate="%{text}",
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[labels[p] for p in pred.ravel()],
            y=[labels[g] for g in gold.ravel()],
            mode="markers",
            marker={"size": 40, "opacity": 0},
            customdata=np.stack([gold.ravel(), pred.ravel(), counts.ravel()], 1),
            hovertemplate="gold %{y}<br>predicted %{x}<br>%{customdata[2]} texts<extra></extra>",
            showlegend=False,
        )
    )
    fig.update_layout(
        title=title,
        xaxis_title="predicted",
        yaxis_title="gold label",
        yaxis_autorange="reversed",
        margin=_MARGIN,
        height=200 + 50 * len(names),
    )
    return fig


@phone_titles
def compare_histograms(samples: dict, name: str) -> go.Figure:
    """One histogram of ``p(name)`` per checkpoint on a shared [0, 1] axis (``samples``:
    checkpoint -> [T] array), stacked vertically so their spreads compare at a glance."""
    n = len(samples)
    title, top = top_title(f"p({name}) per sample, one row per checkpoint")
    height = top + HIST_ROW_PX * n + HIST_NAME_PX * (n - 1) + 60  # 60: the axis under the last
    # each row's name sits in a gap of its own above the row, never on the row above's bars
    fig = make_subplots(
        rows=n,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=HIST_NAME_PX / (height - top - 60),
        subplot_titles=list(samples),
    )
    for i, p in enumerate(samples.values(), start=1):
        fig.add_trace(
            go.Histogram(
                x=np.asarray(p, float),
                xbins={"start": 0, "end": 1.0001, "size": 0.02},
                marker_color=_BLUE,
                showlegend=False,
                marker_line_width=0,
            ),
            row=i,
            col=1,
        )
    fig.update_xaxes(range=[0, 1])
    fig.update_xaxes(title_text=f"p({name})", row=n, col=1)
    fig.update_layout(
        title=title, margin={**_MARGIN, "t": top, "b": 60}, height=height, bargap=0.05
    )
    for a in fig.layout.annotations:
        a.font.size = 12
    return fig


@phone_titles
def sweep_figure(table, tau_name: str) -> go.Figure:
    """The paper's Figure 3: accuracy (left) and mean mutual information (right) in and out of
    domain against the swept temperature. ``table``: DataFrame with tau, domain, accuracy, mi."""
    # each panel gets half the width (about 150 px on a phone): titles wrap to fit it
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=[
            wrap_title(t, PANEL_TITLE_CHARS) for t in ("accuracy", "mean mutual information")
        ],
    )
    for a in fig.layout.annotations:
        a.font.size = TITLE_FONT - 1
    ood = DOMAINS["ood"]  # drawn last, in orange; the in-domain set or a visitor's file first
    for domain in sorted(dict.fromkeys(table["domain"]), key=lambda d: d == ood):
        part = table[table["domain"] == domain].sort_values("tau")
        color = "#e09f3e" if domain == ood else _BLUE
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
    fig.update_xaxes(
        type="log",
        title_text=tau_name,
        tickvals=grid,
        ticktext=[f"{t:g}" for t in grid],
        tickangle=0,
    )
    fig.update_layout(
        title=f"Sweeping {tau_name} at inference",
        height=440,
        margin={**_MARGIN, "t": 90},  # the title above two-line panel titles
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


def for_export(fig: go.Figure, width: int = 1400) -> go.Figure:
    """A copy of ``fig`` laid out for a static file (SVG/PNG): every axis grows its margin to
    fit its tick labels and title (``automargin``), the title keeps room above the plot, and the
    size is fixed (a file has no browser window to fill). The app's own figures are unchanged."""
    out = go.Figure(fig)
    out.update_xaxes(automargin=True)
    out.update_yaxes(automargin=True)
    height = out.layout.height or 500
    out.update_layout(
        width=width,
        height=height + 80,
        title={"automargin": True, "y": 0.98},
        margin={"l": 20, "r": 20, "t": 90, "b": 20},
    )
    return out
