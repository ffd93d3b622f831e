"""Table 3: per-sentence statistics for one or several checkpoints, grouped by domain; the
paper's own cells beside ours for the sentences its Table 3 reports
(:mod:`uqlab.evaluation.paper`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import cached, data_source, guard, sidebar, work
from ui.logic import keys as K
from ui.logic.catalog import picker_labels, presets
from ui.logic.exports import csv_text, download, overrides
from ui.logic.format import plain
from ui.logic.inputs import MAX_ROWS, MAX_UPLOAD_BYTES, parse_csv, parse_lines, upload_mb
from ui.logic.progress import Rows
from ui.logic.tables import (
    MISSING,
    PAPER_COLUMNS,
    paper_cells,
    paper_setup,
    sentence_first,
    wide_tables,
)
from uqcore.settings import SamplingSettings
from uqlab.catalog.tasks import label_names
from uqlab.evaluation.paper import correct_cell, p_gold_cell
from uqlab.workbench import dataset
from uqlab.workbench.compute import table3_record

view, info = sidebar.page("Table 3: how sure is each model, sentence by sentence?")
st.caption(
    "The paper's Table 3: for each sentence, the mean ± variance over T samples of the "
    "probability of the gold label, and how many of the T samples are correct. T, seed "
    "and temperatures come from the sidebar."
)
names = label_names(info)
same_task = [i for i in cached.infos() if i.task == info.task]
chosen = st.multiselect(
    "Checkpoints",
    [i.name for i in same_task],
    default=[info.name],
    format_func=picker_labels(same_task).__getitem__,
)
source = st.radio(
    "Sentences",
    ("Examples", "Paste lines", "Upload CSV", "Your labelled file", "Random sample"),
    horizontal=True,
    key=K.T3_SOURCE,
)
rows, problems = [], []
if source == "Examples":
    rows = [(p.text, p.label, p.domain) for p in presets(info.task)]
elif source == "Paste lines":
    pasted = st.text_area(
        "One sentence per line; optionally `sentence<TAB>label<TAB>domain`",
        key=K.T3_PASTED,
        height=140,
    )
    rows, problems = parse_lines(pasted, names)
elif source == "Upload CSV":
    up = st.file_uploader(
        f"CSV with a `sentence` column (optional `label`, `domain`), at most "
        f"{upload_mb(MAX_UPLOAD_BYTES)} MB",
        type=["csv"],
        key=K.T3_UPLOAD,
        max_upload_size=upload_mb(MAX_UPLOAD_BYTES),
    )
    if up is not None:
        try:
            rows, problems = parse_csv(up.getvalue(), names)
        except ValueError as exc:
            st.error(str(exc), icon="✋")
elif source == "Your labelled file":  # any columns, label values mapped (ui.data_source)
    picked = data_source.your_file(names, "table3")
    if picked is not None:
        rows = [(text, gold, domain) for text, gold, domain, _ in picked.rows][:MAX_ROWS]
        if len(picked.rows) > MAX_ROWS:
            st.caption(f"The first {MAX_ROWS} labelled rows of {plain(picked.title)}.")
else:
    n = st.number_input("Sentences per domain", 1, MAX_ROWS // 2, 5, key=K.T3_N)
    rows = [
        (text, gold, domain) for text, gold, domain, _ in dataset.pick(info.task, int(n), view.seed)
    ]
for problem in problems[:10]:
    st.warning(problem)
unique = list(dict.fromkeys(rows))  # a repeated (sentence, label, domain) would be one row
if len(unique) < len(rows):
    st.caption(f"{len(rows) - len(unique)} repeated line(s) counted once.")
rows = unique
if not rows or not chosen:
    st.info("Add sentences and pick at least one checkpoint to fill the table.")
    st.stop()
st.caption(
    f"{len(rows)} sentence(s) × {len(chosen)} checkpoint(s), T = {view.T}, seed {view.seed}."
)
ov = view.overrides()
request = (tuple(rows), tuple(chosen), view.T, view.seed, ov)
if st.button("Compute the table", type="primary"):
    st.session_state[K.T3_REQUEST] = request
if st.session_state.get(K.T3_REQUEST) != request:  # computed on demand, kept across reruns
    st.stop()
chosen = guard.usable(chosen)  # one line for each checkpoint that cannot be loaded
if not chosen:
    st.stop()
if source == "Random sample":  # bundled examples: read from stored samples where they match
    st.caption(cached.stored_note(info.name, view.T, view.seed, ov))


def sample_table(progress) -> list[dict]:
    """One record per (checkpoint, sentence)."""
    done, out = Rows(len(rows) * len(chosen), progress), []
    for name in chosen:
        own = ov if name == info.name else SamplingSettings()  # overrides belong to the sidebar's
        every = cached.sampler(name, view.T, view.seed, own, done)(tuple(r[0] for r in rows))
        for (text, label, domain), probs in zip(rows, every, strict=True):
            out.append(table3_record(probs, name, text, label, domain))
    return out


records = work.run(
    f"Sampling {len(rows)} sentence(s) × {len(chosen)} checkpoint(s) at T = {view.T}",
    sample_table,
    (request, tuple(chosen)),
)
paper = [paper_cells(info.task, r["sentence"], r["gold"], names) for r in records]
extra = PAPER_COLUMNS if any(p != (MISSING, MISSING) for p in paper) else ()  # one of its rows
frame = pd.DataFrame(records)
for i, column in enumerate(extra):  # the paper's cells, "—" for a sentence it does not report
    frame[column] = [p[i] for p in paper]
frame["gold"] = frame["gold"].map(lambda g: "" if g is None or pd.isna(g) else names[int(g)])
ok = frame[frame["error"] == ""]
if len(ok) < len(frame):
    st.warning(
        f"{len(frame) - len(ok)} row(s) could not be read: "
        + frame.loc[frame["error"] != "", "error"].iloc[0]
    )
if ok.empty:
    st.stop()
unlabelled = ok["gold"] == ""
cells = ok.assign(
    stat=[
        p_gold_cell(m, v, small=True) + ("" if g else f" ({names[int(p)]})")
        for m, v, g, p in zip(ok["p_mean"], ok["p_var"], ok["gold"], ok["predicted"], strict=True)
    ],
    corr=[correct_cell(c, t) for c, t in zip(ok["correct"], ok["T"], strict=True)],
)
stat_name, corr_name = "p(gold) mean ± var", "correct/T"
if unlabelled.any():
    stat_name, corr_name = "p(gold, else predicted) mean ± var", "correct (else agreeing)/T"
    st.caption(
        "Sentences without a gold label are scored against the class each checkpoint "
        "predicts (named in brackets): p(predicted) and the samples that agree with it."
    )
if extra:
    st.caption(paper_setup(chosen, view.T, view.seed))
for domain, wide in wide_tables(cells, chosen, stat_name, corr_name, extra):
    st.subheader(plain(domain))
    st.dataframe(wide, hide_index=True, width="stretch", **sentence_first(wide))
record = {
    "task": info.task,
    "checkpoints": ", ".join(chosen),
    "T": view.T,
    "seed": view.seed,
    f"settings of {info.name}": ", ".join(f"{k} = {v}" for k, v in overrides(view).items()),
    "other checkpoints": "their own trained settings",
    **({"paper": paper_setup(chosen, view.T, view.seed)} if extra else {}),
}  # inside the CSV
download(
    st,
    "Download the table (CSV)",
    lambda: csv_text(frame, record),
    f"table3-{info.task}-T{view.T}-seed{view.seed}.csv",
    "text/csv",
)
