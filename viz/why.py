"""Figures of "why is it unsure?": salience over samples, occlusion, an edit beside its original,
every head at once, and the map of a dataset. Pure functions of numpy arrays (plotly)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from uqlab.workbench.figures import STD_MAX, unique_labels
from uqlab.workbench.titles import phone_titles, top_title

_BLUE, _RED, _GREY, _INK = "#1f5fbf", "#d1495b", "#8a8f98", "#1a1d24"
_MARGIN = {"l": 10, "r": 10, "t": 60, "b": 10}
_GRID_BAR_PX = 80  # under the head grid: its flat colour bar, ticks and title


@phone_titles
def salience_strip(
    prob: np.ndarray, tokens: Sequence[str], title: str, axis: str, max_dots: int = 200
) -> go.Figure:
    """Each token's attribution in every sample (``prob [T, K]``: a grey dot per sample, at
    most ``max_dots`` samples drawn) and its mean (a bar, red when it raises the explained
    probability, blue when it lowers it) with ± one standard deviation (whiskers)."""
    prob = np.asarray(prob, dtype=float)  # [T, K]
    labels = unique_labels(tokens)
    mean, std = prob.mean(0), prob.std(0)
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=np.arange(len(labels)),
            y=mean,
            name="mean over samples",
            customdata=labels,
            marker_color=[_RED if m >= 0 else _BLUE for m in mean],
            error_y={"type": "data", "array": std, "color": _INK, "thickness": 1.5},
            hovertemplate="%{customdata}<br>mean %{y:.4f}<br>± %{error_y.array:.4f} (std)"
            "<extra></extra>",
        )
    )
    shown = prob[:max_dots]
    if len(shown) > 1:
        xs = np.repeat(np.arange(len(labels))[None], len(shown), 0)  # [T', K]
        jitter = (np.random.default_rng(0).random(xs.shape) - 0.5) * 0.5  # fixed: same picture
        fig.add_trace(
            go.Scatter(
                x=(xs + jitter).ravel(),
                y=shown.ravel(),
                mode="markers",
                name="one sample",
                marker={"size": 4, "color": _GREY, "opacity": 0.55},
                customdata=np.repeat(np.arange(len(shown))[:, None], len(labels), 1).ravel(),
                hovertemplate="sample %{customdata}: %{y:.4f}<extra></extra>",
            )
        )
    fig.update_layout(
        title=title,
        yaxis_title=axis,
        margin=_MARGIN,
        height=420,
        legend={"orientation": "h", "y": -0.3},
        bargap=0.35,
        xaxis={
            "tickmode": "array",
            "tickvals": list(range(len(labels))),
            "ticktext": labels,
            "tickangle": -45,
        },
    )
    fig.add_hline(y=0, line_color=_INK, line_width=1)
    return fig


@phone_titles
def token_bars(
    values: np.ndarray,
    tokens: Sequence[str],
    title: str,
    axis: str,
    errors: np.ndarray | None = None,
) -> go.Figure:
    """One bar per token (red up, blue down), with optional ± error whiskers (a standard
    error): the mutual information's attribution, or the shift when a word is removed."""
    values = np.asarray(values, dtype=float)
    labels = unique_labels(tokens)
    bar = go.Bar(
        x=labels,
        y=values,
        marker_color=[_RED if v >= 0 else _BLUE for v in values],
        hovertemplate="%{x}: %{y:.4g}<extra></extra>",
    )
    if errors is not None:
        bar.error_y = {"type": "data", "array": np.asarray(errors, float), "color": _INK}
    fig = go.Figure(bar)
    fig.add_hline(y=0, line_color=_INK, line_width=1)
    fig.update_layout(
        title=title,
        yaxis_title=axis,
        margin=_MARGIN,
        height=360,
        xaxis_tickangle=-45,
        showlegend=False,
    )
    return fig


@phone_titles
def two_histograms(p_a: np.ndarray, p_b: np.ndarray, names: tuple[str, str], cls: str) -> go.Figure:
    """``p(cls)`` per sample of two texts on one [0, 1] axis, overlaid, with both means."""
    fig = go.Figure()
    for p, name, color, dash in ((p_a, names[0], _GREY, "dot"), (p_b, names[1], _RED, "dash")):
        p = np.asarray(p, dtype=float)
        fig.add_trace(
            go.Histogram(
                x=p,
                name=f"{name} (mean {p.mean():.3f})",
                opacity=0.65,
                marker_color=color,
                marker_line_width=0,
                xbins={"start": 0, "end": 1.0001, "size": 0.025},
            )
        )
        fig.add_vline(x=float(p.mean()), line_dash=dash, line_color=color)
    fig.update_layout(
        barmode="overlay",
        title=f"p({cls}) per sample: the original and the edit",
        xaxis_title=f"p({cls})",
        yaxis_title="samples",
        xaxis_range=[0, 1],
        margin=_MARGIN,
        height=360,
        legend={"orientation": "h", "y": -0.3},
    )
    return fig


@phone_titles
def difference_map(diff: np.ndarray, tokens: Sequence[str], title: str) -> go.Figure:
    """A ``[K, K]`` difference of two attention maps on a diverging scale centred on 0 (red:
    the edit attends more, blue: less)."""
    labels = unique_labels(tokens)
    top = float(np.abs(diff).max()) or 1.0
    fig = go.Figure(
        go.Heatmap(
            z=diff,
            x=labels,
            y=labels,
            zmin=-top,
            zmax=top,
            zmid=0,
            colorscale=[[0, _BLUE], [0.5, "#ffffff"], [1, _RED]],
            hovertemplate="query %{y}<br>key %{x}<br>edit - original %{z:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title, margin=_MARGIN, height=460, yaxis_autorange="reversed", xaxis_tickangle=-45
    )
    return fig


@phone_titles
def head_grid(maps: np.ndarray, tokens: Sequence[str], title: str, scale: str) -> go.Figure:
    """Every layer x head at once (bertviz's model view, for distributions): ``maps
    [n_layers, H, K, K]`` of the mean (or std) attention over samples, one small heat map per
    cell (row = layer, column = head), one shared colour scale fixed for every text and setting
    (the mean from 0 to 1, the std from 0 to :data:`uqlab.workbench.figures.STD_MAX`, the largest a
    weight can have: a grid that hardly disagrees looks pale, never auto-scaled to its own largest
    value), its bar lying flat under the grid; hovering names the cell. The title sits at the
    top (:func:`uqlab.workbench.titles.top_title`), above the heads' column titles."""
    n_layers, n_heads = maps.shape[:2]
    fig = make_subplots(
        rows=n_layers,
        cols=n_heads,
        horizontal_spacing=0.008,
        vertical_spacing=0.012,
        row_titles=[f"L{i}" for i in range(n_layers)],
        column_titles=[f"H{h}" for h in range(n_heads)],
    )
    top = 1.0 if scale == "mean" else STD_MAX  # NaN cells (a decoder's hidden keys): empty
    labels = unique_labels(tokens)
    heading, top_px = top_title(title)
    height = max(320, top_px + 62 * n_layers) + _GRID_BAR_PX
    ticks = [0.0, top / 2, top]
    bar = {  # flat under the grid, half its width, three level ticks (a phone's 350 px too)
        "orientation": "h",
        "x": 0.5,
        "y": -12 / (height - top_px - _GRID_BAR_PX),
        "yanchor": "top",
        "len": 0.5,
        "thickness": 12,
        "tickvals": ticks,
        "ticktext": [f"{v:.3g}" for v in ticks],
        "tickangle": 0,
        "title": {"text": scale, "side": "top"},
    }
    color = [[0, "#ffffff"], [1, _BLUE]] if scale == "mean" else [[0, "#ffffff"], [1, "#e07b00"]]
    for layer in range(n_layers):
        for head in range(n_heads):
            fig.add_trace(
                go.Heatmap(
                    z=maps[layer, head],
                    x=labels,
                    y=labels,
                    zmin=0,
                    zmax=top,
                    colorscale=color,
                    showscale=layer == 0 and head == 0,
                    colorbar=bar,
                    hovertemplate=f"layer {layer}, head {head}<br>query %{{y}}<br>key %{{x}}<br>"
                    f"{scale} %{{z:.3f}}<extra></extra>",
                ),
                row=layer + 1,
                col=head + 1,
            )
    fig.update_xaxes(showticklabels=False, ticks="")
    fig.update_yaxes(showticklabels=False, ticks="", autorange="reversed")
    # the title: one line of column titles (H0, H1, ...) under it
    fig.update_layout(
        title=heading,
        margin={"l": 10, "r": 30, "t": top_px, "b": _GRID_BAR_PX},
        height=height,
    )
    for a in fig.layout.annotations:
        a.font.size = 11
    return fig


@phone_titles
def dataset_map(
    xy: np.ndarray,
    color: np.ndarray,
    texts: Sequence[str],
    title: str,
    color_name: str,
    categorical: bool,
    custom: np.ndarray,
) -> go.Figure:
    """A 2D projection of a dataset's features ``xy [N, 2]``: one point per example, coloured by
    ``color [N]`` (a category or a number), its text on hover; ``custom [N]`` (row ids) comes back
    in a selection."""
    hover = [t[:140] + ("…" if len(t) > 140 else "") for t in texts]
    fig = go.Figure()
    if categorical:
        palette = (_BLUE, _RED, "#2e8b57", "#e09f3e", "#6a4c93", _GREY)
        for i, value in enumerate(dict.fromkeys(color)):
            sel = np.flatnonzero(color == value)
            fig.add_trace(
                go.Scattergl(
                    x=xy[sel, 0],
                    y=xy[sel, 1],
                    mode="markers",
                    name=str(value),
                    marker={"size": 6, "color": palette[i % len(palette)], "opacity": 0.75},
                    text=[hover[j] for j in sel],
                    customdata=custom[sel],
                    hovertemplate="%{text}<extra>" + str(value) + "</extra>",
                )
            )
    else:
        fig.add_trace(
            go.Scattergl(
                x=xy[:, 0],
                y=xy[:, 1],
                mode="markers",
                name=color_name,
                text=hover,
                customdata=custom,
                marker={
                    "size": 6,
                    "color": color,
                    "colorscale": "Viridis",
                    "opacity": 0.8,
                    "cmin": float(np.nanmin(color)) if len(color) else 0.0,
                    "cmax": float(np.nanpercentile(color, 99)) if len(color) else 1.0,
                    "colorbar": {
                        "title": {"text": color_name, "side": "top"},
                        "thickness": 10,
                        "orientation": "h",
                        "y": -0.32,
                        "len": 0.8,
                    },
                },
                hovertemplate="%{text}<br>" + color_name + " %{marker.color:.3g}<extra></extra>",
            )
        )
    fig.update_layout(
        title=title,
        margin={**_MARGIN, "b": 30},
        height=560,
        dragmode="lasso",
        xaxis_title="component 1",
        yaxis_title="component 2",
        legend={"orientation": "h", "y": -0.15},
    )
    return fig
