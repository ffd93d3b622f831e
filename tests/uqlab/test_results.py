"""The results documents (uqlab.results): our numbers beside the paper's, from real (tiny)
checkpoints."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import evaluate_tiny
from uqcore.checkpoint import load_checkpoint
from uqlab.catalog.paths import checkpoint_dir
from uqlab.results import (
    MEAN_PREDICTION,
    _main_table,
    mean_prediction_cell,
    metric_rows,
    part_note,
    texts_cell,
)
from uqlab.results import main as results_main


def test_results_doc_sets_our_numbers_beside_the_papers(checkpoint, data_dir, tmp_path):
    m = evaluate_tiny(checkpoint, data_dir)
    root = tmp_path / "root"
    shutil.copytree(checkpoint, root / "cola-hsto")
    out = tmp_path / "results.md"
    assert results_main(["--root", str(root), "--out", str(out)]) == 0
    text = out.read_text()
    mcc = f"{100 * m['id']['mcc_mean']:.2f} ± {100 * m['id']['mcc_std']:.2f}"
    assert f"| cola-hsto | {mcc} |" in text
    assert "H-STO-TRANS | 20.52 ± 0.76 | 16.49 ± 4.08" in text  # the paper's Table 2 row
    assert "john is tall on several occasions . (0)" in text  # a Table 3 row
    # evaluated with --limit 40: the table says its figures come from part of each split
    assert m["limit"] == 40 and m["sizes"] == {"id": 40, "ood": 40}
    assert "Evaluated on a part of each split" in text and "cola-hsto: 40 / 40 texts" in text
    assert results_main(["--root", str(tmp_path / "empty"), "--out", str(out)]) == 2


def test_the_training_table_reads_each_checkpoints_own_files(
    checkpoint, data_dir, tmp_path, capsys
):
    """docs/training.md's MiniLM tables: every figure from the checkpoint's config/metrics."""
    m = evaluate_tiny(checkpoint, data_dir)
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

    check = {
        "max_abs_log_prob_diff": 0.0034,
        "max_abs_prob_diff": 0.00061,
        "argmax_agreement": 1.0,
        "examples": 500,
        "samples": 2,
    }
    text = render([("imdb-a", None), ("imdb-b", None)], {"imdb-a": check, "imdb-b": None})
    assert "| imdb-a | 3.4e-03 | 6.1e-04 | 1.0000 | 500 × 2 |" in text
    assert "| imdb-b | not recorded" in text
    assert "Float16 storage" not in render([("imdb-a", None)])


def test_metric_rows_set_ours_beside_the_papers() -> None:
    m = {
        "family": "hsto",
        "id": {"mcc_mean": 0.3, "mcc_std": 0.01, "ece": 0.12346, "mean_mutual_information": 0.001},
        "ood": {"mcc_mean": 0.2, "mcc_std": 0.02, "mean_mutual_information": 0.002},
        "ood_detection": {"mutual_information": {"auroc": 0.61234}},
    }
    base = {**m, "family": "trans", "id": {**m["id"], "mcc_mean": 0.25}}
    rows = metric_rows("cola", [("cola-trans", base), ("cola-hsto", m), ("cola-x", None)])
    hsto = rows[1]
    assert hsto["ours ID"] == "30.00 ± 1.00" and hsto["ours OOD"] == "20.00 ± 2.00"
    assert hsto["Δ ID vs TRANS"] == "+5.00" and rows[0]["Δ ID vs TRANS"] == "+0.00"
    assert (hsto["paper row"], hsto["paper ID"]) == ("H-STO-TRANS", "20.52 ± 0.76")
    assert hsto["ECE (ID)"] == 0.1235 and hsto["AUROC (MI)"] == 0.612
    assert hsto["MI ID → OOD"] == "0.0010 → 0.0020"
    assert rows[2]["ours ID"] == "not evaluated" and rows[2]["paper row"] == "—"
    alone = metric_rows("cola", [("cola-hsto", m)])  # no baseline evaluated
    assert alone[0]["Δ ID vs TRANS"] == "—"


def test_the_mean_prediction_sits_beside_the_runs_where_it_was_recorded() -> None:
    """An ensemble's or a posterior's T runs each read lower than their mean prediction:
    Table 1 prints both, from the comparison block; a task whose metric the block does not
    bootstrap (CoLA's MCC) and files without the block get no column and "—"."""
    side = {"accuracy_mean": 0.897, "accuracy_std": 0.003, "mean_mutual_information": 0.0}
    m = {"family": "laplace", "task": "imdb", "id": {**side, "ece": 0.01}, "ood": side}
    m["comparison"] = {"intervals": {"accuracy": {"value": 0.90072, "interval": [0.89, 0.91]}}}
    old = {**m, "family": "mcdropout"}
    del old["comparison"]
    rows = metric_rows("imdb", [("imdb-a", m), ("imdb-b", old), ("imdb-c", None)])
    assert [r[MEAN_PREDICTION] for r in rows] == ["90.07", "—", "—"]
    assert rows[0]["ours ID"] == "89.70 ± 0.30"
    text = "\n".join(_main_table([("imdb-a", m), ("imdb-b", old), ("imdb-c", None)], "imdb"))
    assert "| ours ID | ours OOD | ID, mean prediction | Δ ID vs our trans |" in text
    assert "| imdb-a | 89.70 ± 0.30 | 89.70 ± 0.30 | 90.07 | — |" in text
    assert "| imdb-c | not evaluated | | | | — | — | — |" in text
    assert "ID, mean prediction: the accuracy of the mean of the T predictions" in text
    cola = {"family": "trans", "id": {"mcc_mean": 0.2, "mcc_std": 0.0, "ece": 0.1}}
    cola["id"]["mean_mutual_information"] = 0.0
    cola["comparison"] = m["comparison"]  # accuracy recorded, the table's MCC not
    assert MEAN_PREDICTION not in metric_rows("cola", [("cola-a", cola)])[0]
    assert "mean prediction" not in "\n".join(_main_table([("cola-a", cola)], "cola"))
    for block in ({"intervals": {"accuracy": {"value": True}}}, {"intervals": []}, [], "x"):
        # a hand-written file of another shape: no cell, never a traceback
        assert mean_prediction_cell({"comparison": block}, "accuracy") == "—"


def test_a_part_of_the_splits_is_said_wherever_the_figures_are_shown() -> None:
    """A checkpoint evaluated on the first texts of each split (a CPU run of a decoder) sits
    beside ones evaluated on all of them: the app's column and the doc's note say so."""
    whole = {"sizes": {"id": 25000, "ood": 500}}
    part = {"sizes": {"id": 500, "ood": 500}, "limit": 500}
    assert texts_cell(whole) == "25,000 / 500" and texts_cell(part) == "500 / 500 (part)"
    assert texts_cell(None) == "—" and texts_cell({"id": {}}) == "—"  # older files: no sizes
    assert texts_cell({"sizes": {"id": 12}}) == "12"  # a described task without OOD
    assert part_note([("a", whole), ("b", None)]) == []
    (line, blank) = part_note([("a", whole), ("imdb-x", part)])
    assert "imdb-x: 500 / 500 texts" in line and "a:" not in line and blank == ""


def noted_copy(checkpoint, data_dir, root) -> dict:
    """A copy of the tiny checkpoint in ``root`` evaluated on 15 OOD texts (no length bin holds
    20 of both domains), its metrics.json then given issue 45's SST-2-vs-IMDB figures: the
    Mahalanobis AUROC 0.287 and a temperature that raises ECE 0.085 -> 0.106."""
    import json

    shutil.copytree(checkpoint, root / "cola-hsto")
    m = evaluate_tiny(root / "cola-hsto", data_dir, "--ood-limit", "15")
    m["ood_detection"]["mahalanobis"]["auroc"] = 0.287
    m["id"]["ece"], m["id"]["scaled"]["ece"] = 0.085, 0.106
    (root / "cola-hsto" / "metrics.json").write_text(json.dumps(m))
    return m


def test_the_notes_stand_beside_the_figures_in_results_md(checkpoint, data_dir, tmp_path):
    """Issue 45: a Mahalanobis AUROC below 0.5, OOD AUROCs no length bin could check and a
    temperature that raises ECE were printed without a word."""
    noted_copy(checkpoint, data_dir, tmp_path / "root")
    out = tmp_path / "results.md"
    assert results_main(["--root", str(tmp_path / "root"), "--out", str(out)]) == 0
    text = out.read_text()
    assert "Mahalanobis 0.287" in text.split("Ranking backwards (AUROC below 0.5):")[1]
    assert "- cola-hsto: Length could not be controlled" in text
    hurt = text.split("Temperature scaling that raises ECE:")[1]
    assert "- cola-hsto, by its evaluation: Temperature scaling (t = " in hurt
    assert "in-domain test ECE 0.085 → 0.106" in hurt


def test_docs_results_md_is_what_the_command_writes_from_the_shipped_files(tmp_path):
    """docs/results.md is regenerated, never edited: it must equal `python -m uqlab.results`
    run on the shipped checkpoints (the first-screen table once lagged the assets for weeks)."""
    out = tmp_path / "results.md"
    assert results_main(["--root", str(checkpoint_dir()), "--out", str(out)]) == 0
    doc = Path(__file__).resolve().parents[2] / "docs" / "results.md"
    assert out.read_text() == doc.read_text(), (
        "docs/results.md differs from what `python -m uqlab.results` writes from assets/: "
        "run that command and commit the file"
    )


@pytest.mark.parametrize(
    "metrics",
    [
        {"id": {}, "ood": {}, "samples": 10},  # what an upload's check lets through
        {"id": {"accuracy_mean": "a", "accuracy_std": 0, "ece": [1]}, "ood": {}, "samples": 1},
        {"id": {"accuracy_mean": True, "accuracy_std": None}, "ood": [], "ood_detection": []},
        {"id": [], "ood_detection": {"mutual_information": {"auroc": "x"}}, "comparison": 3},
    ],
)
def test_a_metrics_file_of_another_shape_gives_dashes_not_a_traceback(metrics) -> None:
    """A visitor's checkpoint may bring its own metrics.json; the Results page reads it with
    the shipped ones. Defect: a file with empty 'id' / 'ood' sections raised KeyError there."""
    good = {"family": "trans", "id": {"accuracy_mean": 0.9, "accuracy_std": 0.0, "ece": 0.01}}
    rows = metric_rows("imdb", [("imdb-trans", good), ("imdb-upload", metrics)])
    row = rows[1]
    assert row["ours ID"] == "—" and row["Δ ID vs TRANS"] == "—"
    assert row["ECE (ID)"] is None and row["AUROC (MI)"] is None and row["MI ID → OOD"] == "—"
    assert rows[0]["ours ID"] == "90.00 ± 0.00"
