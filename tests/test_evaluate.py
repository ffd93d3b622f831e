"""Evaluation: metrics.json from real (tiny) checkpoints, reproducible for a seed."""

from __future__ import annotations

import json
import shutil

import pytest

from uqcore.checkpoint import load_checkpoint, save_checkpoint
from uqlab.evaluate import main as evaluate_main
from uqlab.paper import TABLE3 as PAPER_TABLE3
from uqlab.results import main as results_main
from uqlab.train import main as train_main

TINY = [
    "--set", "model.n_layers=1", "--set", "model.n_heads=2", "--set", "model.d_model=16",
    "--set", "model.d_ff=32", "--set", "max_len=24", "--set", "vocab_size=300",
    "--limit", "64", "--batch-size", "16", "--epochs", "1", "--quiet",
]  # fmt: skip


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory, data_dir):
    out = tmp_path_factory.mktemp("ck") / "cola-hsto"
    mp = pytest.MonkeyPatch()
    mp.setenv("UQ_DATA_DIR", str(data_dir))
    assert train_main(["--task", "cola", "--family", "hsto", "--out", str(out), *TINY]) == 0
    mp.undo()
    return out


def run(path, data_dir, *extra) -> dict:
    args = ["--ckpt", str(path), "--samples", "4", "--limit", "40", "--data-dir", str(data_dir),
            "--table3", "2", "--quiet", *extra]  # fmt: skip
    assert evaluate_main(args) == 0
    return json.loads((path / "metrics.json").read_text())


def test_metrics_json_has_every_required_field(checkpoint, data_dir):
    m = run(checkpoint, data_dir)
    assert (m["task"], m["family"], m["samples"]) == ("cola", "hsto", 4)
    for side in ("id", "ood"):
        for key in ("accuracy_mean", "accuracy_std", "mcc_mean", "mcc_std", "nll", "brier",
                    "ece", "mean_entropy", "mean_mutual_information", "mean_variance"):  # fmt: skip
            assert isinstance(m[side][key], float), (side, key)
    assert 0.0 <= m["ood_detection"]["mutual_information"]["auroc"] <= 1.0
    for method in ("lac", "aps"):  # the conformal guarantee over dev + test re-splits
        r = m["id"]["conformal_90"][method]["resampled"]
        assert (r["splits"], r["n_cal"], r["n_eval"]) == (1000, m["temperature"]["dev_size"],
                                                          m["sizes"]["id"])  # fmt: skip
        assert 0.0 <= r["low"] <= r["mean"] <= r["high"] <= 1.0
    rows = m["table3"]
    assert len(rows) == len(PAPER_TABLE3) + 4  # the paper's sentences + 2 picks per domain
    assert {r["domain"] for r in rows} == {"id", "ood"}
    assert all(0 <= r["correct"] <= r["T"] == 4 and r["p_gold_var"] >= 0 for r in rows)
    assert load_checkpoint(checkpoint).metrics == m  # the strict loader reads it back


def test_re_evaluating_with_the_same_seed_gives_the_same_numbers(checkpoint, data_dir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(checkpoint, copy)
    assert run(checkpoint, data_dir) == run(copy, data_dir)
    assert run(copy, data_dir, "--seed", "1")["id"] != run(checkpoint, data_dir)["id"]


def test_a_checkpoint_without_a_task_is_refused(tmp_path, data_dir, capsys):
    ck = load_checkpoint(_any_tiny(tmp_path, data_dir))
    bare = tmp_path / "bare"
    save_checkpoint(bare, ck.model, ck.config, ck.vocab, training={})
    assert evaluate_main(["--ckpt", str(bare), "--data-dir", str(data_dir), "--quiet"]) == 2
    assert "training.task" in capsys.readouterr().err


def _any_tiny(tmp_path, data_dir):
    out = tmp_path / "tiny"
    args = ["--task", "cola", "--family", "trans", "--out", str(out), "--data-dir", str(data_dir)]
    assert train_main([*args, *TINY]) == 0
    return out


def test_results_doc_sets_our_numbers_beside_the_papers(checkpoint, data_dir, tmp_path):
    m = run(checkpoint, data_dir)
    root = tmp_path / "root"
    shutil.copytree(checkpoint, root / "cola-hsto")
    out = tmp_path / "results.md"
    assert results_main(["--root", str(root), "--out", str(out)]) == 0
    text = out.read_text()
    mcc = f"{100 * m['id']['mcc_mean']:.2f} ± {100 * m['id']['mcc_std']:.2f}"
    assert f"| cola-hsto | {mcc} |" in text
    assert "H-STO-TRANS | 20.52 ± 0.76 | 16.49 ± 4.08" in text  # the paper's Table 2 row
    assert "john is tall on several occasions . (0)" in text  # a Table 3 row
    assert results_main(["--root", str(tmp_path / "empty"), "--out", str(out)]) == 2


def test_the_training_table_reads_each_checkpoints_own_files(checkpoint, data_dir, tmp_path,
                                                             capsys):  # fmt: skip
    """docs/training.md's MiniLM tables: every figure from the checkpoint's config/metrics."""
    m = run(checkpoint, data_dir)
    root = tmp_path / "root"
    shutil.copytree(checkpoint, root / "cola-hsto")
    shutil.copytree(checkpoint, root / "imdb-other")  # another prefix: left out
    assert results_main(["--root", str(root), "--training-table", "cola-"]) == 0
    rows = [r for r in capsys.readouterr().out.splitlines() if r.startswith("| cola")]
    member = load_checkpoint(checkpoint).training["members"][0]
    i, o = m["id"], m["ood"]
    assert len(rows) == 1 and rows[0].startswith(
        f"| cola-hsto | {member['dev_mcc']:.3f} ({member['best_epoch']}) | "
        f"{i['mcc_mean']:.3f} ± {i['mcc_std']:.3f} | {o['mcc_mean']:.3f} | "
        f"{100 * i['accuracy_mean']:.1f} |"
    ), rows


def test_results_list_each_checkpoints_float16_storage_check():
    from uqlab.results import render

    check = {"max_abs_log_prob_diff": 0.0034, "max_abs_prob_diff": 0.00061,
             "argmax_agreement": 1.0, "examples": 500, "samples": 2}  # fmt: skip
    text = render([("imdb-a", None), ("imdb-b", None)], {"imdb-a": check, "imdb-b": None})
    assert "| imdb-a | 3.4e-03 | 6.1e-04 | 1.0000 | 500 × 2 |" in text
    assert "| imdb-b | not recorded" in text
    assert "Float16 storage" not in render([("imdb-a", None)])


def test_sweep_table_reads_dev_before_test_from_real_runs(checkpoint, data_dir, tmp_path, capsys):
    """scripts/sweep.sh prints this table; each row's numbers are the run's own files."""
    from uqlab.sweep_table import main as sweep_main
    from uqlab.sweep_table import sweep_row

    runs = []
    for value in ("1", "2"):
        run_dir = tmp_path / f"dev_samples={value}"
        shutil.copytree(checkpoint, run_dir)
        runs.append(run_dir)
    m = run(runs[1], data_dir, "--seed", "1")  # the second run differs from the first
    run(runs[0], data_dir)
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
