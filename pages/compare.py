"""Compare methods: one sentence through every checkpoint of a task, side by side."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from ui import cached, sidebar
from ui.catalog import label_names, presets, sort_key
from ui.compute import Overrides, summary
from ui.explore_views import WINDOW, mean_pm_var, sig
from uqcore.config import FAMILY_TITLES
from uqcore.errors import UQError
from viz import figures as F

view, info = sidebar.page("Compare methods on one sentence")
names = label_names(info)
mine = sorted((i for i in cached.infos() if i.task == info.task), key=sort_key)
examples = presets(info.task)
with st.form("compare"):
    text = st.text_area("Text", value=view.text or (examples[0].text if examples else ""),
                        height=80, key="cmp_text")  # fmt: skip
    choice = st.radio("Gold label", ("unknown", *names), horizontal=True, key="cmp_label",
                      index=0 if view.label is None else view.label + 1)  # fmt: skip
    chosen = st.multiselect("Checkpoints", [i.name for i in mine], default=[i.name for i in mine],
                            key="cmp_ckpts")  # fmt: skip
    st.form_submit_button("Compare", type="primary")
label = None if choice == "unknown" else names.index(choice)
if not chosen:
    st.info("Pick at least one checkpoint.")
    st.stop()
st.caption(f"T = {view.T}, seed {view.seed}; each checkpoint uses its own trained settings.")
results, rows = {}, []
bar = st.progress(0.0)
for n, name in enumerate(chosen):
    try:
        res = cached.explore(name, cached.where(name), text[:20_000], view.T, view.seed,
                             Overrides().key())  # fmt: skip
    except UQError as exc:
        st.error(f"{name}: {exc}", icon="✋")
        continue
    finally:
        bar.progress((n + 1) / len(chosen), name)
    results[name] = res
    s = summary(res["probs"], label)
    family = next(i.family for i in mine if i.name == name)
    rows.append({"checkpoint": name, "method": FAMILY_TITLES.get(family, family),
                 f"p({names[s['target']]}) mean ± var": mean_pm_var(s["p_mean"], s["p_var"]),
                 "correct / T" if label is not None else "samples agreeing":
                 f"{s['correct']}/{s['T']}", "entropy": round(s["entropy"], 4),
                 "mutual information": sig(s["mi"])})  # fmt: skip
bar.empty()
if not results:
    st.stop()
target = label if label is not None else int(next(iter(results.values()))["probs"].mean(0).argmax())
table = pd.DataFrame(rows)
st.dataframe(table, hide_index=True, width="stretch")
per_sample = {n: r["probs"][:, target] for n, r in results.items()}  # name -> p(target) [T]
samples = pd.DataFrame(per_sample)
samples.insert(0, "sample", range(len(samples)))
c1, c2 = st.columns(2)
c1.download_button("Download this table (CSV)", table.to_csv(index=False),
                   f"compare-{info.task}-T{view.T}-seed{view.seed}.csv", "text/csv",
                   key="cmp_table_csv")  # fmt: skip
c2.download_button(f"Download every sample's p({names[target]}) (CSV)",
                   samples.to_csv(index=False),
                   f"compare-samples-{info.task}-T{view.T}-seed{view.seed}.csv", "text/csv",
                   key="cmp_samples_csv")  # fmt: skip
st.plotly_chart(F.compare_histograms(per_sample, names[target]), width="stretch")
st.caption(
    "Deterministic methods give a single spike; stochastic ones spread. The same "
    "sentence can look certain to one method and uncertain to another."
)
st.header("Mean attention of one head")
layers = min(int(i.config["n_layers"]) for i in mine if i.name in results)
heads = min(int(i.config["n_heads"]) for i in mine if i.name in results)
c1, c2 = st.columns(2)
layer = c1.selectbox("Layer", range(layers), index=layers - 1, key="cmp_layer")
head = c2.selectbox("Head", range(heads), key="cmp_head")
tokens = next(iter(results.values()))["tokens"][:WINDOW]
w = len(tokens)
panels = {n: np.asarray(r["maps"][layer]["attention"][:, head, :w, :w], np.float32).mean(0)
          for n, r in results.items()}  # fmt: skip
for start in range(0, len(panels), 4):  # four maps per figure keeps each readable
    part = dict(list(panels.items())[start : start + 4])
    st.plotly_chart(F.attention_panels(part, tokens, f"Layer {layer}, head {head}: mean over "
                                       "the kept samples"), width="stretch")  # fmt: skip
