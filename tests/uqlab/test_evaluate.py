"""Evaluation: metrics.json from real (tiny) checkpoints, reproducible for a seed."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.helpers import TINY, evaluate_tiny, tiny_siblings
from uqcore.checkpoint import load_checkpoint, save_checkpoint
from uqlab.catalog.conformal_scores import decode
from uqlab.catalog.provenance import is_absolute
from uqlab.evaluate import main as evaluate_main
from uqlab.evaluation.paper import TABLE3 as PAPER_TABLE3
from uqlab.train import main as train_main


def test_metrics_json_has_every_required_field(checkpoint, data_dir):
    m = evaluate_tiny(checkpoint, data_dir)
    assert (m["task"], m["family"], m["samples"]) == ("cola", "hsto", 4)
    assert not is_absolute(m["data_source"]), m["data_source"]  # names no build machine
    for side in ("id", "ood"):
        for key in (
            "accuracy_mean",
            "accuracy_std",
            "mcc_mean",
            "mcc_std",
            "nll",
            "brier",
            "ece",
            "mean_entropy",
            "mean_mutual_information",
            "mean_variance",
        ):
            assert isinstance(m[side][key], float), (side, key)
    assert 0.0 <= m["ood_detection"]["mutual_information"]["auroc"] <= 1.0
    versus = m["error_detection"]["id"]["versus_max_prob"]  # each score beside 1 - max p
    assert set(versus) == {"entropy", "mutual_information", "variance"}
    for v in filter(None, versus.values()):
        low, high = v["interval"]
        assert low <= high and v["verdict"] in {"better", "tie", "worse"}
        assert v["difference"] == pytest.approx(v["auroc"] - v["baseline_auroc"])
    matched = m["ood_detection_length_matched"]  # length held fixed, or why not
    assert matched["of"] == [m["sizes"]["id"], m["sizes"]["ood"]] and matched["bin_width"] == 1
    assert ("auroc" in matched) == (matched["n_per_side"] >= matched["min_per_side"])
    assert "auroc" in matched or "hardly overlap" in matched["note"]
    for method in ("lac", "aps"):  # the conformal guarantee over dev + test re-splits
        r = m["id"]["conformal_90"][method]["resampled"]
        assert (r["splits"], r["n_cal"], r["n_eval"]) == (
            1000,
            m["temperature"]["dev_size"],
            m["sizes"]["id"],
        )
        assert 0.0 <= r["low"] <= r["mean"] <= r["high"] <= 1.0
    stored = m["conformal_calibration"]["scores"]  # what the explorer's slider reads: LAC only,
    assert set(stored) == {"lac_steps_e5"}  # in the compact form (uqlab.catalog.conformal_scores)
    lac = decode(stored)
    assert len(lac) == m["temperature"]["dev_size"] and lac == sorted(lac)
    assert all(0.0 <= x <= 1.0 for x in lac) and lac[-1] > 0
    rows = m["table3"]
    assert len(rows) == len(PAPER_TABLE3) + 4  # the paper's sentences + 2 picks per domain
    assert {r["domain"] for r in rows} == {"id", "ood"}
    assert all(0 <= r["correct"] <= r["T"] == 4 and r["p_gold_var"] >= 0 for r in rows)
    assert load_checkpoint(checkpoint).metrics == m  # the strict loader reads it back


def test_re_evaluating_with_the_same_seed_gives_the_same_numbers(checkpoint, data_dir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(checkpoint, copy)
    assert evaluate_tiny(checkpoint, data_dir) == evaluate_tiny(copy, data_dir)
    assert (
        evaluate_tiny(copy, data_dir, "--seed", "1")["id"]
        != evaluate_tiny(checkpoint, data_dir)["id"]
    )


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


def test_every_stage_says_what_it_does_and_the_features_have_a_bar(checkpoint, data_dir, capsys):
    """The Mahalanobis features ran minutes without a word on a SmolLM2 checkpoint (CPU): they
    now count their texts, training rows and both domains, like the sampling before them."""
    from uqlab.evaluate import evaluate_checkpoint

    ck = load_checkpoint(checkpoint)
    evaluate_checkpoint(ck, data_dir, T=2, limit=40, per_domain=1, progress=True)
    got = capsys.readouterr()
    err = got.out + got.err  # stage lines on stdout, bars on stderr
    # both domains' features come with their samples: the features pass reads the training rows
    assert "features of 40 training texts (both domains': read with their samples)" in err
    bars = [line for line in err.replace("\r", "\n").splitlines() if " features: 100%" in line]
    assert bars and bars[-1].split("|")[2].strip().startswith("40/40"), bars[-1:]
    assert "the per-example Table 3" in err


def test_the_ood_set_alone_is_capped_the_features_pass_skipped_and_notes_said(
    checkpoint, data_dir, tmp_path, capsys
):
    """Issue 45: no way to cap the OOD set alone or skip the second pass over the texts (the
    features behind the Mahalanobis baseline); 15 OOD texts fill no length bin with 20 of both
    domains, and that is said in metrics.json's notes and on stdout beside the figures."""
    from uqlab.evaluation.detection_report import metric_notes

    copy = tmp_path / "copy"
    shutil.copytree(checkpoint, copy)
    args = ["--ckpt", str(copy), "--samples", "2", "--limit", "40", "--data-dir", str(data_dir)]
    assert evaluate_main([*args, "--table3", "1", "--ood-limit", "15", "--no-mahalanobis"]) == 0
    out = capsys.readouterr().out
    m = json.loads((copy / "metrics.json").read_text())
    assert m["sizes"] == {"id": 40, "ood": 15} and (m["limit"], m["ood_limit"]) == (40, 15)
    assert "mahalanobis" not in m["ood_detection"] and "max_prob" in m["ood_detection"]
    assert "--no-mahalanobis" in m["skipped"]["mahalanobis"]
    assert "features of" not in out  # the second pass never ran
    assert m["notes"] == metric_notes(m) and any("Length could not" in n for n in m["notes"])
    for note in m["notes"]:
        assert f"copy: note: {note}" in out


def test_an_ood_limit_below_one_is_refused_in_one_line(checkpoint, data_dir, capsys):
    with pytest.raises(SystemExit) as exc:
        evaluate_main(["--ckpt", str(checkpoint), "--ood-limit", "0", "--data-dir", str(data_dir)])
    assert exc.value.code == 2
    assert "--ood-limit must be a positive integer, got 0" in capsys.readouterr().err


def test_a_family_is_paired_with_its_plain_sibling_and_the_comparison_alone_redoes_it(
    tmp_path, data_dir, capsys
):
    """Issue 47: "does this family's uncertainty beat the deterministic model's 1 - max p?",
    paired on the same texts: the plain sibling in the same folder is found and sampled once;
    ``--comparison-only`` redoes the block from what metrics.json records (samples, seed,
    parts) and leaves every other figure as it was."""
    root = tmp_path / "cks"
    tiny_siblings(root, data_dir)
    m = evaluate_tiny(root / "cola-hsto", data_dir)
    block = m["comparison"]
    assert (block["baseline"], block["baseline_samples"], block["chosen_on"]) == (
        "cola-trans",
        1,
        "dev",
    )
    assert block["n"] == m["sizes"]["id"] and "verdict" in block["errors"]
    assert block["ood_matched"]["n_per_side"] >= 0
    assert evaluate_tiny(root / "cola-trans", data_dir)["comparison"]["baseline"] is None
    capsys.readouterr()
    hsto = root / "cola-hsto"
    again = ["--ckpt", str(hsto), "--comparison-only", "--data-dir", str(data_dir), "--quiet"]
    assert evaluate_main(again) == 0
    assert json.loads((hsto / "metrics.json").read_text()) == m  # the same block, all else kept
    assert "against cola-trans's 1−p; errors " in capsys.readouterr().out
    assert evaluate_main([*again, "--baseline", "none"]) == 0
    assert json.loads((hsto / "metrics.json").read_text())["comparison"]["baseline"] is None
    said = json.loads((hsto / "metrics.json").read_text())  # evaluated on texts CoLA lacks
    said["ood_detection_length_matched"]["set"] = "review sentences"
    (hsto / "metrics.json").write_text(json.dumps(said))
    assert evaluate_main(again) == 2
    assert "pass the task file it was evaluated with" in capsys.readouterr().err
    bare = tmp_path / "bare"
    shutil.copytree(root / "cola-trans", bare)
    (bare / "metrics.json").unlink()
    assert evaluate_main(["--ckpt", str(bare), "--comparison-only", "--quiet"]) == 2
    assert "has no metrics.json: evaluate it first" in capsys.readouterr().err
