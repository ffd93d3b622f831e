"""One task description from import to evaluation (issue 36): an imported model evaluates on the
task of its file, a task file for another task is refused, a moved one is noted; error
detection equals scikit-learn's on the checkpoint's own samples; the replaced metrics.json is
kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from tests.task_files import tiny_task
from uqcore.checkpoint import load_checkpoint
from uqcore.inference.batch_predict import predict_ids
from uqcore.stats import OOD_SCORES, ood_scores
from uqlab import import_hf
from uqlab.data import load_task
from uqlab.evaluate import PREVIOUS
from uqlab.evaluate import main as evaluate_main

pytest.importorskip("transformers")
ARGS = ["--samples", "3", "--table3", "1", "--quiet"]


@pytest.fixture()
def imported(hf_folder, tmp_path, tasks_restored):
    """A tiny BERT classifier imported for a described task (40 CSV rows, 2 labels)."""
    task = tiny_task(tmp_path / "task")
    root = tmp_path / "ck"
    argv = [str(hf_folder), "--name", "mine", "--task-file", str(task), "--root", str(root)]
    assert import_hf.main(argv) == 0
    del tasks_restored["tiny-acc"]  # a later process: only the checkpoint names the task
    return root / "mine", task


def test_an_imported_model_evaluates_on_the_task_of_its_file(imported, capsys):
    ck, _ = imported
    assert evaluate_main(["--ckpt", str(ck), *ARGS]) == 0, capsys.readouterr().err
    m = json.loads((ck / "metrics.json").read_text())
    data = load_task("tiny-acc", None)
    assert m["task"] == "tiny-acc" and m["sizes"] == {"id": len(data.test)}
    assert m["read_len"] == load_checkpoint(ck).read_len
    # error detection: scikit-learn's AUROC on the checkpoint's own samples of the test split
    model = load_checkpoint(ck)
    encoded = [model.vocab.encode(t, model.read_len).ids for t in data.test.texts]
    probs = predict_ids(model.model, encoded, 3, 0).numpy()  # [T, N, C]
    wrong = probs.mean(0).argmax(-1) != np.asarray(data.test.labels)
    for score in OOD_SCORES:
        got = m["error_detection"]["id"][score]["auroc"]
        if wrong.all() or not wrong.any():
            assert got is None
        else:
            assert got == pytest.approx(roc_auc_score(wrong, ood_scores(probs, score)), abs=1e-9)


def test_a_task_file_for_another_task_is_refused_and_a_moved_one_is_noted(
    imported, capsys, tmp_path
):
    ck, task = imported
    other = tiny_task(tmp_path / "other", "other-acc")
    assert evaluate_main(["--ckpt", str(ck), "--task-file", str(other), *ARGS]) == 2
    err = capsys.readouterr().err
    assert "trained on task 'tiny-acc'" in err and "'other-acc'" in err and "--task-file" in err
    assert not (ck / "metrics.json").exists()  # nothing written
    moved = tmp_path / "moved"
    shutil.copytree(task.parent, moved)
    assert evaluate_main(["--ckpt", str(ck), "--task-file", str(moved / task.name), *ARGS]) == 0
    assert "describes 'tiny-acc' differently" in capsys.readouterr().err


def test_a_checkpoint_naming_no_task_takes_the_file_s_and_says_so(imported, capsys, tmp_path):
    ck, task = imported
    bare = tmp_path / "bare"
    shutil.copytree(ck, bare)
    doc = json.loads((bare / "config.json").read_text())
    del doc["training"]["task"], doc["training"]["task_spec"]
    (bare / "config.json").write_text(json.dumps(doc))
    assert evaluate_main(["--ckpt", str(bare), "--task-file", str(task), *ARGS]) == 0
    assert "names no task: using tiny-acc.json" in capsys.readouterr().err
    assert json.loads((bare / "metrics.json").read_text())["task"] == "tiny-acc"


def test_evaluating_again_keeps_the_metrics_it_replaces(imported):
    ck, _ = imported
    assert evaluate_main(["--ckpt", str(ck), *ARGS]) == 0
    first = (ck / "metrics.json").read_bytes()
    assert not (ck / PREVIOUS).exists()
    assert evaluate_main(["--ckpt", str(ck), *ARGS, "--seed", "1"]) == 0
    assert (ck / PREVIOUS).read_bytes() == first != (ck / "metrics.json").read_bytes()


def test_every_shipped_checkpoint_records_its_reading_length():
    from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR

    for folder in sorted(Path(SHIPPED_CHECKPOINT_DIR).iterdir()):
        m = json.loads((folder / "metrics.json").read_text())
        if "-minilm-" in folder.name or "-smollm2-" in folder.name:
            trained = json.loads((folder / "config.json").read_text())["training"]["config"]
            assert m["read_len"] == trained["max_len"], folder.name


def test_a_task_without_examples_keeps_the_stored_samples_and_map(imported, capsys, tmp_path):
    """Issue 45: an evaluation on a task with no bundled examples rewrote the stored samples and
    map with 0 rows (1,000 -> 0) and showed an empty ``stored: 0text`` bar. They are kept
    byte for byte, one sentence says so, and no bar is drawn for nothing."""
    from uqlab.evaluation.stored import FILE as STORED_FILE
    from uqlab.evaluation.stored import bundled_rows
    from uqlab.feature_map import FILE as MAP_FILE

    ck, task = imported
    with_examples = tiny_task(tmp_path / "with", examples={"id": "rows.csv"})
    assert evaluate_main(["--ckpt", str(ck), "--task-file", str(with_examples), *ARGS]) == 0
    assert len(bundled_rows("tiny-acc")) == 40
    before = {f: (ck / f).read_bytes() for f in (STORED_FILE, MAP_FILE)}
    capsys.readouterr()
    args = ["--ckpt", str(ck), "--task-file", str(task), "--samples", "3", "--table3", "1"]
    assert evaluate_main(args) == 0  # not quiet: the bars are drawn
    assert not bundled_rows("tiny-acc")
    got = capsys.readouterr()
    assert {f: (ck / f).read_bytes() for f in before} == before
    assert "has no bundled examples" in got.out and "kept as they were" in got.out
    assert "stored samples ->" not in got.out and "map of the examples ->" not in got.out
    assert "mine stored" not in got.err and "mine: 100%" in got.err  # no bar for nothing
    assert json.loads((ck / "metrics.json").read_text())["task"] == "tiny-acc"  # still evaluated


def test_the_length_matched_figure_draws_the_task_s_ood_matched_texts(hf_folder, tmp_path):
    """Issue 47: a task whose out-of-domain set is long texts names them cut to the in-domain
    form (``ood_matched``); the length-matched OOD AUROC is then the in-domain test texts against
    those, drawn to one histogram of tokens read, named under ``set`` (the long texts alone would
    leave no text a side)."""
    from uqcore.inference.detection import length_matched, matching_edges

    folder = tmp_path / "task"
    folder.mkdir()
    long = [" ".join(f"word{j} long review {i}" for j in range(30)) for i in range(12)]
    short = [f"sentence number {i} here" for i in range(30)]  # the in-domain form
    for name, texts in (("long.csv", long), ("cut.csv", short)):
        rows = "".join(f"{t},{i % 2}\n" for i, t in enumerate(texts))
        (folder / name).write_text("text,label\n" + rows, encoding="utf-8")
    task = tiny_task(
        folder,
        ood={"file": "long.csv", "name": "Long"},
        ood_matched={"file": "cut.csv", "name": "Long, cut"},
    )
    root = tmp_path / "ck"
    argv = [str(hf_folder), "--name", "cut", "--task-file", str(task), "--root", str(root)]
    assert import_hf.main(argv) == 0
    assert evaluate_main(["--ckpt", str(root / "cut"), *ARGS, "--no-mahalanobis"]) == 0
    m = json.loads((root / "cut" / "metrics.json").read_text())
    got = m["ood_detection_length_matched"]
    assert got["set"] == "Long, cut" and got["of"] == [8, 30]
    ck = load_checkpoint(root / "cut")
    data = load_task("tiny-acc", None)
    lengths = [
        [len(ck.vocab.encode(t, ck.read_len).ids) for t in s] for s in (data.test.texts, short)
    ]
    kept = length_matched(*lengths, matching_edges(ck.read_len), seed=0)
    assert got["n_per_side"] == kept.n > 0
    assert m["sizes"] == {"id": 8, "ood": 12}  # the cut texts serve this figure only
