"""metrics.json's conformal calibration scores in their compact form
(uqlab.catalog.conformal_scores): the same numbers bit for bit, the old list form still read,
anything else refused, every shipped file in the compact form."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from uqlab.catalog import conformal_scores as store


def test_the_compact_form_gives_the_5_decimal_scores_back_bit_for_bit():
    rng = np.random.default_rng(0)
    scores = np.concatenate([rng.beta(0.3, 4.0, 2500), [0.0, 1.0, 0.5, 0.5]])
    stored = store.encode(scores)
    assert set(stored) == {store.KEY} and all(type(s) is int and s >= 0 for s in stored[store.KEY])
    assert store.decode(stored) == sorted(round(float(x), 5) for x in scores)  # ==, not approx
    listed = [round(float(x), 5) for x in scores]
    assert len(json.dumps(stored)) < len(json.dumps({"lac": listed})) / 2


def test_the_list_form_is_still_read_and_recast_to_the_same_numbers():
    metrics = {"conformal_calibration": {"on": "dev", "scores": {"lac": [0.3, 0.00012, 0.9]}}}
    before = store.decode(metrics["conformal_calibration"]["scores"])
    assert before == [0.00012, 0.3, 0.9]
    assert store.recast(metrics) is True
    scores = metrics["conformal_calibration"]["scores"]
    assert set(scores) == {store.KEY} and store.decode(scores) == before
    assert store.recast(metrics) is False  # already compact
    assert metrics["conformal_calibration"]["on"] == "dev"


@pytest.mark.parametrize(
    "stored",
    [
        None,
        [],
        "lac",
        {},
        {store.KEY: []},
        {store.KEY: [3, -1, 2]},  # a step down
        {store.KEY: [3, True, 2]},
        {store.KEY: [3, 1.5]},
        {store.KEY: "1,2,3"},
        {store.KEY: [store.SCALE, 1]},  # past 1
        {store.KEY: [0] * (store.MAX_SCORES + 1)},
        {"lac": []},
        {"lac": [0.1, float("nan")]},
        {"lac": [0.1, 1.5]},
        {"lac": [0.1, "0.2"]},
        {"lac": [0.1, None]},
        {"lac": {"a": 1}},
    ],
)
def test_anything_else_is_no_scores(stored):
    """A visitor's metrics.json is untrusted: no exception, no scores."""
    assert store.decode(stored) is None


def test_every_shipped_file_keeps_its_scores_compact_and_readable():
    from uqcore.registry import list_checkpoints
    from uqlab.catalog.paths import checkpoint_dir

    infos = [i for i in list_checkpoints(checkpoint_dir()) if not i.error]
    assert len(infos) >= 40
    for info in infos:
        scores = info.metrics["conformal_calibration"]["scores"]
        assert set(scores) == {store.KEY}, info.name
        lac = store.decode(scores)
        assert lac is not None and len(lac) == info.metrics["temperature"]["dev_size"], info.name


def test_the_command_rewrites_only_the_scores(tmp_path, capsys):
    src = tmp_path / "cks" / "one"
    src.mkdir(parents=True)
    listed = [round(x, 5) for x in np.linspace(0, 1, 300).tolist()]
    metrics = {"id": {"accuracy_mean": 0.9}, "conformal_calibration": {"scores": {"lac": listed}}}
    (src / "metrics.json").write_text(json.dumps(metrics))
    shutil.copytree(src, tmp_path / "cks" / "two")
    (tmp_path / "cks" / "two" / "metrics.json").write_text(json.dumps({"id": {}}))  # no scores
    assert store.main(["--all", "--root", str(tmp_path / "cks")]) == 0
    got = json.loads((src / "metrics.json").read_text())
    assert (
        got["id"] == metrics["id"]
        and store.decode(got["conformal_calibration"]["scores"]) == listed
    )
    assert json.loads((tmp_path / "cks" / "two" / "metrics.json").read_text()) == {"id": {}}
    assert "one:" in capsys.readouterr().out


def test_a_bad_file_stops_the_command_before_anything_is_written(tmp_path, capsys):
    good, bad = tmp_path / "a", tmp_path / "b"
    good.mkdir(), bad.mkdir()
    body = json.dumps({"conformal_calibration": {"scores": {"lac": [0.1, 0.2]}}})
    (good / "metrics.json").write_text(body)
    (bad / "metrics.json").write_text('{"conformal_calibration": {"scores": {"lac": ["x"]}}}')
    assert store.main(["--all", "--root", str(tmp_path)]) == 2
    assert (good / "metrics.json").read_text() == body  # untouched
    assert "nothing written" in capsys.readouterr().err
