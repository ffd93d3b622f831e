"""Markdown table of a hyperparameter sweep (``scripts/sweep.sh``).

``python -m uqlab.sweep_table KEY RUN_DIR...`` reads each run's checkpoint record (the dev metric
early stopping selected on) and ``metrics.json`` (written by ``python -m uqlab.evaluate``) and
prints one row per run: dev first, because that is the only column a choice may rest on.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from uqcore.checkpoint import METRICS_FILE, CheckpointError, read_checkpoint_info
from uqlab.evaluation.paper import pm
from uqlab.results import ood_cells, ood_figures


def sweep_row(run: Path) -> dict[str, float | str]:
    """One run's figures; ``FileNotFoundError`` naming the file when the run is not evaluated,
    :class:`CheckpointError` when it is not a checkpoint."""
    info = read_checkpoint_info(run)  # no weights read
    metrics, training = info["metrics"], info["training"]
    if metrics is None:
        raise FileNotFoundError(
            f"{run / METRICS_FILE} is missing: train and evaluate the run first"
        )
    metric = training["metric"]  # "mcc" (CoLA) or "accuracy" (IMDB)
    members = training["members"]
    return {
        "metric": metric,
        "dev": sum(m[f"dev_{metric}"] for m in members) / len(members),
        "epochs": ",".join(str(m["best_epoch"]) for m in members),
        "test_mean": metrics["id"][f"{metric}_mean"],
        "test_std": metrics["id"][f"{metric}_std"],
        "ood_mean": metrics["ood"][f"{metric}_mean"],
        **ood_figures(metrics),
    }


def sweep_table(key: str, runs: list[Path]) -> str:
    """Markdown table, one row per run, in the order given."""
    rows = [(run.name.split("=", 1)[-1], sweep_row(run)) for run in runs]
    metric = rows[0][1]["metric"] if rows else "metric"
    lines = [
        f"| {key} | dev {metric} (best epoch) | test {metric} | OOD {metric} "
        "| var p(gold) ID → OOD | MI ID → OOD | AUROC var / MI |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for value, r in rows:
        lines.append(
            f"| {value} | {r['dev']:.4f} ({r['epochs']}) "
            f"| {pm(r['test_mean'], r['test_std'], 4)} | {r['ood_mean']:.4f} "
            f"| {' | '.join(ood_cells(r))} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m uqlab.sweep_table", description=__doc__)
    p.add_argument("key", help="the varied setting, as given to --set")
    p.add_argument("runs", nargs="+", type=Path, help="run folders named KEY=VALUE")
    args = p.parse_args(argv)
    try:
        print(sweep_table(args.key, args.runs))
    except (FileNotFoundError, CheckpointError, KeyError) as e:
        print(f"error: {e}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
