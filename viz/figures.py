"""Plotly figures of sampled predictions and attention maps. Pure functions of numpy arrays."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.express as px
import plotly.graph_objects as go

_BLUE = "#1f5fbf"  # the theme's primaryColor (.streamlit/config.toml)


def unique_labels(tokens: Sequence[str]) -> list[str]:
    """Position-prefixed token labels (``"0:[CLS]"``, ``"1:john"``, ...), unique even when a word
    repeats, so plotly does not merge the rows and columns of equal words."""
    return [f"{i}:{tok}" for i, tok in enumerate(tokens)]


def probability_histogram(p: np.ndarray, class_index: int = 1, bins: int = 40) -> go.Figure:
    """Histogram of ``p [T]``, one class probability per sample, on a fixed [0, 1] axis."""
    p = np.asarray(p, dtype=float).ravel()  # [T]
    fig = px.histogram(x=p, color_discrete_sequence=[_BLUE])
    fig.update_traces(xbins={"start": 0.0, "end": 1.0, "size": 1.0 / bins}, marker_line_width=0)
    fig.add_vline(
        x=float(p.mean()),
        line_dash="dash",
        line_color="#d1495b",
        annotation_text=f"mean {p.mean():.3f}",
        annotation_position="top",
    )
    fig.update_layout(
        title=f"p(class {class_index}) over T = {p.size} samples",
        xaxis_title=f"p(class {class_index})",
        yaxis_title="samples",
        xaxis_range=[0.0, 1.0],
        bargap=0.05,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=380,
    )
    return fig


def attention_heatmap(attn: np.ndarray, tokens: Sequence[str], title: str) -> go.Figure:
    """Heat map of one attention matrix ``attn [L, L]`` (rows = queries, columns = keys; each row
    sums to 1), axes labelled with :func:`unique_labels` of ``tokens``."""
    attn = np.asarray(attn, dtype=float)  # [L, L]
    if attn.ndim != 2 or attn.shape[0] != attn.shape[1] or attn.shape[0] != len(tokens):
        raise ValueError(
            f"attn must be [L, L] with L = len(tokens) = {len(tokens)}, got {attn.shape}."
        )
    labels = unique_labels(tokens)
    fig = px.imshow(
        attn,
        x=labels,
        y=labels,
        zmin=0.0,
        color_continuous_scale="Blues",
        labels={"x": "key (attended to)", "y": "query", "color": "weight"},
        aspect="auto",
    )
    fig.update_traces(hovertemplate="query %{y}<br>key %{x}<br>weight %{z:.3f}<extra></extra>")
    fig.update_xaxes(side="bottom", tickangle=-45)
    fig.update_layout(
        title=title,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=max(380, 160 + 22 * len(tokens)),
    )
    return fig
