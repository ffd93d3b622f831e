"""Error analysis: every bundled evaluation example of the checkpoint's task, with its
prediction and uncertainty; sort, filter, and open any row in the explorer."""

from __future__ import annotations

import streamlit as st

from ui import cached, data_source, dataset_map, sidebar, work
from ui.explore_views import summary_metrics
from ui.logic import keys as K
from ui.logic import selection
from ui.logic.catalog import lac_scores
from ui.logic.exports import csv_text, download, overrides
from ui.logic.format import plain
from ui.logic.glossary import PAGE_T_HELP
from ui.logic.progress import Rows
from ui.logic.state import explorer_url
from ui.logic.tables import fitted
from uqcore.exceptions import InputError
from uqcore.stats import conformal_from_scores
from uqlab.catalog.tasks import label_names, task_title
from uqlab.workbench import dataset, dataset_views, report, slices
from uqlab.workbench.compute import Summary
from uqlab.workbench.notebook import Analysis

view, info = sidebar.page("Error analysis", selection=True)
names = label_names(info)
source = data_source.choose(
    names, task_title(info.task), "errors", bool(dataset.subsets(info.task))
)
if source is None:
    st.stop()
linked, _ = selection.parse(view.sel)  # the rows a figure or a slice selected (a link's)
if linked is not None and linked.mine != source.mine:
    st.warning(
        "The link selects rows of a visitor's labelled file, which a link cannot carry: "
        "choose your labelled file above and upload it again to see them."
        if linked.mine
        else "The link selects rows of the bundled examples: choose them above to see them."
    )
    linked = None
fresh = linked is not None and st.session_state.get(K.ERR_SEL_DONE) != view.sel
if fresh:  # the figure's T and examples, so the same rows are sampled
    st.session_state[K.ERR_T] = min(linked.T, 100)
    st.session_state[K.ERR_N] = min(linked.per, 5000 if source.mine else 2000)
    st.session_state[K.ERR_SEL_DONE] = view.sel
APPLY = (  # how the page's settings relate to the sidebar's
    "; the sidebar's temperatures apply, but T is this page's own (below), not the sidebar's "
    "Samples T."
)
if not source.mine:
    st.caption(
        f"{info.name} on the bundled {info.task} examples ("
        + ", ".join(f"{s}: {d}" for s, d in dataset.subsets(info.task))
        + f"), seed {view.seed}{APPLY}"
    )
else:
    st.caption(
        f"{info.name} on {plain(source.title)} ({len(source.rows):,} labelled rows), seed "
        f"{view.seed}{APPLY}"
    )
c1, c2 = st.columns(2)
T = c1.number_input(
    "T",
    1,
    100,
    dataset.DATASET_T,
    key=K.ERR_T,
    help=PAGE_T_HELP,
)
per = c2.number_input(
    "Rows per file (0 = all)" if source.mine else "Examples per domain (0 = all)",
    0,
    5000 if source.mine else 2000,
    0,
    step=100,
    key=K.ERR_N,
)
ov = view.overrides()
request = (info.name, int(T), int(per), view.seed, ov, source.key)
if not source.mine:
    note = cached.stored_note(info.name, int(T), view.seed, ov)
else:
    note = "Sampled here: your file has no stored results."
stored = note.startswith("Read")
if st.button("Compute", type="primary", key=K.ERR_GO) or stored or fresh:  # at once
    st.session_state[K.ERR_REQUEST] = request
if st.session_state.get(K.ERR_REQUEST) != request:
    st.info(f"Press Compute to sample every example. {note}")
    st.stop()
st.caption(note)
computed = st.session_state.get(K.ERR_FRAME)
if computed is None or computed[0] != request:  # filters and sorts below reuse this frame
    rows = dataset.pick(info.task, int(per) or None, view.seed, source.rows)
    early = st.empty()

    def sample_all(progress):
        done = Rows(len(rows), progress)
        return dataset.frame(
            rows,
            cached.sampler(info.name, T, view.seed, ov, on_rows=done),
            done.at_least,
            partial=lambda d: early.dataframe(
                d[["domain", "text", "p_gold", "correct", "mi"]], hide_index=True, height=240
            ),
        )

    try:
        df, skipped = work.run(
            f"Sampling {len(rows):,} examples at T = {int(T)}", sample_all, request
        )
    finally:
        early.empty()
    st.session_state[K.ERR_FRAME] = (request, df, skipped)
else:
    _, df, skipped = computed
if skipped:
    st.caption(f"{skipped} example(s) without a known word were skipped.")
if source.mine:  # the file's own report first: how well the model does on it
    for line in cached.headlines(df, view.seed):
        st.markdown(f"**{line.text()}**")  # numbers and a domain name: no visitor text
    st.caption(
        "Accuracy and expected calibration error (ECE) of the mean prediction over the T "
        "samples, with 95 % bootstrap intervals over the rows (1,000 resamples)."
    )
whole = df  # every example computed: the slices' table reads them all
if linked is not None:  # only the selected rows, said in words
    df = df[linked.mask(df, names)]
    c1, c2 = st.columns([4, 1])
    c1.info(f"Selected: {linked.words(df, names)}.")
    if c2.button("Show every row", key=K.ERR_SEL_CLEAR):
        st.session_state.pop(K.ERR_SLICE_PICK, None)
        sidebar.set_view(sel=None)
        st.rerun()
    if df.empty:
        st.stop()
VIEWS = dict(dataset_views.VIEWS)
calibration = lac_scores(info.metrics)
if calibration and len(names) == 2:
    sets = conformal_from_scores(calibration, 0.9, "lac")
    VIEWS["conformal set has both labels (90 %)"] = lambda d: dataset.conformal_members(
        d, sets
    ).all(1)
SORTS = dataset_views.SORTS
VIEW_KEYS = ("domain", "show", "sorted by")  # the record's filters: a report holds every row
c1, c2, c3 = st.columns(3)
sidebar.keep(K.ERR_DOMAIN, K.ERR_VIEW, K.ERR_SORT)  # the filters survive a recompute
domains = dataset.domains_of(df)
if st.session_state.get(K.ERR_DOMAIN) not in ("all", *domains):
    st.session_state.pop(K.ERR_DOMAIN, None)  # another source: its own domains
domain = c1.selectbox("Domain", ("all", *domains), key=K.ERR_DOMAIN)
which = c2.selectbox("Show", list(VIEWS), key=K.ERR_VIEW)
sort = c3.selectbox("Sort by", list(SORTS), key=K.ERR_SORT)
part = dataset_views.shown(df, which, sort, domain, VIEWS)
if part.empty:
    st.info("No example matches these filters.")
    st.stop()
record = {
    "checkpoint": info.name,
    "examples": source.title,
    "T": int(T),
    "seed": view.seed,
    **overrides(view),
    "examples per domain": int(per) or "all",
    "domain": domain,
    "show": which,
    "sorted by": sort,
}  # inside the exported files
with st.expander("Map of the dataset: where are the uncertain examples?", expanded=True):
    chosen = dataset_map.show(part, names, info.name, info.task, source.rows, record)
picked = part[part.index.isin(chosen or [])]
if not picked.empty:
    part = picked
    st.caption(f"{len(part):,} example(s) selected on the map (double-click it to clear).")
st.caption(f"{len(part):,} of {len(df):,} examples.")


table = part.assign(
    open=[
        explorer_url(view.replace(ckpt=info.name, text=t, label=int(g), T=int(T)))
        for t, g in zip(part["text"], part["gold"], strict=True)
    ],
    gold=part["gold"].map(lambda g: names[g]),
    pred=part["pred"].map(lambda p: names[p]),
    correct=[f"{c}/{t}" for c, t in zip(part["correct"], part["T"], strict=True)],
)[["open", "p_gold", "correct", "gold", "pred", "text", "domain", "var_gold", "entropy", "mi"]]
key = SORTS[sort]  # the column the rows are sorted by comes first, so it is never off-screen
table = table[["open", key, *(c for c in table.columns if c not in ("open", key))]]
st.dataframe(  # the numbers before the text, each column as wide as its header and values
    table,
    hide_index=True,
    width="stretch",
    height=560,
    column_config=fitted(
        table,
        open=st.column_config.LinkColumn("explore", display_text="open ↗", width="small"),
        text=st.column_config.TextColumn("text", width="large"),
        p_gold=st.column_config.NumberColumn(
            "p(gold)", format="%.3f", help="Mean over the T samples of p(gold label)."
        ),
        var_gold=st.column_config.NumberColumn(
            "var p(gold)", format="%.2e", help="Variance over the T samples of p(gold)."
        ),
        entropy=st.column_config.NumberColumn("entropy", format="%.3f"),
        mi=st.column_config.NumberColumn("mutual information", format="%.2e"),
    ),
)
top = table.head(200)
row = st.selectbox(
    "Open an example in the explorer (same checkpoint, T, seed and settings)",
    range(len(top)),
    key=K.ERR_OPEN,
    format_func=lambda i: f"{i + 1}. [{top['domain'].iloc[i]}] {top['text'].iloc[i][:90]}",
)
chosen = part.iloc[row]
summary_metrics(Summary.of_row(chosen), names, gold=True)
st.link_button(
    "Open in the explorer ↗",
    top["open"].iloc[row],
    type="primary",
    help="The explorer shows the same numbers for this sentence.",
)
report_of = Analysis.of(  # every row computed, whatever the filters show
    info,
    whole,
    {k: v for k, v in record.items() if k not in VIEW_KEYS},
    source.mine,
    view.seed,
    skipped,
)
record["selected on the map"] = len(picked) or "none"
left, right = st.columns(2)
download(
    right,
    "Download a report of every row (HTML)",
    lambda a=report_of: report.build([a]).encode("utf-8"),
    f"report-{info.name}-T{int(T)}-seed{view.seed}.html",
    "text/html",
    help="One file that opens offline: the summary with intervals, reliability, "
    "risk-coverage, the worst errors, the most uncertain rows, slices, the card, the settings.",
)
download(
    left,
    "Download these rows (CSV)",
    lambda: csv_text(part, record),
    f"errors-{info.name}-T{int(T)}-seed{view.seed}.csv",
    "text/csv",
)

st.subheader("Slices: which groups of examples is the model unsure about?")
c1, c2 = st.columns([1, 2])
by = c1.selectbox("Group every example by", slices.BY, key=K.ERR_SLICE_BY)
pattern = c2.text_input(
    "Word or pattern (a regular expression, any case)",
    key=K.ERR_SLICE_PATTERN,
    max_chars=slices.MAX_PATTERN,
    disabled=by != "word or pattern",
    placeholder="e.g. not|never",
)
try:
    sliced = slices.table(whole, by, names, pattern)
except InputError as exc:
    st.info(str(exc))
else:
    event = st.dataframe(
        sliced,
        hide_index=True,
        width="stretch",
        key=K.ERR_SLICE_PICK,
        on_select="rerun",
        selection_mode="single-row",
        column_config=fitted(
            sliced,
            accuracy=st.column_config.NumberColumn("accuracy", format="%.3f"),
            ECE=st.column_config.NumberColumn("ECE", format="%.3f"),
            **{"mean MI": st.column_config.NumberColumn("mean MI", format="%.2e")},
        ),
    )
    st.caption(
        "All the examples computed above (not only the filtered rows): each slice's "
        "accuracy of the mean prediction, its expected calibration error and its mean "
        "mutual information, side by side. Click a row to show that slice's examples above "
        "(the link in the address bar then reopens them)."
    )
    clicked = event.selection.rows if event is not None else []
    if clicked and by in selection.LINK_BY:
        group = str(sliced["slice"].iloc[clicked[0]])
        chosen_slice = selection.Selection(
            "slice", int(T), int(per), by=by, group=group, mine=source.mine
        ).encode()
        if chosen_slice != view.sel:
            sidebar.set_view(sel=chosen_slice)
            st.session_state[K.ERR_SEL_DONE] = chosen_slice  # T and examples already these
            st.rerun()
    elif clicked:
        st.caption("A slice by a pattern filters nothing above: a link never carries one.")
