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


def _shipped(tmp_path, monkeypatch, continued: tuple[str, ...], history: dict) -> None:
    """Three checkpoint folders under a fake shipped dir; ``continued`` record an init_from now.
    ``history``: revision -> checkpoint -> (ID accuracy its metrics.json held then, whether
    its config.json there recorded an init_from)."""
    root = tmp_path / "checkpoints"
    for name in ("imdb-minilm-hsto", "imdb-minilm-mcdropout", "imdb-minilm-trans"):
        (root / name).mkdir(parents=True)
        training = {"init_from": {"checkpoint": f"{name}-256"}} if name in continued else {}
        (root / name / "config.json").write_text(json.dumps({"training": training}))
    monkeypatch.setattr(rl, "SHIPPED_CHECKPOINT_DIR", root)

    def at(rev: str, file):
        accuracy, was_continued = history[rev][file.parent.name]
        if file.name == "config.json":
            return {"training": {"init_from": {"checkpoint": "x"}} if was_continued else {}}
        return _metrics(accuracy, 512 if was_continued else 256)

    monkeypatch.setattr(rl, "_at", at)


BEFORE = dict.fromkeys(["imdb-minilm-hsto", "imdb-minilm-mcdropout", "imdb-minilm-trans"])
HISTORY = {  # the 512 figures, hsto's first stage, then mcdropout's with hsto already continued
    "a088136": {name: (0.904, False) for name in BEFORE},
    "d1af3bc": {name: (0.886, False) for name in BEFORE},
    "f00d123": {
        "imdb-minilm-hsto": (0.921, True),
        "imdb-minilm-mcdropout": (0.892, False),
        "imdb-minilm-trans": (0.9, False),
    },
}


def _line(table: list[str], name: str) -> str:
    return next(line for line in table if line.startswith(f"| {name} |"))


def test_a_continued_checkpoint_shows_its_first_stage_between_the_two(tmp_path, monkeypatch):
    _shipped(tmp_path, monkeypatch, ("imdb-minilm-hsto",), HISTORY)
    out = tmp_path / "record.json"
    rl.record("a088136", out)
    stage = rl.record_stage("d1af3bc", out)
    assert list(stage["checkpoints"]) == ["imdb-minilm-hsto"]
    assert stage["revs"] == {"imdb-minilm-hsto": "d1af3bc"}
    rl.record("a088136", out)  # recording the 512 figures again keeps the stages
    rows = [("imdb-minilm-hsto", _metrics(0.915, 512)), ("imdb-minilm-trans", _metrics(0.9, 256))]
    table = rl.markdown(rows, out)
    assert "| 512 → 256 → 512 | 0.904 → 0.886 → 0.915 |" in _line(table, "imdb-minilm-hsto")
    assert "| 512 → 256 | 0.904 → 0.900 |" in _line(table, "imdb-minilm-trans")  # no stage
    assert (
        rl.command(out)
        == "python -m uqlab.evaluation.reading_length --before a088136 --stage d1af3bc"
    )


def test_a_later_stage_adds_its_checkpoint_and_keeps_the_earlier_ones(tmp_path, monkeypatch):
    """At f00d123 hsto is already continued (its metrics.json there is the 512 model's): a
    second --stage must add mcdropout's first stage and leave hsto's from d1af3bc."""
    _shipped(tmp_path, monkeypatch, ("imdb-minilm-hsto",), HISTORY)
    out = tmp_path / "record.json"
    rl.record("a088136", out)
    rl.record_stage("d1af3bc", out)
    _shipped(
        tmp_path / "later", monkeypatch, ("imdb-minilm-hsto", "imdb-minilm-mcdropout"), HISTORY
    )
    stage = rl.record_stage("f00d123", out)
    assert stage["revs"] == {"imdb-minilm-hsto": "d1af3bc", "imdb-minilm-mcdropout": "f00d123"}
    assert stage["checkpoints"]["imdb-minilm-hsto"]["id_accuracy"] == 0.886
    rows = [("imdb-minilm-mcdropout", _metrics(0.907, 512))]
    assert "| 512 → 256 → 512 | 0.904 → 0.892 → 0.907 |" in _line(
        rl.markdown(rows, out), rows[0][0]
    )
    assert rl.command(out).endswith("--before a088136 --stage d1af3bc --stage f00d123")


def test_a_record_written_before_revs_reads_as_one_revision(tmp_path, monkeypatch):
    """The record as the first --stage wrote it (one ``rev`` for every stage) keeps that
    revision for each when a later stage is added."""
    _shipped(tmp_path, monkeypatch, ("imdb-minilm-hsto", "imdb-minilm-mcdropout"), HISTORY)
    out = tmp_path / "record.json"
    old = {"rev": "a088136", "read_at": "x", "checkpoints": dict.fromkeys(BEFORE, {})}
    old["stage"] = {"rev": "d1af3bc", "read_at": "y", "checkpoints": {"imdb-minilm-hsto": {}}}
    out.write_text(json.dumps(old))
    stage = rl.record_stage("f00d123", out)
    assert stage["revs"] == {"imdb-minilm-hsto": "d1af3bc", "imdb-minilm-mcdropout": "f00d123"}


def test_a_checkpoint_without_a_figure_at_512_gets_no_stage(tmp_path, monkeypatch):
    """imdb-minilm-ensemble was first shipped after the 512 revision and later replaced by a
    model continued from a new first stage: what the stage revision holds under its name is the
    old model, so it must not be written in as the new one's first stage."""
    _shipped(tmp_path, monkeypatch, ("imdb-minilm-hsto", "imdb-minilm-mcdropout"), HISTORY)
    out = tmp_path / "record.json"
    rl.record("a088136", out)
    doc = json.loads(out.read_text())
    del doc["checkpoints"]["imdb-minilm-mcdropout"]  # as if absent at a088136
    out.write_text(json.dumps(doc))
    stage = rl.record_stage("d1af3bc", out)
    assert list(stage["checkpoints"]) == ["imdb-minilm-hsto"]
    rows = [("imdb-minilm-mcdropout", _metrics(0.907, 512))]
    assert not any(line.startswith("| imdb-minilm-mcdropout |") for line in rl.markdown(rows, out))


def test_without_a_record_there_is_no_table(tmp_path):
    assert rl.markdown([("x", _metrics(0.9, 256))], tmp_path / "none.json") == []


def test_the_command_needs_a_revision(capsys):
    with pytest.raises(SystemExit) as exc:
        rl.main([])
    assert exc.value.code == 2
    assert "give --before REV, --stage REV or both" in capsys.readouterr().err
