"""An inference knob of a trained checkpoint chosen on dev, for the two aims of issue 48:

    python -m uqlab.evaluation.dev_knobs --ckpt NAME --knob tau2 --values 1,2,4,8,16
        [--rows 500] [--T 10] [--seed 0] [--json FILE]

For each value of ``--knob`` (an inference setting the checkpoint's family reads: ``tau1``,
``tau2``, ``noise_scale``...), samples the first ``--rows`` texts of the checkpoint's own *dev*
split T times at that value (every other setting the trained one) and prints one row:

- ``dev``: the task's metric (accuracy, or MCC for CoLA) of the mean prediction; ``NLL``: its
  negative log-likelihood (what :mod:`uqlab.laplace` chooses a prior on);
- ``visible``: the share of texts whose samples' p(predicted class) has a standard deviation of
  at least 0.05 (one bar of the explorer's histogram: a spread a visitor can see), as
  :mod:`uqlab.evaluation.first_screen` counts it; ``split``: the share whose samples disagree on
  the class;
- ``AUROC(MI)`` and ``AUROC(1-p)``: how well mutual information, and the plain 1 - max p of the
  same samples, rank the dev errors of the mean prediction first; ``MI - (1-p)``: their paired
  difference with its 95 % bootstrap interval (:func:`uqcore.inference.detection.
  errors_versus_max_prob`): an uncertainty is only worth showing where it is not below the plain
  baseline.

Only dev texts are read (no test, no out-of-domain set): a value chosen from this table may be
shipped. Figures only; nothing passes or fails. ``--json`` also writes the rows.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from uqcore.exceptions import ConfigError, UQError
from uqcore.families import get_family
from uqcore.inference.batch_predict import predict_ids
from uqcore.inference.detection import errors_versus_max_prob
from uqcore.inference.prefix import GRID_BUDGET, PrefixCache
from uqcore.registry import load
from uqcore.settings import SamplingSettings, resolve
from uqcore.stats import mutual_information, nll
from uqlab.catalog.paths import checkpoint_dir
from uqlab.evaluation.first_screen import dev_rows, shares
from uqlab.training.loop import metric_of


@dataclass(frozen=True)
class KnobRow:
    """One value's dev figures (module docstring); NaN where the errors cannot be ranked (every
    prediction right, or every one wrong)."""

    value: float
    dev: float
    visible: float
    split: float
    mean_mi: float
    auroc_mi: float
    auroc_max_prob: float
    difference: float
    low: float
    high: float
    nll: float = float("nan")


def measure(probs: np.ndarray, labels: np.ndarray, metric: str, value: float) -> KnobRow:
    """The figures of samples ``probs [T, N, C]`` of dev texts with ``labels [N]``."""
    mean = probs.mean(0)  # [N, C]
    picked = mean.argmax(-1)  # [N]
    split, visible = shares(probs)
    found = errors_versus_max_prob(probs, labels).get("mutual_information")
    nan = float("nan")
    ranks = (
        (found["auroc"], found["baseline_auroc"], found["difference"], *found["interval"])
        if found
        else (nan,) * 5
    )
    return KnobRow(
        value,
        metric_of(picked, labels, metric, probs.shape[-1]),
        visible,
        split,
        float(np.mean(mutual_information(probs))),
        *(float(v) for v in ranks),
        float(nll(mean, labels)),
    )


def sweep(name: str, knob: str, values: list[float], rows: int, T: int, seed: int, bar=None):
    """``[KnobRow]`` of checkpoint ``name`` over ``values`` of ``knob`` on its dev split."""
    ck = load(name, checkpoint_dir())
    family = get_family(ck.config.family)
    if knob == "dropout" or not family.reads(knob):
        raise ConfigError(
            f"{name} ({ck.config.family}) does not read {knob!r} at inference; its knobs: "
            f"{', '.join(family.knobs)}."
        )
    texts, labels = dev_rows(ck.training["task"], rows)
    ids = [ck.vocab.encode(t, ck.read_len, allow_all_unknown=True).ids for t in texts]
    out = []
    # the layers below the first noisy one are computed once for every value (same numbers)
    cache, owner = PrefixCache(GRID_BUDGET), ("dev_knobs", name)
    for value in values:
        settings = resolve(ck.model.cfg, SamplingSettings(**{knob: value}))
        probs = predict_ids(
            ck.model, ids, T, seed, settings=settings, prefix_cache=cache, prefix_owner=owner
        )  # [T, N, C]
        out.append(measure(probs.cpu().numpy(), labels, ck.training["metric"], value))
        if bar is not None:
            bar(value)
    return out


def table(name: str, knob: str, rows: list[KnobRow], n: int, T: int) -> str:
    """The rows as a Markdown table, its command above it."""

    def f(v: float, d: int = 3) -> str:
        return "n/a" if math.isnan(v) else f"{v:+.{d}f}" if d < 0 else f"{v:.{d}f}"

    head = (
        f"{name}, {n} dev texts, T = {T}: "
        f"`python -m uqlab.evaluation.dev_knobs --ckpt {name} --knob {knob} "
        f"--values {','.join(f'{r.value:g}' for r in rows)} --rows {n} --T {T}`\n\n"
        f"| {knob} | dev | NLL | visible | split | mean MI | AUROC(MI) | AUROC(1-p) "
        "| MI - (1-p) [95 %] |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|\n"
    )
    body = "".join(
        f"| {r.value:g} | {f(r.dev)} | {f(r.nll, 4)} | {f(r.visible)} | {f(r.split)} | "
        f"{r.mean_mi:.2e} | "
        f"{f(r.auroc_mi)} | {f(r.auroc_max_prob)} | {r.difference:+.3f} "
        f"[{r.low:+.3f}, {r.high:+.3f}] |\n"
        for r in rows
    )
    return head + body


def _values(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        msg = f"--values takes numbers separated by commas: {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if not values or not all(math.isfinite(v) and v >= 0 for v in values):
        raise argparse.ArgumentTypeError(f"--values takes finite numbers >= 0: {text!r}")
    return values


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m uqlab.evaluation.dev_knobs", description=__doc__)
    ap.add_argument("--ckpt", required=True, help="a shipped checkpoint's name")
    ap.add_argument("--knob", required=True, help="an inference setting: tau1, tau2, noise_scale")
    ap.add_argument("--values", required=True, type=_values, help="e.g. 1,2,4,8,16")
    ap.add_argument("--rows", type=int, default=500, help="first dev texts (default 500)")
    ap.add_argument("--T", type=int, default=10, help="samples a text (default 10)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    if args.rows < 2 or args.T < 2:
        ap.error("--rows and --T must be at least 2.")
    done = lambda v: print(f"  {args.knob} = {v:g} done", file=sys.stderr)  # noqa: E731
    try:
        rows = sweep(args.ckpt, args.knob, args.values, args.rows, args.T, args.seed, done)
    except UQError as exc:  # a bad name, knob, value or data folder: one line, no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(table(args.ckpt, args.knob, rows, args.rows, args.T))
    if args.json is not None:
        doc = {"ckpt": args.ckpt, "knob": args.knob, "rows_read": args.rows, "T": args.T}
        args.json.write_text(json.dumps(doc | {"rows": [asdict(r) for r in rows]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
