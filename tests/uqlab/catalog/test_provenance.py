"""uqlab.catalog.provenance: records name folders relative to the checkout, never the build
machine's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uqlab.catalog.provenance import is_absolute, main, portable, portable_training


@pytest.fixture()
def repo(tmp_path) -> Path:
    """A checkout with a data folder beside it, as ../shared/data sits beside main."""
    (tmp_path / "main" / "assets").mkdir(parents=True)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    return tmp_path / "main"


def test_paths_in_and_beside_the_checkout_become_relative(repo):
    assert portable(repo / "assets" / "checkpoints" / "x", repo) == "assets/checkpoints/x"
    assert portable(repo.parent / "shared" / "data", repo) == "../shared/data"
    assert portable(repo, repo) == "."


def test_a_folder_elsewhere_keeps_only_its_name_and_hub_stays(repo, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("far") / "runs" / "cola-x"
    assert not elsewhere.resolve().is_relative_to(repo.parent.resolve())
    assert portable(elsewhere, repo) == "cola-x"
    assert portable("hub", repo) == "hub"


def test_a_relative_path_is_read_against_the_working_directory(repo, monkeypatch):
    monkeypatch.chdir(repo / "assets")
    assert portable("../../shared/data", repo) == "../shared/data"


@pytest.mark.parametrize(
    ("value", "absolute"),
    [("/work/shared/data", True), ("C:\\data", True), ("~/data", True), ("../shared/data", False)],
)
def test_absolute_paths_are_told_on_every_system(value, absolute):
    assert is_absolute(value) is absolute


def test_the_training_record_keeps_everything_but_its_paths(repo):
    training = {
        "data_source": str(repo.parent / "shared" / "data"),
        "seed": 3,
        "config": {"out": str(repo / "assets" / "x"), "data_dir": None, "lr": 0.1},
    }
    fixed = portable_training(training, repo)
    assert fixed == {
        "data_source": "../shared/data",
        "seed": 3,
        "config": {"out": "assets/x", "data_dir": None, "lr": 0.1},
    }
    assert training["config"]["out"] == str(repo / "assets" / "x")  # the input is not changed


def test_the_command_rewrites_only_the_path_fields_and_a_second_run_changes_nothing(
    tmp_path, capsys
):
    root = tmp_path / "checkpoints"
    card = root / "cola-x"
    card.mkdir(parents=True)
    training = {"data_source": "/somewhere/else/data", "config": {"out": "/far/runs/cola-x"}}
    config = {"model": {"family": "trans"}, "training": training, "note": "é"}
    (card / "config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False))
    metrics = {"data_source": "/somewhere/else/data", "id": {"accuracy_mean": 0.1 + 0.2}}
    (card / "metrics.json").write_text(json.dumps(metrics, separators=(",", ":")))
    assert main([str(root)]) == 0
    assert "2 file(s) rewritten" in capsys.readouterr().out
    new_config = json.loads((card / "config.json").read_text())
    assert new_config["training"]["data_source"] == "data"
    # a shipped card's out is the folder it ships in: where a retrain writes
    assert new_config["training"]["config"]["out"] == "cola-x"
    assert new_config["note"] == "é" and new_config["model"] == config["model"]
    new_metrics = json.loads((card / "metrics.json").read_text())
    assert new_metrics == {**metrics, "data_source": "data"}  # floats as they were
    before = {f.name: f.read_bytes() for f in card.iterdir()}
    assert main([str(root)]) == 0
    assert "0 file(s) rewritten" in capsys.readouterr().out
    assert {f.name: f.read_bytes() for f in card.iterdir()} == before


def test_a_missing_folder_is_refused_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main([str(tmp_path / "nowhere")])
    assert "is not a folder of checkpoints" in capsys.readouterr().err


def test_a_stored_records_relative_paths_stay_from_any_working_directory(repo, monkeypatch):
    """uqlab.laplace copies its source's record: "../shared/data" is the checkout's already and
    must not be read again against wherever the command runs."""
    monkeypatch.chdir(repo / "assets")
    stored = {"data_source": "../shared/data", "config": {"out": "assets/checkpoints/x"}}
    assert portable_training(stored, repo) == stored
    fresh = portable_training({"config": {"out": "x"}}, repo, fresh=True)
    assert fresh["config"]["out"] == "assets/x"  # a run's own path: read where it ran


def test_a_hostile_record_is_refused_in_one_line_and_nothing_is_written(tmp_path, capsys):
    root = tmp_path / "checkpoints"
    good, bad = root / "a-good", root / "b-bad"
    for folder in (good, bad):
        folder.mkdir(parents=True)
    (good / "metrics.json").write_text(json.dumps({"data_source": "/far/data"}))
    (bad / "config.json").write_text("[" * 200_000 + "]" * 200_000)  # nested 200,000 deep
    before = (good / "metrics.json").read_bytes()
    assert main([str(root)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and len(err.splitlines()) == 1 and "Traceback" not in err
    assert (good / "metrics.json").read_bytes() == before  # read all first, then write
    assert sorted(p.name for p in good.iterdir()) == ["metrics.json"]  # no temp file left
