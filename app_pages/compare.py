"""Compare methods: one sentence through every checkpoint of a task, side by side."""

from __future__ import annotations

import streamlit as st

from ui import cached, guard, sidebar, work
from ui.logic import keys as K
from ui.logic.catalog import presets, sort_key
from ui.logic.compare import compare, mean_attention
from ui.logic.exports import csv_text, download
from ui.logic.format import plain
from ui.logic.state import MAX_TEXT_CHARS
from ui.map_views import WINDOW
from uqcore.exceptions import UQError
from uqcore.families import title as family_title
from uqcore.settings import SamplingSettings
from uqlab.catalog.tasks import label_names
from uqlab.workbench import figures

view, info = sidebar.page("Compare methods on one sentence")
names = label_names(info)
mine = sorted((i for i in cached.infos() if i.task == info.task), key=sort_key)
examples = presets(info.task)
with st.form("compare"):
    text = st.text_area(
        "Text", value=view.text or (examples[0].text if examples else ""), height=80, key=K.CMP_TEXT
    )
    choice = st.radio(
        "Gold label",
        ("unknown", *names),
        horizontal=True,
        key=K.CMP_LABEL,
        format_func=plain,
        index=0 if view.label is None else view.label + 1,
    )
    chosen = sidebar.multiselect(
        st, "Checkpoints", [i.name for i in mine], [i.name for i in mine], K.CMP_CKPTS
    )
    st.form_submit_button("Compare", type="primary")
label = None if choice == "unknown" else names.index(choice)
if not chosen:
    st.info("Pick at least one checkpoint.")
    st.stop()
if not text.strip():
    st.info("Type a sentence and press Compare.")
    st.stop()
st.caption(f"T = {view.T}, seed {view.seed}; each checkpoint uses its own trained settings.")
chosen = guard.usable(chosen)  # one line for each checkpoint that cannot be loaded


def explore_each(progress) -> tuple[dict, dict]:
    """Each checkpoint's explored sentence, or why it could not be sampled."""
    results, errors = {}, {}
    for n, name in enumerate(chosen):
        try:
            results[name] = cached.explore(
                name,
                cached.where(name),
                text[:MAX_TEXT_CHARS],
                view.T,
                view.seed,
                SamplingSettings(),
                label,
            )
        except UQError as exc:
            errors[name] = guard.clean(str(exc))
        progress((n + 1) / len(chosen))
    return results, errors


results, errors = work.run(
    f"Sampling {len(chosen)} checkpoint(s) at T = {view.T}",
    explore_each,
    ("compare", text, tuple(chosen), view.T, view.seed, label),
)
for name, why in errors.items():
    st.error(f"**{name}**: {why}", icon="✋")
if not results:
    st.stop()
cmp = compare(results, {i.name: i.family for i in mine}, names, label)
target = names[cmp.target]
st.dataframe(cmp.table, hide_index=True, width="stretch")
if label is None:
    st.caption(
        f"No gold label: each row scores the class its checkpoint predicts; the "
        f"histograms below show p({plain(target)}), the class the first one predicts."
    )
c1, c2 = st.columns(2)
record = {
    "task": info.task,
    "checkpoints": ", ".join(results),
    "text": text[:MAX_TEXT_CHARS],
    "gold label": choice,
    "T": view.T,
    "seed": view.seed,
    "settings": "each checkpoint's own trained settings",
}  # inside each CSV
download(
    c1,
    "Download this table (CSV)",
    lambda: csv_text(cmp.table, record),
    f"compare-{info.task}-T{view.T}-seed{view.seed}.csv",
    "text/csv",
    key=K.CMP_TABLE_CSV,
)
download(
    c2,
    f"Download every sample's p({plain(target)}) (CSV)",
    lambda: csv_text(cmp.samples, {**record, "column values": f"p({target})"}),
    f"compare-samples-{info.task}-T{view.T}-seed{view.seed}.csv",
    "text/csv",
    key=K.CMP_SAMPLES_CSV,
)
st.plotly_chart(figures.compare_histograms(cmp.per_sample(), target), width="stretch")
st.caption(
    "Deterministic methods give a single spike; stochastic ones spread. The same "
    "sentence can look certain to one method and uncertain to another. Where the uncertainty "
    "lives, in the table: the spread of p over the samples, and how much the last layer's "
    "attention moves between them (the standard deviation of each attention weight across "
    "the samples, averaged). An attention family (STO, H-STO, BAM) moves the attention with "
    "its noise; a weight family (Laplace, an ensemble) moves it through the weights."
)
st.header("Mean attention of one head")
layers = min(int(i.config["n_layers"]) for i in mine if i.name in results)
heads = min(int(i.config["n_heads"]) for i in mine if i.name in results)
c1, c2 = st.columns(2)
layer = c1.selectbox("Layer", range(layers), index=layers - 1, key=K.CMP_LAYER)
head = c2.selectbox("Head", range(heads), key=K.CMP_HEAD)
groups = mean_attention(results, layer, head, WINDOW)
st.caption(
    f"Layer {layer}, head {head}: each checkpoint's attention, averaged over the samples it "
    "kept (rows: the tokens that attend, columns: the tokens they read; each row sums to 1), "
    "on one colour scale from 0 to 1."
)


def maps_grid(panels: dict, tokens: list[str], key: str) -> None:
    """One figure a checkpoint, titled by its name over its method's, in a grid of columns at
    least 270 px wide (app.py's style: three a row beside the sidebar at 1400 px, two at
    1024 px, one on a phone), so no map is a sliver and no title runs into another."""
    families = {i.name: i.family for i in mine}
    with st.container(key=key):
        for name, att in panels.items():
            fig = figures.attention_panels({family_title(families[name]): att}, tokens, name)
            fig.update_layout(coloraxis_colorbar_len=0.8)  # one panel: its bar gets the width
            st.plotly_chart(fig, width="stretch")


for i, (tokens, panels) in enumerate(groups):
    if len(groups) > 1:
        st.caption(f"Checkpoints that read the text as {len(tokens)} tokens: " + ", ".join(panels))
    maps_grid(panels, tokens, f"{K.CMP_MAPS}{i}")
