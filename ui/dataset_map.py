"""The map of a dataset on Error analysis: every example's last-layer [CLS] features in 2D,
coloured by uncertainty, correctness, domain or label; a selection filters the error table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from ui import cached, work
from ui.explore_views import PLOT_CONFIG
from ui.logic import keys as K
from ui.logic.catalog import backbone_of
from ui.logic.exports import csv_text, download, figure_file
from uqcore.backbones import get_backbone
from uqlab.workbench import dataset
from viz import why as W

COLORS = (
    "mutual information",
    "correct (mean prediction)",
    "domain",
    "gold label",
    "predicted label",
    "p(gold)",
)


def coordinates(df: pd.DataFrame, name: str, task: str, rows: tuple | None):
    """``(xy [len(df), 2], explained, note)`` for the frame's rows: each row's place among the
    examples the map was made of (the bundled ones, or the visitor's ``rows``)."""
    every = dataset.examples(task) if rows is None else rows  # (text, gold, domain, index)
    where = {(r[2], r[3]): i for i, r in enumerate(every)}
    texts = tuple(r[0] for r in every)
    if cached.map_ready(name, texts, rows is None):  # read: no slot, no bar
        xy_all, explained, note = cached.dataset_map(name, texts, rows is None)
    else:
        xy_all, explained, note = work.run(
            f"The map: features of {len(texts):,} examples",
            lambda progress: cached.dataset_map(name, texts, rows is None, progress),
            ("map", name, len(texts), hash(texts)),
            what="Features",
        )
    index = np.array([where[(d, i)] for d, i in zip(df["domain"], df["index"], strict=True)])
    return xy_all[index], explained, note


def _colour(df: pd.DataFrame, by: str, names: tuple[str, ...]):
    """(values, categorical?) of a colouring."""
    if by == "mutual information":
        return df["mi"].to_numpy(), False
    if by == "p(gold)":
        return df["p_gold"].to_numpy(), False
    if by == "correct (mean prediction)":
        return np.where(df["pred"] == df["gold"], "right", "wrong"), True
    if by == "domain":
        return df["domain"].to_numpy(), True
    column = "gold" if by == "gold label" else "pred"
    return np.array([names[int(v)] for v in df[column]]), True


def pooled(name: str) -> str:
    """What the head reads, as the map's title names it: [CLS], or a decoder's last token."""
    info = next((i for i in cached.infos() if i.name == name), None)
    decoder = info is not None and get_backbone(backbone_of(info)).classifier == "decoder"
    return "last-token" if decoder else "[CLS]"


def show(
    df: pd.DataFrame, names: tuple[str, ...], name: str, task: str, rows: tuple | None, record: dict
) -> list[int] | None:
    """Draw the map of ``df``'s rows; return the frame indices selected on it (None: none)."""
    xy, explained, note = coordinates(df, name, task, rows)
    ok = np.isfinite(xy).all(1)
    by = st.selectbox("Colour by", COLORS, key=K.MAP_COLOR)
    values, categorical = _colour(df, by, names)
    share = sum(explained)
    token = pooled(name)  # [CLS] or a decoder's last token
    fig = W.dataset_map(
        xy[ok],
        values[ok],
        df["text"].to_numpy()[ok],
        f"{name}: last-layer {token} features, PCA ({share:.0%} of the variance)",
        by,
        categorical,
        df.index.to_numpy()[ok],
    )
    event = st.plotly_chart(
        fig,
        width="stretch",
        config=PLOT_CONFIG,
        key=K.MAP_PLOT,
        on_select="rerun",
        selection_mode=("points", "box", "lasso"),
    )
    st.caption(
        f"One point per example ({int(ok.sum()):,}); hover for its text. Drag a box or a "
        "lasso (or click a point) to keep only those examples in the table below; "
        "double-click the map to clear the selection. "
        + (
            ""
            if categorical
            else "The colour scale stops at the 99th percentile, so "
            "the top 1 % share its brightest colour. "
        )
        + note
        + f" Component 1 explains {explained[0]:.0%} of the features' variance, component "
        f"2 {explained[1]:.0%}."
    )
    frame = df.assign(x=xy[:, 0], y=xy[:, 1])[
        ["x", "y", "domain", "index", "text", "gold", "pred", "p_gold", "mi"]
    ]
    c1, c2 = st.columns(2)
    download(
        c1,
        "The map's points (CSV)",
        lambda: csv_text(
            frame, {**record, "projection": f"PCA of the last-layer {token} features"}
        ),
        f"map-{name}.csv",
        "text/csv",
    )
    download(
        c2,
        "The map (SVG)",
        lambda: figure_file(fig, "svg", {**record, "colour": by}),
        f"map-{name}.svg",
        "image/svg+xml",
    )
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    chosen = []
    for p in points:
        got = p.get("customdata")
        got = got[0] if isinstance(got, list) and got else got
        if got is not None:
            chosen.append(int(got))
    return chosen or None
