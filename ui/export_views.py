"""The explorer's export panel: the samples (CSV), every array (NPZ) and any figure of the run
(SVG / PNG), each recording its settings in its name and inside (the files are made by
:mod:`ui.logic.exports`)."""

from __future__ import annotations

import streamlit as st

from ui.logic import keys as K
from ui.logic.exports import (
    arrays_npz,
    download,
    export_stem,
    figure_file,
    figure_record,
    samples_csv,
    settings_record,
)
from uqlab.workbench.compute import ExploreResult


def export(res: ExploreResult, names: tuple[str, ...], name: str, family: str) -> None:
    """CSV of per-sample probabilities, NPZ of every array, and the figures as SVG/PNG, each
    recording its settings (in the file name and inside). The files are built when a button
    is pressed (deferred download data), not on every render."""
    record = settings_record(res, name, family)
    stem = export_stem(record)
    c1, c2, c3 = st.columns(3)
    download(
        c1, "Samples (CSV)", lambda: samples_csv(res, names, record), f"{stem}.csv", "text/csv"
    )
    download(
        c2,
        "All arrays (NPZ)",
        lambda: arrays_npz(res, record),
        f"{stem}.npz",
        "application/octet-stream",
    )
    with c3.popover("Figures (SVG / PNG)"):
        figures_export(stem, record)


def figures_export(stem: str, record: dict) -> None:
    """The export panel: pick one of this run's figures and a format, then download it with
    its settings inside and in its file name (the view's own ones too, :func:`figure_record`;
    ``stem``: :func:`export_stem` of ``record``)."""
    figs = st.session_state.get(K.FIGURES, {})
    if not figs:
        st.write("No figures yet.")
        return
    key = st.selectbox("Figure", list(figs), key=K.EXPORT_FIG)
    fmt = st.radio("Format", ("svg", "png"), horizontal=True, key=K.EXPORT_FMT)
    view = st.session_state.get(K.FIGURE_SETTINGS, {}).get(key, {})
    if view:
        record = figure_record(record, view)
        stem = export_stem(record)
    if st.button("Render", key=K.EXPORT_RENDER):
        try:
            data = figure_file(figs[key], fmt, record)  # the settings inside the file too
        except Exception as exc:  # kaleido needs a Chrome/Chromium on the server
            st.error(
                f"Static export needs Chromium on the server ({type(exc).__name__}). "
                "Use the camera icon on any chart to save a PNG from the browser."
            )
            return
        download(
            st,
            f"Download {key}.{fmt}",
            data,
            f"{stem}-{key}.{fmt}",
            f"image/{'svg+xml' if fmt == 'svg' else 'png'}",
        )
