"""The sweep table (uqlab.sweep_table) from real (tiny) runs."""

from __future__ import annotations

import json
import shutil

from tests.helpers import evaluate_tiny


def test_sweep_table_reads_dev_before_test_from_real_runs(checkpoint, data_dir, tmp_path, capsys):
    """scripts/sweep.sh prints this table; each row's numbers are the run's own files."""
    from uqlab.sweep_table import main as sweep_main
    from uqlab.sweep_table import sweep_row

    runs = []
    for value in ("1", "2"):
        run_dir = tmp_path / f"dev_samples={value}"
        shutil.copytree(checkpoint, run_dir)
        runs.append(run_dir)
    m = evaluate_tiny(runs[1], data_dir, "--seed", "1")  # the second run differs from the first
    evaluate_tiny(runs[0], data_dir)
    row = sweep_row(runs[1])
    dev = json.loads((runs[1] / "config.json").read_text())["training"]["members"][0]["dev_mcc"]
    assert (row["metric"], row["dev"], row["test_mean"]) == ("mcc", dev, m["id"]["mcc_mean"])
    assert row["mi_ood"] == m["ood"]["mean_mutual_information"]
    capsys.readouterr()  # drop what evaluate printed
    assert sweep_main(["dev_samples", *map(str, runs)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| dev_samples | dev mcc") and len(lines) == 4
    assert lines[3].startswith("| 2 | ") and f"{m['id']['mcc_mean']:.4f}" in lines[3]
    (runs[0] / "metrics.json").unlink()
    assert sweep_main(["dev_samples", *map(str, runs)]) == 2
    assert "metrics.json is missing: train and evaluate the run first" in capsys.readouterr().out
