"""The read-at-512 versus read-at-the-training-length table (uqlab.evaluation.reading_length):
two figures a checkpoint, three for one continued at a longer length (its first stage between)."""

from __future__ import annotations

import json

import pytest

import uqlab.evaluation.reading_length as rl


def _metrics(accuracy: float, read_len: int) -> dict:
    return {
        "read_len": read_len,
        "id": {"accuracy_mean": accuracy, "ece": 0.02},
        "ood": {"accuracy_mean": 0.8},
        "ood_detection": {"mutual_information": {"auroc": 0.7}, "max_prob": {"auroc": 0.6}},
    }


def _shipped(tmp_path, monkeypatch, continued: tuple[str, ...]) -> None:
    """Two checkpoint folders under a fake shipped dir; ``continued`` record an init_from."""
    root = tmp_path / "checkpoints"
    for name in ("imdb-minilm-hsto", "imdb-minilm-trans"):
        (root / name).mkdir(parents=True)
        training = {"init_from": {"checkpoint": f"{name}-256"}} if name in continued else {}
        (root / name / "config.json").write_text(json.dumps({"training": training}))
    monkeypatch.setattr(rl, "SHIPPED_CHECKPOINT_DIR", root)
    at = {"a088136": 0.904, "d1af3bc": 0.886}  # what each revision's metrics.json held
    monkeypatch.setattr(rl, "_metrics_at", lambda rev, folder: _metrics(at[rev], 256))


def test_a_continued_checkpoint_shows_its_first_stage_between_the_two(tmp_path, monkeypatch):
    _shipped(tmp_path, monkeypatch, continued=("imdb-minilm-hsto",))
    out = tmp_path / "record.json"
    rl.record("a088136", out)
    stage = rl.record_stage("d1af3bc", out)
    assert list(stage["checkpoints"]) == ["imdb-minilm-hsto"] and stage["rev"] == "d1af3bc"
    rl.record("a088136", out)  # recording the 512 figures again keeps the stages
    rows = [("imdb-minilm-hsto", _metrics(0.915, 512)), ("imdb-minilm-trans", _metrics(0.9, 256))]
    table = rl.markdown(rows, out)
    hsto = next(line for line in table if line.startswith("| imdb-minilm-hsto |"))
    trans = next(line for line in table if line.startswith("| imdb-minilm-trans |"))
    assert "| 512 → 256 → 512 | 0.904 → 0.886 → 0.915 |" in hsto
    assert "| 512 → 256 | 0.904 → 0.900 |" in trans  # no stage: two figures


def test_without_a_record_there_is_no_table(tmp_path):
    assert rl.markdown([("x", _metrics(0.9, 256))], tmp_path / "none.json") == []


def test_the_command_needs_a_revision(capsys):
    with pytest.raises(SystemExit) as exc:
        rl.main([])
    assert exc.value.code == 2
    assert "give --before REV, --stage REV or both" in capsys.readouterr().err
