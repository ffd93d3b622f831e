"""Write docs/results.md: ``python -m uqlab.results [--root assets/checkpoints] [--out PATH]``.

Reads every checkpoint's ``metrics.json`` (written by ``python -m uqlab.evaluate``) and sets our
numbers beside the paper's Tables 1-3 (Pei, Wang, Szarvas, AAAI 2022). Our figures come only
from those files; the paper's from :mod:`uqlab.evaluation.paper`, which quotes its tables row by
row, and every "mean ± std" cell is written by :func:`uqlab.evaluation.paper.pm`. Checkpoints
without metrics are listed as not evaluated, never filled in.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

from uqcore.checkpoint import weights_path
from uqcore.registry import list_checkpoints
from uqlab.catalog.paths import checkpoint_dir
from uqlab.catalog.task_file import register_from_training
from uqlab.catalog.tasks import (
    DEFAULT_CHECKPOINT,
    FIRST_SCREEN_CANDIDATES,
    METRICS,
    PAPER_CHECKPOINT,
    TASKS,
    get_task,
)
from uqlab.evaluation.comparison_report import CAPTION as COMPARISON_CAPTION
from uqlab.evaluation.comparison_report import markdown as comparison_markdown
from uqlab.evaluation.detection_report import markdown as detection_markdown
from uqlab.evaluation.detection_report import number, temperature_lines
from uqlab.evaluation.first_screen import load_record, markdown
from uqlab.evaluation.laplace_report import RECORD, laplace_markdown
from uqlab.evaluation.paper import (
    BASELINE_FAMILY,
    correct_cell,
    example_cells,
    metric_cell,
    metric_table,
    p_gold_cell,
)
from uqlab.evaluation.reading_length import command as reading_length_command
from uqlab.evaluation.reading_length import markdown as reading_length_markdown
from uqlab.training.storage import LOGIT_TOLERANCE

COMMAND = "python -m uqlab.evaluate --all && python -m uqlab.results"


def backbone_of(metrics: dict | None) -> str:
    """The backbone a metrics.json was measured on (``"word"`` when it does not say)."""
    return (metrics or {}).get("backbone", "word")


def baseline(entries: Iterable[tuple[str, dict | None]], backbone: str = "word") -> dict | None:
    """The metrics of the first evaluated checkpoint of the paper's baseline family (the
    deterministic transformer) on ``backbone`` among ``entries`` ((name, metrics.json or None)
    of one task): each checkpoint is compared with the baseline of its own backbone."""
    return next(
        (
            m
            for _, m in entries
            if m and m.get("family") == BASELINE_FAMILY and backbone_of(m) == backbone
        ),
        None,
    )


def metric_rows(task: str, entries: Iterable[tuple[str, dict | None]]) -> list[dict]:
    """Our Table 1-2 rows beside the paper's: one per ``(name, metrics.json or None)`` of
    ``task``, with ours in and out of domain (% mean ± std over the T runs), the in-domain
    metric of the mean of the T predictions (:data:`MEAN_PREDICTION`: what an ensemble or a
    Bayesian model predicts; present only where some row's evaluation recorded it for this
    task's metric), the difference of in-domain means to :func:`baseline`, the paper's row,
    ECE, MI and the OOD AUROC of MI.
    The app's Results page shows these dicts as they are; results.md writes a part of them."""
    entries = list(entries)
    key, paper = get_task(task).metric, metric_table(task)
    rows = []
    for name, m in entries:
        base = baseline(entries, backbone_of(m))
        row = paper.row_of(name) if paper else None
        p = paper.cells(row) if row else ("—", "—", "—")
        # read through ``number``: a metrics.json may be an upload's, of any shape
        mean, base_mean = number(m, "id", f"{key}_mean"), number(base, "id", f"{key}_mean")
        ece, auroc = (
            number(m, "id", "ece"),
            number(m, "ood_detection", "mutual_information", "auroc"),
        )
        mi = [number(m, side, "mean_mutual_information") for side in ("id", "ood")]
        rows.append(
            {
                "checkpoint": name,
                "ours ID": _side_cell(m, "id", key) if m else "not evaluated",
                "ours OOD": (_side_cell(m, "ood", key) if "ood" in m else "no OOD set")
                if m
                else "not evaluated",
                MEAN_PREDICTION: mean_prediction_cell(m, key),
                "Δ ID vs TRANS": "—"
                if None in (mean, base_mean)
                else f"{100 * (mean - base_mean):+.2f}",
                "paper row": p[0],
                "paper ID": p[1],
                "paper OOD": p[2],
                "ECE (ID)": None if ece is None else round(ece, 4),
                "MI ID → OOD": "—" if None in mi else f"{mi[0]:.4f} → {mi[1]:.4f}",
                "AUROC (MI)": None if auroc is None else round(auroc, 3),
                "texts ID / OOD": texts_cell(m),
            }
        )
    if all(r[MEAN_PREDICTION] == "—" for r in rows):  # none recorded (CoLA's MCC): no column
        for r in rows:
            del r[MEAN_PREDICTION]
    return rows


MEAN_PREDICTION = "ID, mean prediction"


def _side_cell(m: dict, side: str, key: str) -> str:
    """:func:`metric_cell` of ``m[side]``; "—" where its mean or std is not a finite number."""
    if None in (number(m, side, f"{key}_mean"), number(m, side, f"{key}_std")):
        return "—"
    return metric_cell(m[side], key)


def mean_prediction_cell(m: dict | None, key: str) -> str:
    """The in-domain ``key`` (``"accuracy"``) of the mean of the T predictions, in percent, from
    the evaluation's comparison block (``comparison.intervals[key].value``); "—" where it was
    not recorded (an older evaluation, or a metric the block does not bootstrap, such as MCC)."""
    value = number(m, "comparison", "intervals", key, "value")
    return "—" if value is None else f"{100 * value:.2f}"


def texts_cell(m: dict | None) -> str:
    """How many texts a metrics.json's figures come from, ``"25,000 / 500"`` (ID / OOD), with
    ``" (part)"`` when its evaluation read only the first ``limit`` of each shuffled split."""
    sizes = (m or {}).get("sizes")
    counts = [sizes.get(k) for k in ("id", "ood")] if isinstance(sizes, dict) else []
    counts = [c for c in counts if isinstance(c, int) and not isinstance(c, bool)]
    if not counts:  # none recorded, or not counts (a file written by hand): nothing to say
        return "—"
    cell = " / ".join(f"{c:,}" for c in counts)
    return f"{cell} (part)" if m.get("limit") is not None else cell


def part_note(rows: Iterable[tuple[str, dict | None]]) -> list[str]:
    """A line under a table naming the checkpoints evaluated on a part of each split
    (``uqlab.evaluate --limit``): their figures are not over the same texts as the others'."""
    part = [(n, m) for n, m in rows if m and m.get("limit") is not None]
    if not part:
        return []
    named = "; ".join(f"{n}: {texts_cell(m).removesuffix(' (part)')} texts" for n, m in part)
    return [
        f"Evaluated on a part of each split (the first texts of the shuffled test and OOD "
        f"sets, `python -m uqlab.evaluate --limit N`), so not over the same texts as the "
        f"other rows: {named} (ID / OOD).",
        "",
    ]


def _main_table(rows: list, task: str) -> list[str]:
    mine = [(n, m) for n, m in rows if n.startswith(f"{task}-")]
    table = metric_rows(task, mine)
    averaged = any(MEAN_PREDICTION in r for r in table)
    ours = ["ours ID", "ours OOD", *([MEAN_PREDICTION] if averaged else []), "Δ ID vs our trans"]
    lines = [
        f"## {metric_table(task).title}",
        "",
        f"| checkpoint | {' | '.join(ours)} | paper row | paper ID | paper OOD |",
        "|---|" + "---:|" * len(ours) + "---|---:|---:|",
    ]
    for (name, m), r in zip(mine, table, strict=True):
        paper = f"{r['paper row']} | {r['paper ID']} | {r['paper OOD']}"
        if m is None:
            lines.append(f"| {name} | not evaluated |{' |' * (len(ours) - 1)} {paper} |")
            continue
        cells = [r["ours ID"], r["ours OOD"], *([r[MEAN_PREDICTION]] if averaged else [])]
        lines.append(f"| {name} | {' | '.join(cells)} | {r['Δ ID vs TRANS']} | {paper} |")
    return [*lines, "", *part_note(mine), *_mean_note(averaged)]


def _mean_note(averaged: bool) -> list[str]:
    if not averaged:
        return []
    return [
        "ID, mean prediction: the accuracy of the mean of the T predictions, what an ensemble, "
        "MC dropout or a Laplace posterior predicts (equal to the runs' for a deterministic "
        'model); with its 95 % interval under "Which uncertainty is worth having"; "—" '
        "where the evaluation predates it.",
        "",
    ]


def _described_table(rows: list, task: str) -> list[str]:
    """A task no paper reports (described by a file): its checkpoints' metric in and out of
    domain, the OOD AUROC of MI, and where the task comes from."""
    spec = get_task(task)
    mine = [(n, m) for n, m in rows if (m or {}).get("task") == task]
    if not mine:
        return []
    ood = spec.ood_name
    lines = [
        f"## {spec.title} (a task described by a file)",
        "",
        f"Trained and evaluated from its task file only (`{spec.name}`: "
        f"{', '.join(spec.label_names)}); OOD = {ood}.",
        "",
        f"| checkpoint | {spec.metric_spec.title} ID | {spec.metric_spec.title} OOD | "
        "MI ID → OOD | AUROC (MI) |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in metric_rows(task, mine):
        lines.append(
            f"| {r['checkpoint']} | {r['ours ID']} | {r['ours OOD']} | "
            f"{r['MI ID → OOD']} | {r['AUROC (MI)']} |"
        )
    return [*lines, "", *part_note(mine)]


def render(
    rows: list[tuple[str, dict | None]],
    storage: dict[str, dict | None] | None = None,
    fits: dict[str, dict] | None = None,
) -> str:
    """``rows``: (checkpoint name, its metrics.json or None), sorted by name; ``storage``: name ->
    the trainer's float16 storage check (``training.storage`` of its config.json) or None;
    ``fits``: name -> a Laplace checkpoint's ``training.laplace``."""
    lines = [
        "# Results",
        "",
        f"Generated by `{COMMAND}` from the shipped checkpoints' `metrics.json` files;",
        "the paper's numbers are quoted from its Tables 1-3. ID = in-domain test split, OOD = CR",
        "test (IMDB) or CoLA out-of-domain dev. Mean ± std over the T sampled runs.",
        "",
    ]
    for task in TASKS:
        if metric_table(task):
            lines += _main_table(rows, task)
        else:
            lines += _described_table(rows, task)
    lines += _table3(rows)
    lines += _uncertainty(rows)
    lines += _caught(rows)
    lines += _worth(rows)
    before = reading_length_markdown(rows)
    if before:
        lines += [
            "",
            "## Read at the training length",
            "",
            "Until issue 36 the MiniLM checkpoints were evaluated (and shown) reading up to the "
            "base's 512 positions although their adapters were trained at 64 (CoLA, CR) or "
            "256 (IMDB) tokens. Each cell: read at 512 → read at the training length (the rows "
            "above). A checkpoint since trained on at 512 tokens from its 256-token one "
            "(`init_from`, docs/training.md) shows three: its first stage read at 512 → that "
            "stage read at 256 → the continued model read at 512, the length it now trains and "
            f"reads at. Recorded by `{reading_length_command()}`, re-evaluated by "
            "`python -m uqlab.evaluate --ckpt NAME`.",
            "",
            *before,
        ]
    lines += _pattern(rows)
    lines += _calibration(rows)
    lines += laplace_markdown(fits or {})
    lines += _storage(storage or {})
    lines += first_screen_section(load_record())
    return "\n".join([*lines, ""])


def _caught(rows: list[tuple[str, dict | None]]) -> list[str]:
    """What each checkpoint's uncertainty catches: its errors, OOD texts at equal length."""
    section = detection_markdown(rows)
    if not section:
        return []
    return [
        "",
        "## What the uncertainty catches: errors, and out-of-domain texts at equal length",
        "",
        "Error detection: each score ranks the in-domain test texts, the model's own "
        "mistakes (of the mean prediction) as positives; AURC is the mean error rate when "
        "the texts are kept most-certain-first by that score (lower is better). Equal "
        "length: the OOD AUROC of MI within bins of tokens read, where both domains hold "
        "20 or more texts (a score that separates the domains overall but not within a "
        "bin is measuring length). Lengths matched: both domains drawn (seed 0) to one "
        "histogram of tokens read, equal lengths, with the texts kept a side; none where "
        "the lengths hardly overlap; where the task names out-of-domain texts cut to its "
        "own texts' form, those are drawn instead and named in the cell (CR: its IMDB "
        "reviews cut into sentences, `python -m uqlab.data export-sentences`). "
        "MI − 1−p: the AUROC of MI for the errors minus that "
        "of 1 − max p on the same texts, with a paired bootstrap 95 % interval (1,000 "
        "resamples within each class) and whether MI is better, tied or worse. Tokens: "
        "those each text is read at, the checkpoint's training length; 1−p: 1 − max p. "
        "A dash: evaluated before the figure (`python -m uqlab.evaluate --ckpt NAME`).",
        "",
        *section,
    ]


def _worth(rows: list[tuple[str, dict | None]]) -> list[str]:
    """Per task, every family beside the plain transformer of its backbone, on the same texts
    (:mod:`uqlab.evaluation.comparison_report`)."""
    lines: list[str] = []
    for task in TASKS:
        section = comparison_markdown([(n, m) for n, m in rows if (m or {}).get("task") == task])
        if section:
            lines += ["", f"### {get_task(task).title}", "", *section]
    if not lines:
        return []
    return [
        "",
        "## Which uncertainty is worth having: every family beside the plain transformer",
        "",
        COMPARISON_CAPTION,
        *lines,
    ]


def _table3(rows: list[tuple[str, dict | None]]) -> list[str]:
    """The per-example Table 3 of every checkpoint, beside the paper's figures."""
    lines = [
        "## Table 3: per-example statistics",
        "",
        "| checkpoint | domain | example (gold) | p(gold) mean ± var | correct/T | paper |",
        "|---|---|---|---:|---:|---|",
    ]
    for name, m in rows:
        for r in (m or {}).get("table3", []):
            paper = example_cells(r["text"])
            text = r["text"].replace("|", "\\|")[:120]
            stats = f"{p_gold_cell(r['p_gold_mean'], r['p_gold_var'])} | "
            stats += correct_cell(r["correct"], r["T"])
            quoted = " ".join(paper) if paper else ""
            lines.append(f"| {name} | {r['domain']} | {text} ({r['label']}) | {stats} | {quoted} |")
    return lines


def _uncertainty(rows: list[tuple[str, dict | None]]) -> list[str]:
    """NLL, Brier, ECE, the mean uncertainties and the OOD AUROCs of every checkpoint."""
    lines = [
        "",
        "## Uncertainty metrics",
        "",
        "| checkpoint | side | NLL | Brier | ECE | entropy | MI | var p(gold) | "
        "AUROC (MI) | AUROC (1-max p) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in rows:
        if m is None:
            continue
        det = m.get("ood_detection")
        for side in (k for k in ("id", "ood") if k in m):
            s = m[side]
            auroc = (
                f"{det['mutual_information']['auroc']:.3f} | {det['max_prob']['auroc']:.3f}"
                if side == "ood" and det
                else " | "
            )
            lines.append(
                f"| {name} | {side} | {s['nll']:.3f} | {s['brier']:.3f} | {s['ece']:.3f}"
                f" | {s['mean_entropy']:.3f} | {s['mean_mutual_information']:.4f} | "
                f"{s['mean_variance']:.5f} | {auroc} |"
            )
    return lines


def _length_note(measured: list, chosen) -> str:
    """What the length-matched check leaves of the out-of-domain separation by MI."""
    kept = [m for m in measured if m.auroc_mi_cut >= 0.65]  # NaN (no OOD dev) compares False
    said = (
        f"`{chosen.name}`'s out-of-domain separation by mutual information (AUROC "
        f"{chosen.auroc_mi:.2f}) is length: {chosen.auroc_mi_cut:.2f} once the texts are cut to "
        "matched lengths."
    )
    if kept:
        said += (
            " Only "
            + ", ".join(
                f"`{m.name}` keeps one ({m.auroc_mi_cut:.2f} cut, {m.auroc_mi:.2f} raw; visible "
                f"spread on {m.visible_share:.1%} of its dev rows)"
                for m in kept
            )
            + "."
        )
    return said


def first_screen_section(record) -> list[str]:
    """The first screen's choice and the dev figures behind it (``python -m
    uqlab.evaluation.first_screen``, ``assets/eval/first_screen.json``); nothing when they were
    never measured."""
    if record is None:
        return []
    measured, n, T, seed = record
    chosen = next((m for m in measured if m.name == DEFAULT_CHECKPOINT), None)
    lines = ["", "## The first screen, chosen on dev data", "", markdown(measured, n, T, seed)]
    if chosen is not None:
        lines += [
            f"The app opens on `{DEFAULT_CHECKPOINT}` (`uqlab.catalog.tasks.DEFAULT_CHECKPOINT`): "
            f"{chosen.dev_acc:.1%} of its first {n} dev rows right, and its samples spread "
            f"visibly (a standard deviation of p of at least 0.05, one bar of the explorer's "
            f"histogram) on {chosen.visible_share:.1%} of them; the MiniLM candidates do on "
            f"at most {max(m.visible_share for m in measured if 'minilm' in m.name):.1%}, so "
            "a stranger would see one spike per sentence. "
            + _length_note(measured, chosen)
            + " So the first screen shows an out-of-domain sentence without claiming that the "
            "model is more uncertain there.",
        ]
    paper = next((m for m in measured if m.name == PAPER_CHECKPOINT), None)
    if paper is not None:
        lines[-1] += (
            f" The paper's `{PAPER_CHECKPOINT}` spreads on more ({paper.visible_share:.1%}) but "
            f"gets only {paper.dev_acc:.1%} of its dev sentences right; the landing keeps it "
            "one click away."
        )
    missing = [
        name for name, _ in FIRST_SCREEN_CANDIDATES if name not in {m.name for m in measured}
    ]
    if missing:
        lines += ["", f"Not measured: {', '.join(missing)}."]
    return lines


SCORE_COLUMNS = (
    ("mutual_information", "MI"),
    ("entropy", "entropy"),
    ("max_prob", "1-max p"),
    ("variance", "var"),
    ("max_logit", "max logit"),
    ("energy", "energy"),
    ("mahalanobis", "Mahalanobis"),
)


def _resampled(m: dict) -> dict | None:
    """A metrics.json's LAC coverage over dev + test re-splits (None: written before it)."""
    return m["id"].get("conformal_90", {}).get("lac", {}).get("resampled")


def _calibration(rows: list[tuple[str, dict | None]]) -> list[str]:
    """Calibration before and after temperature scaling, selective prediction, and the OOD
    AUROC of every score (the columns a 2026 comparison reports), for checkpoints evaluated
    with them."""
    have = [(n, m) for n, m in rows if m and "aece" in m.get("id", {})]
    if not have:
        return []
    lines = [
        "",
        "## Calibration, selective prediction and every OOD score (in-domain test)",
        "",
        "Temperature t fitted on dev (each sample's logits / t, then averaged); AURC: area "
        "under the risk-coverage curve of the mean prediction (lower is better); acc@80%: "
        "accuracy on the 80 % most confident examples. AUROC: OOD detection by each score.",
        "",
        "Conformal: split-conformal LAC sets calibrated on dev for 90 % coverage, their "
        "empirical coverage and mean size in and out of domain (one calibration draw: dev "
        "-> test). Re-split: the in-domain coverage the method promises, the mean (5-95 % "
        "range) over 1,000 random splits of dev + test into calibration and evaluation "
        "parts of the same sizes (`uqcore.stats.resampled_coverage`). It depends on the "
        "ranks of the scores only, so it checks the method and that dev and test are "
        "exchangeable, not the model; its 5-95 % range is how far one draw, such as dev -> "
        "test, may fall from it. APS sets (in metrics.json) are not randomised: with two "
        "classes a set is the top class or both, and the ties this makes over-cover.",
        "",
        "| checkpoint | ECE → scaled | aECE → scaled | NLL → scaled | t | AURC | acc@80% | "
        "conformal ID cov / size | ID cov, re-split | conformal OOD cov / size | "
        + " | ".join(f"AUROC {label}" for _, label in SCORE_COLUMNS)
        + " |",
        "|---|" + "---:|" * (9 + len(SCORE_COLUMNS)),
    ]
    for name, m in have:
        i, sc = m["id"], m["id"].get("scaled", {})
        t = m.get("temperature", {}).get("value")

        def arrow(key: str, i=i, sc=sc) -> str:
            return f"{i[key]:.3f} → {sc[key]:.3f}" if key in sc else f"{i[key]:.3f}"

        det = m["ood_detection"]
        aurocs = " | ".join(f"{det[k]['auroc']:.3f}" if k in det else "—" for k, _ in SCORE_COLUMNS)

        def conformal(side: str, m=m) -> str:
            c = m[side].get("conformal_90", {}).get("lac")
            return "—" if c is None else f"{100 * c['coverage']:.1f} % / {c['mean_size']:.2f}"

        def resplit(m=m) -> str:
            r = _resampled(m)
            return (
                "—"
                if r is None
                else (f"{100 * r['mean']:.1f} % ({100 * r['low']:.1f}-{100 * r['high']:.1f})")
            )

        lines.append(
            f"| {name} | {arrow('ece')} | {arrow('aece')} | {arrow('nll')} | "
            f"{'—' if t is None else f'{t:.2f}'} | {i['aurc']:.3f} | "
            f"{100 * i['accuracy_at_80_coverage']:.1f} | {conformal('id')} | "
            f"{resplit()} | {conformal('ood')} | {aurocs} |"
        )
    hurt = temperature_lines(have)
    if hurt:
        lines += ["", "Temperature scaling that raises ECE:", ""] + [f"- {n}" for n in hurt]
    stale = [n for n, m in have if _resampled(m) is None]
    if stale:
        lines += [
            "",
            f'Re-split "—": {", ".join(stale)} kept a metrics.json written before the '
            "re-split existed; `python -m uqlab.evaluate --ckpt NAME` fills it (with "
            "`--device cuda` for MiniLM on IMDB: hours on two CPU cores).",
        ]
    return lines


def _storage(storage: dict[str, dict | None]) -> list[str]:
    """What float16 storage costs each checkpoint, as its trainer measured it."""
    if not storage:
        return []
    lines = [
        "",
        "## Float16 storage",
        "",
        "Weights are stored in float16 to fit the 80 MB budget and load as float32. After "
        "training, `python -m uqlab.train` compares the float32 model with its "
        "float16-rounded copy on the first 500 dev texts, 2 samples each (every member of an "
        "ensemble) with the same noise (`uqlab/training/storage.py`); the stated "
        f"tolerance on max |Δ log p| is {LOGIT_TOLERANCE} (`tests/test_assets.py` holds "
        "every recorded check to it).",
        "",
        "| checkpoint | max abs Δ log p | max abs Δ p | argmax agreement | texts × samples |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, s in sorted(storage.items()):
        if s is None:
            lines.append(
                f"| {name} | not recorded (trained before the check; retraining records it) | | | |"
            )
            continue
        lines.append(
            f"| {name} | {s['max_abs_log_prob_diff']:.1e} | "
            f"{s['max_abs_prob_diff']:.1e} | {s['argmax_agreement']:.4f} | "
            f"{s['examples']} × {s['samples']} |"
        )
    return lines


def _pattern(rows: list[tuple[str, dict | None]]) -> list[str]:
    """The paper's qualitative claim, checked per stochastic checkpoint, with both of its
    measures: per-example uncertainty (variance of p(gold), mutual information) and the spread
    of the metric over the T runs (the ± of Tables 1-2)."""
    lines = [
        "",
        "## Uncertainty higher out of domain? (the paper's pattern)",
        "",
        "Per example: mean variance of p(gold) and mean mutual information over the T "
        "samples; over runs: the standard deviation of the task metric across the T sampled "
        "runs (the paper's ±). Out-of-domain sets are smaller, which alone widens the ±. "
        "AUROC: how often an out-of-domain example scores higher than an in-domain one (the "
        "pattern by rank rather than by mean). Where a row says no, docs/training.md says "
        "what we tried.",
        "",
        "| checkpoint | var p(gold) ID → OOD | MI ID → OOD | per-example higher OOD | "
        "std over runs ID → OOD | AUROC var / MI |",
        "|---|---:|---:|:---:|---:|---:|",
    ]
    for name, m in rows:
        if m is None or m["id"]["mean_variance"] == 0:
            continue
        i, o = m["id"], m["ood"]
        key = "mcc" if "mcc_std" in i else "accuracy"
        both = o["mean_variance"] > i["mean_variance"] and (
            o["mean_mutual_information"] > i["mean_mutual_information"]
        )
        var, mi, auroc = ood_cells(ood_figures(m))
        spread = f"{100 * i[f'{key}_std']:.2f} → {100 * o[f'{key}_std']:.2f}"
        lines.append(f"| {name} | {var} | {mi} | {'yes' if both else 'no'} | {spread} | {auroc} |")
    return lines


def ood_figures(metrics: dict) -> dict[str, float]:
    """In- against out-of-domain uncertainty of a ``metrics.json``: mean variance of p(gold)
    (``var_id``, ``var_ood``), mean mutual information (``mi_id``, ``mi_ood``) and the OOD AUROC
    of both scores (``auroc_var``, ``auroc_mi``)."""
    i, o, d = metrics["id"], metrics["ood"], metrics["ood_detection"]
    return {
        "var_id": i["mean_variance"],
        "var_ood": o["mean_variance"],
        "mi_id": i["mean_mutual_information"],
        "mi_ood": o["mean_mutual_information"],
        "auroc_var": d["variance"]["auroc"],
        "auroc_mi": d["mutual_information"]["auroc"],
    }


def ood_cells(f: dict[str, float]) -> tuple[str, str, str]:
    """Table cells of :func:`ood_figures`: ``(var ID → OOD, MI ID → OOD, AUROC var / MI)``;
    results.md and ``uqlab.sweep_table`` print them alike."""
    return (
        f"{f['var_id']:.5f} → {f['var_ood']:.5f}",
        f"{f['mi_id']:.4f} → {f['mi_ood']:.4f}",
        f"{f['auroc_var']:.3f} / {f['auroc_mi']:.3f}",
    )


def training_table(root: str, prefix: str) -> str:
    """The training summary of every checkpoint whose name starts with ``prefix`` (docs/
    training.md's MiniLM tables): dev metric per member at its best epoch, test metric over
    T runs, OOD metric, accuracy, mean MI in -> out of domain, AUROC by MI and by the
    Mahalanobis distance, and the stored weights' size."""
    infos = sorted(
        (i for i in list_checkpoints(root) if not i.error and i.name.startswith(prefix)),
        key=lambda i: i.name,
    )
    head = (
        "| checkpoint | dev (best epoch) | test (T = 10) | OOD | test acc % | MI ID → OOD | "
        "AUROC MI | AUROC Mahalanobis | weights |"
    )
    out = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for info in infos:
        m = info.metrics or {}
        i, o, det = m.get("id", {}), m.get("ood", {}), m.get("ood_detection", {})
        key = (TASKS[info.task].metric_spec if info.task in TASKS else METRICS["accuracy"]).name
        dev = ", ".join(
            f"{h.get('dev_' + key, h.get('dev_metric', float('nan'))):.3f} ({h.get('best_epoch')})"
            for h in info.training.get("members", [])
        )
        size = weights_path(info.path).stat().st_size / 2**20  # a shared file counts in full

        def num(d: dict, k: str, fmt: str = ".3f") -> str:
            return format(d[k], fmt) if isinstance(d.get(k), int | float) else "—"

        acc = {"a": 100 * i.get("accuracy_mean", float("nan"))}
        mi = " → ".join(num(d, "mean_mutual_information", ".4f") for d in (i, o))
        aurocs = " | ".join(
            num(det.get(k, {}), "auroc") for k in ("mutual_information", "mahalanobis")
        )
        out.append(
            f"| {info.name} | {dev or '—'} | {num(i, key + '_mean')} ± {num(i, key + '_std')} | "
            f"{num(o, key + '_mean')} | {num(acc, 'a', '.1f')} | {mi} | {aurocs} | "
            f"{size:.2f} MB |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m uqlab.results", description=__doc__.splitlines()[0])
    p.add_argument("--root", default=str(checkpoint_dir()))
    p.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "docs/results.md"))
    p.add_argument(
        "--training-table",
        metavar="PREFIX",
        help="print the training summary of the checkpoints named PREFIX* instead "
        "(docs/training.md)",
    )
    args = p.parse_args(argv)
    if args.training_table:
        print(training_table(args.root, args.training_table))
        return 0
    infos = [i for i in list_checkpoints(args.root) if not i.error]
    for info in infos:  # a task described by a file comes with its checkpoints
        register_from_training(info.training)
    rows = [(i.name, i.metrics) for i in infos]
    fits = {i.name: i.training[RECORD] for i in infos if RECORD in i.training}
    storage = {
        i.name: i.training.get("storage")
        for i in infos
        if i.training.get("config", {}).get("save_dtype") == "float16" and i.name not in fits
    }
    if not rows:
        print(f"error: no checkpoints under {args.root}; train some first.", file=sys.stderr)
        return 2
    Path(args.out).write_text(render(rows, storage, fits))
    print(f"wrote {args.out} ({len(rows)} checkpoints)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
