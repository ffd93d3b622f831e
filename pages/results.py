"""Results: the paper's Tables 1-2 beside ours, then calibration, uncertainty and OOD detection
recomputed here on the bundled evaluation subsets."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import cached, dataset, sidebar
from ui.catalog import TASK_TITLES, sort_key
from ui.compute import Overrides
from uqlab.results import PAPER_TABLE1, PAPER_TABLE2
from viz import figures as F

sidebar.ensure_router()

view, info = sidebar.current()
st.title("Results")
infos = sorted(cached.infos(), key=sort_key)
tasks = sorted({i.task for i in infos})
if not tasks:
    st.info("No checkpoints to report: train and evaluate some (`scripts/retrain.sh all`).")
    st.stop()
task = st.radio("Task", tasks, horizontal=True, format_func=lambda t: TASK_TITLES.get(t, t),
                index=tasks.index(info.task) if info and info.task in tasks else 0)  # fmt: skip
key, paper = ("mcc", PAPER_TABLE2) if task == "cola" else ("accuracy", PAPER_TABLE1)
scale = 100
mine = [i for i in infos if i.task == task]


def cell(m: dict | None, side: str) -> str:
    if not m:
        return "not evaluated"
    s = m[side]
    return f"{scale * s[f'{key}_mean']:.2f} ± {scale * s[f'{key}_std']:.2f}"


base = next((i.metrics for i in mine if i.family == "trans" and i.metrics), None)
rows = []
for i in mine:
    m = i.metrics
    p = paper.get(i.name, ("—", "—", "—"))
    det = (m or {}).get("ood_detection", {}).get("mutual_information", {})
    rows.append({
        "checkpoint": i.name, "ours ID": cell(m, "id"), "ours OOD": cell(m, "ood"),
        "Δ ID vs TRANS": f"{scale * (m['id'][f'{key}_mean'] - base['id'][f'{key}_mean']):+.2f}"
        if m and base else "—",
        "paper row": p[0], "paper ID": p[1], "paper OOD": p[2],
        "ECE (ID)": round(m["id"]["ece"], 4) if m else None,
        "MI ID → OOD": f"{m['id']['mean_mutual_information']:.4f} → "
        f"{m['ood']['mean_mutual_information']:.4f}" if m else "—",
        "AUROC (MI)": round(det["auroc"], 3) if det else None,
    })  # fmt: skip
unit = "MCC × 100" if task == "cola" else "accuracy %"
st.subheader(f"{'Table 2' if task == 'cola' else 'Table 1'}: {unit}, mean ± std over T runs")
table = pd.DataFrame(rows)
st.dataframe(table, hide_index=True, width="stretch")
st.download_button("Download this table (CSV)", table.to_csv(index=False),
                   f"results-{task}.csv", "text/csv", key="res_table_csv")  # fmt: skip
st.caption("Ours: each checkpoint's metrics.json, written by `python -m uqlab.evaluate` on the "
           "full test and out-of-domain sets (T = 10, the paper's protocol). Paper: quoted from "
           "its tables. docs/results.md has the full set of metrics.")  # fmt: skip

st.header("On the bundled evaluation subsets")
st.caption(
    "Recomputed here, example by example, so every row matches the explorer: "
    + ", ".join(f"{s} ({d})" for s, d in dataset.SUBSETS[task])
    + "."
)
c1, c2, c3 = st.columns([3, 1, 1])
chosen = c1.multiselect("Checkpoints", [i.name for i in mine],
                        default=[i.name for i in mine if i.family in ("hsto", "trans")][:2] or
                        [mine[0].name], key="res_ckpts")  # fmt: skip
T = c2.number_input("T", 1, 100, 10, key="res_T", help="Samples per example (paper: 10).")
per = c3.number_input(
    "Examples per domain",
    20,
    2000,
    300,
    step=50,
    key="res_n",
    help="Drawn with the sidebar's seed from each bundled subset.",
)
score = st.selectbox("OOD score", list(dataset.SCORES), format_func=lambda s:
                     dataset.SCORES[s][1], key="res_score")  # fmt: skip
request = (tuple(chosen), int(T), int(per), view.seed)
if st.button("Compute", type="primary", key="res_go"):
    st.session_state["res_request"] = request
if st.session_state.get("res_request") != request or not chosen:
    st.info("Pick checkpoints and press Compute (about 5-20 s per checkpoint the first time).")
    st.stop()
rows = dataset.pick(task, int(per), view.seed)
frames = {}
bar = st.progress(0.0)
for n, name in enumerate(chosen):
    frame, skipped = dataset.frame(
        rows, cached.sampler(name, T, view.seed, Overrides().key()),
        lambda f, n=n, c=name: bar.progress((n + f) / len(chosen), f"{c}: {f:.0%}"),
    )  # fmt: skip
    frames[name] = frame
    if skipped:
        st.caption(f"{name}: {skipped} example(s) without a known word skipped.")
bar.empty()
st.session_state["res_frames"] = frames
left, right = st.columns(2)
with left:
    st.plotly_chart(F.reliability_figure({n: dataset.reliability(f) for n, f in frames.items()}),
                    width="stretch")  # fmt: skip
    st.caption("A calibrated model's confidence matches its accuracy: points on the diagonal.")
with right:
    st.plotly_chart(F.roc_figure({n: dataset.roc(f, score) for n, f in frames.items()},
                                 dataset.SCORES[score][1]), width="stretch")  # fmt: skip
    st.caption("Higher curves separate out-of-domain inputs better by their uncertainty.")
every = pd.concat([f.assign(checkpoint=n) for n, f in frames.items()], ignore_index=True)
st.download_button("Download the per-example values (CSV)", every.to_csv(index=False),
                   f"results-{task}-T{int(T)}-seed{view.seed}.csv", "text/csv",
                   key="res_rows_csv")  # fmt: skip
column, label = dataset.SCORES[score]
for name, frame in frames.items():
    values = {d: frame.loc[frame["domain"] == d, column] for d in ("in-domain", "out-of-domain")}
    st.plotly_chart(F.domain_histograms(values, label, f"{name}: {label} by domain"),
                    width="stretch")  # fmt: skip
