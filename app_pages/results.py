"""Results: the paper's Tables 1-2 beside ours, then calibration, uncertainty and OOD detection
recomputed here on the bundled evaluation subsets."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import cached, data_source, guard, linked, sidebar, work
from ui.logic import keys as K
from ui.logic import selection
from ui.logic.catalog import lac_scores, sort_key
from ui.logic.exports import csv_text, download
from ui.logic.glossary import PAGE_T_HELP
from ui.logic.progress import Rows
from ui.logic.tables import fitted
from uqcore.settings import SamplingSettings
from uqcore.stats import conformal_from_scores
from uqlab.catalog.tasks import TASKS, get_task, label_names, task_title
from uqlab.evaluation.comparison import SHORT
from uqlab.evaluation.comparison_report import CAPTION as COMPARISON_CAPTION
from uqlab.evaluation.comparison_report import comparison_rows, left_out, verdict_lines
from uqlab.evaluation.detection_report import (
    backwards_notes,
    detection_rows,
    length_notes,
    temperature_lines,
)
from uqlab.evaluation.paper import PAPER_FAMILIES, metric_table
from uqlab.evaluation.two_models import sentence as pair_sentence
from uqlab.results import metric_rows
from uqlab.workbench import dataset, dataset_views, figures, report, worth
from uqlab.workbench.notebook import Analysis, Paired

view, info = sidebar.page("Results", needs_checkpoint=False)
infos = sorted(cached.infos(), key=sort_key)
tasks = sorted({i.task for i in infos} & set(TASKS))
if not tasks:
    st.info(
        "No checkpoints to report. For whoever runs this server: train and evaluate some "
        "(`bash scripts/retrain.sh all`)."
    )
    st.stop()
task = st.radio(
    "Task",
    tasks,
    horizontal=True,
    format_func=task_title,
    index=tasks.index(info.task) if info and info.task in tasks else 0,
)
mine = [i for i in infos if i.task == task]
rows = metric_rows(task, [(i.name, i.metrics) for i in mine])
paper = metric_table(task)
unit = get_task(task).metric_spec.table_unit
st.subheader(f"{f'Table {paper.number}: ' if paper else ''}{unit}, mean ± std over T runs")
table = pd.DataFrame(rows)
st.dataframe(
    table, hide_index=True, width="stretch", column_config=fitted(table, pinned="checkpoint")
)  # names whole, never cut
source = {
    "task": task,
    "ours": "each checkpoint's metrics.json (its evaluation, uqlab.evaluate, T = 10)",
    "paper": "quoted from its tables",
}  # inside the CSV
download(
    st,
    "Download this table (CSV)",
    lambda: csv_text(table, source),
    f"results-{task}.csv",
    "text/csv",
    key=K.RES_TABLE_CSV,
)
st.caption(
    "Ours: each checkpoint's metrics.json, written by its evaluation on the test and "
    'out-of-domain sets (T = 10, the paper\'s protocol; "texts" says how many, "part" where '
    'it read only the first texts of each shuffled set; "ID, mean prediction": the accuracy '
    "of the mean of the T predictions, what an ensemble or a posterior predicts); a checkpoint "
    "without one (an upload, an import) is sampled below when you press Compute. Paper: "
    "quoted from its tables. "
    "docs/results.md has the full set of metrics."
)

caught = detection_rows((i.name, i.metrics) for i in mine)
if caught:
    st.subheader("What the uncertainty catches")
    st.caption(
        "Errors: how well each score ranks the model's own mistakes on the in-domain test "
        "set (AUROC: 0.5 is chance; AURC: the mean error rate when texts are kept "
        "most-certain-first, lower is better). OOD at equal length: the out-of-domain AUROC "
        "of MI within bins of tokens read where both domains hold 20+ texts. If a score "
        "separates the domains overall but not within a bin, it is measuring length. "
        "Lengths matched: both domains drawn to the same lengths, with the texts kept a side "
        "(where the task names out-of-domain texts cut to its own form, such as CR's IMDB "
        "reviews cut into sentences, those are drawn and named in the cell). "
        "MI − 1−p: MI's AUROC for the errors minus 1 − max p's on the same texts, with a 95 % "
        "paired bootstrap interval: better, tie or worse. "
        "1−p: 1 − max p; tokens: the length each text is read at (the training length)."
    )
    frame = pd.DataFrame(caught)
    st.dataframe(
        frame, hide_index=True, width="stretch", column_config=fitted(frame, pinned="checkpoint")
    )
    for note in backwards_notes((i.name, i.metrics) for i in mine):
        st.warning(note)
    for note in length_notes((i.name, i.metrics) for i in mine):  # equal length: all "—"
        st.info(note)


stored_worth = comparison_rows((i.name, i.metrics) for i in mine)
if stored_worth:
    st.subheader("Which uncertainty is worth having")
    st.caption(COMPARISON_CAPTION)
    worth_frame = worth.answer_first(pd.DataFrame(stored_worth))
    st.dataframe(
        worth_frame,
        hide_index=True,
        width="stretch",
        column_config=fitted(worth_frame, pinned="checkpoint"),
    )
    download(
        st,
        "Download this comparison (CSV)",
        lambda: csv_text(
            worth_frame, {"task": task, "from": "each checkpoint's metrics.json -> comparison"}
        ),
        f"comparison-{task}.csv",
        "text/csv",
        key=K.RES_COMPARISON_CSV,
    )
    for line in verdict_lines((i.name, i.metrics) for i in mine):
        st.info(line)
    if missing := left_out((i.name, i.metrics) for i in mine):
        st.caption(missing)
st.header("Example by example")
picked = data_source.choose(get_task(task).label_names, task_title(task), "results")
if picked is None:
    st.stop()
st.caption(
    "Recomputed here, example by example, so every row matches the explorer: "
    + (picked.title if picked.mine else ", ".join(f"{s} ({d})" for s, d in dataset.subsets(task)))
    + "."
)
c1, c2, c3 = st.columns([3, 1, 1])
chosen = sidebar.multiselect(
    c1,
    "Checkpoints",
    [i.name for i in mine],
    [i.name for i in mine if i.family in PAPER_FAMILIES][:2] or [mine[0].name],
    K.RES_CKPTS,
    follow=info.name if info else None,
)  # the sidebar's first
T = c2.number_input(
    "T",
    1,
    100,
    dataset.DATASET_T,
    key=K.RES_T,
    help=PAGE_T_HELP,
    persist_state="session",
)
if picked.mine:  # a visitor's file: every row unless they cap it
    per = c3.number_input(
        "Rows per file (0 = all)",
        0,
        5000,
        0,
        step=100,
        key=K.RES_N_MINE,
        persist_state="session",
        help="Drawn with the sidebar's seed from each of your files; 0 uses every row.",
    )
else:
    per = c3.number_input(
        "Examples per domain",
        20,
        2000,
        300,
        step=50,
        key=K.RES_N,
        persist_state="session",
        help="Drawn with the sidebar's seed from each bundled domain.",
    )
score = st.selectbox(
    "OOD score",
    list(dataset.SCORES),
    format_func=lambda s: dataset.SCORES[s][1],
    key=K.RES_SCORE,
    persist_state="session",
)
request = (tuple(chosen), int(T), int(per), view.seed, picked.key)
own = SamplingSettings()
notes = {
    name: cached.stored_note(name, int(T), view.seed, own)
    if not picked.mine
    else "sampled here: your file has no stored results"
    for name in chosen
}
stored = bool(chosen) and all(n.startswith("Read") for n in notes.values())
if st.button("Compute", type="primary", key=K.RES_GO) or stored:  # stored: read at once
    st.session_state[K.RES_REQUEST] = request
if picked.mine:
    st.caption("Sampled here: your file has no stored results.")
else:
    for name, note in notes.items():
        st.caption(f"{name}: {note}")
if not chosen:
    st.info("Pick at least one checkpoint above, then press Compute.")
    st.stop()
if st.session_state.get(K.RES_REQUEST) != request:
    st.info(f"Press Compute to sample {'your file' if picked.mine else 'the examples'}.")
    st.stop()
chosen = guard.usable(chosen)  # one line for each checkpoint that cannot be loaded
if not chosen:
    st.stop()
rows = dataset.pick(task, int(per) or None, view.seed, picked.rows)
by_name = {i.name: i for i in mine}
bases = worth.baselines_of(chosen, mine) if picked.mine else {}  # sampled on the file too
extra = [b for b in dict.fromkeys(bases.values()) if b and b not in chosen]
extra = guard.usable(extra) if extra else []  # the baselines that can be sampled
everyone = chosen + extra


def sample_every(progress) -> dict:
    """Each checkpoint's frame on ``rows`` (the chosen ones, then the baselines they are
    compared with on a visitor's file) and how many rows it skipped."""
    done, out = Rows(len(rows) * len(everyone), progress), {}
    for n, name in enumerate(everyone):
        out[name] = dataset.frame(
            rows,
            cached.sampler(name, T, view.seed, SamplingSettings(), done),
            lambda f, n=n: done.at_least((n + f) / len(everyone)),
            sidebar.temperature_of(by_name[name]),
        )
    return out


got = work.run(
    f"Sampling {len(rows):,} examples × {len(everyone)} checkpoint(s) at T = {int(T)}",
    sample_every,
    (request, tuple(everyone)),
)
sampled = {name: frame for name, (frame, _) in got.items()}
frames = {name: sampled[name] for name in chosen if name in sampled}
got = {name: got[name] for name in frames}
for name, (_, skipped) in got.items():
    if skipped:
        st.caption(f"{name}: {skipped} example(s) without a known word skipped.")
if picked.mine:  # the file's report: one line per checkpoint and file
    lines = [(n, h) for n, f in frames.items() for h in cached.headlines(f, view.seed)]
    several = len({h.domain for _, h in lines}) > 1  # the out-of-domain file too
    summary = pd.DataFrame(
        [
            {"checkpoint": n, **({"file": h.domain} if several else {}), **h.cells()}
            for n, h in lines
        ]
    )
    st.subheader(f"On {picked.title}")
    st.dataframe(
        summary,
        hide_index=True,
        width="stretch",
        column_config=fitted(summary, pinned="checkpoint"),
    )
    st.caption(
        "Accuracy and expected calibration error (ECE) of each checkpoint's mean prediction "
        "over the T samples, with 95 % bootstrap intervals over the rows (1,000 resamples)"
        + ("; macro-F1 with more than two classes." if len(get_task(task).label_names) > 2 else ".")
    )
    compared, n_rows = cached.file_comparison(
        sampled, worth.recorded(by_name, list(sampled)), bases, view.seed
    )
    st.subheader("Which uncertainty is worth having, on your file")
    if compared:
        said = worth.entries(compared, by_name)
        shown = worth.file_table(comparison_rows(said), compared)
        st.dataframe(
            shown,
            hide_index=True,
            width="stretch",
            column_config=fitted(shown, pinned="checkpoint"),
        )
        st.caption(worth.caption(n_rows, compared, extra))
        download(
            st,
            "Download this comparison (CSV)",
            lambda: csv_text(
                shown,
                {"task": task, "file": picked.title, "T": int(T), "seed": view.seed}
                | {"rows": n_rows, "baselines sampled": ", ".join(extra) or "none"},
            ),
            f"comparison-{task}-your-file-T{int(T)}-seed{view.seed}.csv",
            "text/csv",
            key=K.RES_FILE_COMPARISON_CSV,
        )
        for line in verdict_lines(said):
            st.info(line)
    else:
        st.info(worth.too_few(n_rows))
pool = sampled if picked.mine else frames  # a visitor's file: the baselines sampled too
pair_block = None  # the paired verdict shown, for the report
if len(pool) >= 2:
    st.subheader("Two checkpoints, paired" + (" on your file" if picked.mine else ""))
    names = list(pool)
    first, second = worth.pair_defaults(names, by_name)
    c_a, c_b, c_s = st.columns([2, 2, 1])
    a = c_a.selectbox("A", names, index=first, key=K.RES_PAIR_A)
    b = c_b.selectbox("B", names, index=second, key=K.RES_PAIR_B)
    pair_score = c_s.selectbox(
        "Uncertainty for errors",
        list(worth.COLUMNS),
        format_func=lambda s: SHORT[s],
        key=K.RES_PAIR_SCORE,
        help="Whose AUROC for each model's own errors is compared: the same score for both.",
    )
    if not st.session_state.get(K.RES_PAIR_ON):  # once pressed: every pair at once, no button
        st.button(
            "Compare A and B",
            key=K.RES_PAIR_GO,
            help="Paired bootstraps: a few seconds on 5,000 rows.",
            on_click=st.session_state.__setitem__,
            args=(K.RES_PAIR_ON, True),
        )
    opened = bool(st.session_state.get(K.RES_PAIR_ON))  # before: the button says what to do
    if a == b:
        st.info("Pick two different checkpoints as A and B.")
    block, n_pair = (
        cached.pair(pool[a], pool[b], a, b, pair_score, view.seed)
        if opened and a != b
        else (None, None)
    )
    if n_pair is None:
        pass  # not asked yet, or A = B (said above)
    elif block is None:
        st.info(worth.too_few_pair(n_pair, picked.mine))
    else:
        pair_block = block
        paired = worth.pair_table(block)
        st.dataframe(
            paired, hide_index=True, width="stretch", column_config=fitted(paired, pinned="metric")
        )
        st.info(pair_sentence(block))
        st.caption(worth.pair_caption(block))
        pair_record = {"task": task, "rows": block["n"], "T": int(T), "seed": view.seed}
        pair_record |= {"A": a, "B": b, "file": picked.title}
        download(
            st,
            "Download the paired verdict (CSV)",
            lambda: csv_text(paired, pair_record),
            f"paired-{task}-T{int(T)}-seed{view.seed}.csv",
            "text/csv",
            key=K.RES_PAIR_CSV,
        )


def offer(name: str, key: str, kind: str, **where) -> None:
    """The button to the rows a figure's click selected (checkpoint ``name``'s; ``where``: the
    :class:`ui.logic.selection.Selection` fields of ``kind``), on these rows, T and file."""
    picked_rows = selection.Selection(kind, int(T), int(per), mine=picked.mine, **where)
    linked.offer(picked_rows, name, frames[name], label_names(by_name[name]), key)


left, right = st.columns(2)
with left:
    curves = dataset_views.reliability_curves(frames)
    rel_event = st.plotly_chart(
        dataset_views.reliability(frames, picked.mine, curves),
        width="stretch",
        key=K.RES_REL_PICK,
        on_select="rerun",
        selection_mode="points",
    )
    st.caption(
        "A calibrated model's confidence matches its accuracy: points on the diagonal. "
        "Temperature-scaled: every sample's logits divided by the temperature fitted on "
        "the dev split (for checkpoints evaluated with it). Click a marker to see its examples."
    )
    got_bin = selection.picked_bin(rel_event, list(curves))
    if got_bin is not None and got_bin[0] in frames:
        bin_name, bin_index = got_bin
        offer(bin_name, K.RES_OPEN_BIN, "bin", bin=bin_index)
    elif got_bin is not None:
        st.caption("A temperature-scaled marker bins other confidences: click an unscaled one.")
    for note in temperature_lines((n, by_name[n].metrics) for n in frames if n in by_name):
        st.warning(note)  # the scaled curve is drawn: say where scaling made ECE worse
with right:
    if dataset_views.with_ood(frames):
        rocs = dataset_views.rocs(frames, score)
        roc_event = st.plotly_chart(
            dataset_views.roc(frames, score, rocs),
            width="stretch",
            key=K.RES_ROC_PICK,
            on_select="rerun",
            selection_mode="points",
        )
        st.caption(
            "Higher curves separate out-of-domain inputs better by their uncertainty. Click a "
            "point to see the texts its threshold flags."
        )
        got_flag = selection.picked_flag(roc_event, rocs)
        if got_flag is not None:
            offer(got_flag[0], K.RES_OPEN_FLAG, "flag", score=score, lo=got_flag[1])
    else:
        st.info(
            "Your file has no out-of-domain part: add an out-of-domain file above to see how "
            "well uncertainty tells the two apart."
            if picked.mine
            else "This task has no out-of-domain examples, so there is no out-of-domain "
            "detection to show."
        )
rc_event = st.plotly_chart(
    dataset_views.risk_coverage(frames, picked.mine),
    width="stretch",
    key=K.RES_RC_PICK,
    on_select="rerun",
    selection_mode="points",
)
st.caption(
    "Selective prediction: answer only the most confident share of the inputs. A lower "
    "curve (smaller AURC) means the model's confidence ranks its own errors last; the "
    "oracle ranks every error last, random selection keeps the overall error rate. Click a "
    "point of a curve to see the examples answered up to it."
)
sizes = {n: len(dataset.in_domain(f)) for n, f in frames.items()}
got_top = selection.picked_top(rc_event, list(frames), sizes)
if got_top is not None:
    offer(got_top[0], K.RES_OPEN_TOP, "top", top=got_top[1])
st.subheader("Confusion matrices")
cells, clicked = st.columns(min(2, len(frames))), []
for n_cell, (name, frame) in enumerate(frames.items()):
    with cells[n_cell % len(cells)]:
        labels = label_names(by_name[name])
        cell_event = st.plotly_chart(
            dataset_views.confusion(name, frame, labels, picked.mine),
            width="stretch",
            key=f"{K.RES_CELL_PICK}{n_cell}",
            on_select="rerun",
            selection_mode="points",
        )
        got_cell = selection.picked_cell(cell_event)
        if got_cell is not None:
            clicked.append((name, n_cell, *got_cell))
for name, n_cell, gold, pred in clicked:  # full width: the button says what it opens
    offer(name, f"{K.RES_OPEN_CELL}{n_cell}", "cell", gold=gold, pred=pred)
st.caption(
    "Rows: the gold label; columns: the class of the mean prediction. Click a cell to see its "
    "texts in Error analysis."
)
conformal = []
for name, frame in frames.items():
    scores = lac_scores(by_name[name].metrics)
    if not scores:
        continue
    sets = conformal_from_scores(scores, 0.9, "lac")
    for domain, r in dataset.conformal_rows(frame, sets).items():
        conformal.append(
            {
                "checkpoint": name,
                "domain": domain,
                "coverage": f"{r['coverage']:.1%}",
                "mean set size": r["mean_size"],
            }
        )
if conformal:
    st.subheader("Conformal sets at 90 % coverage")
    st.dataframe(
        pd.DataFrame(conformal),
        hide_index=True,
        width="stretch",
        column_config={"mean set size": st.column_config.NumberColumn(format="%.2f")},
    )
    st.caption(
        "Split-conformal (LAC) sets calibrated on each checkpoint's dev split: in domain "
        "the coverage should be about 90 %; out of domain the guarantee does not hold, "
        "and larger sets there are the uncertainty showing."
    )
every = pd.concat([f.assign(checkpoint=n) for n, f in frames.items()], ignore_index=True)
record = {
    "task": task,
    "examples": picked.title,
    "checkpoints": ", ".join(frames),
    "T": int(T),
    "seed": view.seed,
    "examples per domain": int(per) or "all",
    "settings": "each checkpoint's own trained settings",
}
reported = [
    Analysis.of(by_name[n], f, record, picked.mine, view.seed, got[n][1]) for n, f in frames.items()
]
left, right = st.columns(2)
download(
    left,
    "Download the per-example values (CSV)",
    lambda: csv_text(every, record),
    f"results-{task}-T{int(T)}-seed{view.seed}.csv",
    "text/csv",
    key=K.RES_ROWS_CSV,
)
download(
    right,
    "Download the report (HTML)",
    lambda shown=reported, block=pair_block, s=score: report.build(
        shown, Paired(block) if block else None, s
    ).encode("utf-8"),
    f"report-{task}-T{int(T)}-seed{view.seed}.html",
    "text/html",
    key=K.RES_REPORT,
    help="One file that opens offline: the summary with intervals, the paired verdict when "
    "you compared two, reliability, risk-coverage, out-of-domain detection, the worst errors, "
    "the most uncertain rows, slices, the cards and every setting.",
)
for n_hist, (name, frame) in enumerate(frames.items()):
    values = dataset_views.score_values(frame, score)
    hist_event = st.plotly_chart(
        dataset_views.histogram(name, frame, score),
        width="stretch",
        key=f"{K.RES_HIST_PICK}{n_hist}",
        on_select="rerun",
        selection_mode="points",
    )
    got_bar = selection.picked_range(hist_event, list(values), figures.histogram_bins(values))
    if got_bar is not None:
        bar_domain, lo, hi = got_bar
        where = {"score": score, "lo": lo, "hi": hi, "domain": bar_domain}
        offer(name, f"{K.RES_OPEN_BAR}{n_hist}", "range", **where)
if frames:
    st.caption("Click a bar to see its examples in Error analysis.")
