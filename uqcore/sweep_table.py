"""Markdown table of a hyperparameter sweep (``scripts/sweep.sh``).

``python -m uqcore.sweep_table KEY RUN_DIR...`` reads each run's ``config.json`` (the dev metric
early stopping selected on) and ``metrics.json`` (written by ``python -m uqcore.evaluate``) and
prints one row per run: dev first, because that is the only column a choice may rest on.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def sweep_row(run: Path) -> dict[str, float | int | str]:
    """One run's figures; ``FileNotFoundError`` naming the file when the run is unfinished."""
    for f in ("config.json", "metrics.json"):
        if not (run / f).is_file():
            raise FileNotFoundError(f"{run / f} is missing: train and evaluate the run first")
    training = json.loads((run / "config.json").read_text())["training"]
    metrics = json.loads((run / "metrics.json").read_text())
    metric = training["metric"]  # "mcc" (CoLA) or "accuracy" (IMDB)
    members = training["members"]
    detection = metrics["ood_detection"]
    return {
        "metric": metric,
        "dev": sum(m[f"dev_{metric}"] for m in members) / len(members),
        "epochs": ",".join(str(m["best_epoch"]) for m in members),
        "test_mean": metrics["id"][f"{metric}_mean"],
        "test_std": metrics["id"][f"{metric}_std"],
        "ood_mean": metrics["ood"][f"{metric}_mean"],
        "var_id": metrics["id"]["mean_variance"],
        "var_ood": metrics["ood"]["mean_variance"],
        "mi_id": metrics["id"]["mean_mutual_information"],
        "mi_ood": metrics["ood"]["mean_mutual_information"],
        "auroc_var": detection["variance"]["auroc"],
        "auroc_mi": detection["mutual_information"]["auroc"],
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
            f"| {r['test_mean']:.4f} ± {r['test_std']:.4f} | {r['ood_mean']:.4f} "
            f"| {r['var_id']:.5f} → {r['var_ood']:.5f} | {r['mi_id']:.4f} → {r['mi_ood']:.4f} "
            f"| {r['auroc_var']:.3f} / {r['auroc_mi']:.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m uqcore.sweep_table", description=__doc__)
    p.add_argument("key", help="the varied setting, as given to --set")
    p.add_argument("runs", nargs="+", type=Path, help="run folders named KEY=VALUE")
    args = p.parse_args(argv)
    try:
        print(sweep_table(args.key, args.runs))
    except (FileNotFoundError, KeyError, json.JSONDecodeError) as e:
        print(f"error: {e}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
