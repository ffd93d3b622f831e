"""Temperature sweep (the paper's Figure 3, interactive): change tau at inference and watch
accuracy and uncertainty in and out of domain."""

from __future__ import annotations

import streamlit as st

from ui import cached, data_source, guard, sidebar, work
from ui.logic import keys as K
from ui.logic import sweep
from ui.logic.catalog import sort_key
from ui.logic.exports import csv_text, download
from ui.logic.progress import Rows
from uqcore.settings import SamplingSettings
from uqlab.catalog.tasks import label_names, task_title
from uqlab.workbench import dataset, figures

view, info = sidebar.page("Temperature sweep", needs_checkpoint=False)
st.caption(
    "The paper trains STO-TRANS and H-STO-TRANS at fixed temperatures (its Figure 3 "
    "retrains per value); here the trained model is kept and the temperature changes at "
    "inference only, on a sample of the bundled examples or every row of your labelled file."
)
ok = sorted(sweep.sweepable(cached.infos()), key=sort_key)
if not ok:
    st.info("No checkpoint with a temperature to sweep (STO-TRANS, H-STO-TRANS) is available.")
    st.stop()
names = [i.name for i in ok]
default = names.index(info.name) if info is not None and info.name in names else 0
name = st.selectbox("Checkpoint", names, index=default, key=K.SW_CKPT)
ck = next(i for i in ok if i.name == name)
labels = {"tau2": "tau2 (attention over values)", "tau1": "tau1 (keys → centroids)"}
swept = st.radio("Sweep", sweep.knobs(ck), horizontal=True, key=K.SW_WHICH, format_func=labels.get)
grid = st.multiselect(  # its own row: at 1024x768 a third of one clipped the last value
    f"{swept} values",
    sorted({*sweep.GRID, sweep.trained(ck, swept)}),
    default=list(sweep.DEFAULT_GRID),
    key=K.SW_GRID,
)
c2, c3, _ = st.columns(3)
T = c3.number_input(
    "T",
    2,
    50,
    10,
    key=K.SW_T,
    help="Samples per example at each value; the sidebar's T is for the other pages (a sweep "
    "draws T samples of every example for each value, so it keeps its own, smaller one).",
)
for other in sweep.knobs(ck):
    if other != swept:
        st.caption(f"{other} stays at its trained value {sweep.trained(ck, other):g}.")
picked = data_source.choose(
    label_names(ck), task_title(ck.task), "sweep", bool(dataset.subsets(ck.task))
)
if picked is None:
    st.stop()
if picked.mine:  # a visitor's file: every row unless they cap it
    per = c2.number_input(
        "Rows per file (0 = all)",
        0,
        5000,
        0,
        step=100,
        key=K.SW_N_MINE,
        help="Each value of the sweep samples every row; cap it for a quicker sweep.",
    )
else:
    per = c2.number_input("Examples per domain", 10, 500, 60, step=10, key=K.SW_N)
request = (name, swept, tuple(sorted(grid)), int(per), int(T), view.seed, picked.key)
if st.button("Run the sweep", type="primary", key=K.SW_GO):
    st.session_state[K.SW_REQUEST] = request
if st.session_state.get(K.SW_REQUEST) != request or not grid:
    st.info("Pick values and press Run (each value samples every example; results are cached).")
    st.stop()
if not guard.usable([name]):  # says why this checkpoint cannot be loaded
    st.stop()
rows = dataset.pick(ck.task, int(per) or None, view.seed, picked.rows)


def sweep_all(progress):
    done = Rows(len(rows) * len(grid), progress)
    sampler = cached.grid_sampler(name, T, view.seed, done)
    return sweep.records(
        rows,
        lambda texts, values: sampler(texts, [SamplingSettings(**{swept: v}) for v in values]),
        grid,
        lambda f, v: done.at_least(f),
    )


table = work.run(
    f"Sweeping {swept} over {len(grid)} values ({len(rows):,} examples each)", sweep_all, request
)
if table.empty:
    st.warning(
        "None of these examples can be sampled by this checkpoint (every text is empty or has "
        "no word it knows): pick other examples or another checkpoint."
    )
    st.stop()
st.plotly_chart(figures.sweep_figure(table, swept), width="stretch")
st.caption(
    "Low temperatures make the Gumbel-softmax samples sharper and more varied; high ones "
    "flatten attention toward the average. The paper's point: a small tau1 with a large "
    "tau2 keeps in-domain accuracy while out-of-domain inputs stay uncertain."
)
st.dataframe(table, hide_index=True)
record = {
    "checkpoint": name,
    "swept": swept,
    "values": ", ".join(f"{v:g}" for v in sorted(grid)),
    **{k: sweep.trained(ck, k) for k in sweep.knobs(ck) if k != swept},
    "examples": picked.title,
    "examples per domain": int(per) or "all",
    "T": int(T),
    "seed": view.seed,
}  # inside the CSV
download(
    st, "Download (CSV)", lambda: csv_text(table, record), f"sweep-{name}-{swept}.csv", "text/csv"
)
