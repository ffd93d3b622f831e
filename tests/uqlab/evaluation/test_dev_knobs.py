"""An inference knob measured on dev for spread and for finding errors (dev_knobs)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from sklearn.metrics import log_loss, roc_auc_score

from uqcore.exceptions import ConfigError
from uqcore.stats import mutual_information
from uqlab.evaluation import dev_knobs


def _samples(n: int = 200, T: int = 8, seed: int = 0):
    """Samples whose spread is wide on the rows the mean gets wrong: MI finds the errors."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)  # [N]
    wrong = rng.random(n) < 0.25  # [N]
    centre = np.where(wrong, 0.4, 0.85)  # p(gold) of the mean
    width = np.where(wrong, 0.3, 0.01)
    p_gold = np.clip(centre + width * rng.uniform(-1, 1, (T, n)), 0.01, 0.99)  # [T, N]
    probs = np.empty((T, n, 2))
    probs[:, np.arange(n), y] = p_gold
    probs[:, np.arange(n), 1 - y] = 1 - p_gold
    return probs, y


def test_a_rows_figures_are_what_their_definitions_give():
    probs, y = _samples()
    row = dev_knobs.measure(probs, y, "accuracy", 4.0)
    mean = probs.mean(0)
    picked = mean.argmax(-1)
    assert row.value == 4.0
    assert row.dev == pytest.approx((picked == y).mean())
    assert row.nll == pytest.approx(log_loss(y, mean))
    spread = probs[:, np.arange(len(y)), picked].std(0)
    assert row.visible == pytest.approx((spread >= 0.05).mean())
    votes = probs.argmax(-1)
    assert row.split == pytest.approx((votes != votes[0]).any(0).mean())
    wrong = picked != y
    mi = np.asarray(mutual_information(probs))
    assert row.auroc_mi == pytest.approx(roc_auc_score(wrong, mi))
    assert row.auroc_max_prob == pytest.approx(roc_auc_score(wrong, 1 - mean.max(-1)))
    assert row.difference == pytest.approx(row.auroc_mi - row.auroc_max_prob)
    assert row.low <= row.difference <= row.high
    assert row.auroc_mi > 0.9 and 0 < row.visible < 1  # the wide rows are the wrong ones


def test_mcc_is_the_metric_of_a_cola_like_task_and_no_error_means_no_ranking():
    probs, y = _samples()
    probs[:, np.arange(len(y)), y] = 0.9  # every row right, no spread
    probs[:, np.arange(len(y)), 1 - y] = 0.1
    row = dev_knobs.measure(probs, y, "mcc", 1.0)
    assert row.dev == pytest.approx(1.0) and row.visible == 0.0 and row.split == 0.0
    assert math.isnan(row.auroc_mi) and math.isnan(row.difference)
    assert "n/a" in dev_knobs.table("x", "tau2", [row], len(y), 8)


def test_the_table_names_its_command_and_every_value():
    probs, y = _samples()
    rows = [dev_knobs.measure(probs, y, "accuracy", v) for v in (1.0, 8.0)]
    text = dev_knobs.table("cr-smollm2-hsto", "tau2", rows, 200, 8)
    assert "--ckpt cr-smollm2-hsto --knob tau2 --values 1,8 --rows 200 --T 8" in text
    body = [line for line in text.splitlines() if line.startswith("| ") and "dev" not in line]
    assert [line.split("|")[1].strip() for line in body] == ["1", "8"]


def test_a_knob_the_family_does_not_read_is_refused_before_sampling():
    with pytest.raises(ConfigError, match="does not read 'tau1'"):
        dev_knobs.sweep("imdb-trans", "tau1", [1.0], rows=4, T=2, seed=0)


def test_bad_values_get_a_message_not_a_traceback(capsys):
    with pytest.raises(SystemExit):
        dev_knobs.main(["--ckpt", "cola-hsto", "--knob", "tau2", "--values", "one,2"])
    assert "--values takes numbers" in capsys.readouterr().err
    assert dev_knobs.main(["--ckpt", "imdb-trans", "--knob", "tau2", "--values", "1"]) == 2
    assert "does not read 'tau2'" in capsys.readouterr().err


def test_a_real_checkpoint_on_its_dev_split(data_dir, monkeypatch, tmp_path, capsys):
    """cola-hsto at two tau2 values on 24 dev sentences: the rows and the JSON agree."""
    monkeypatch.setenv("UQ_DATA_DIR", str(data_dir))
    out = tmp_path / "knobs.json"
    argv = ["--ckpt", "cola-hsto", "--knob", "tau2", "--values", "1,40", "--rows", "24"]
    assert dev_knobs.main([*argv, "--T", "3", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert [r["value"] for r in doc["rows"]] == [1.0, 40.0] and doc["rows_read"] == 24
    assert all(-1 <= r["dev"] <= 1 and 0 <= r["visible"] <= 1 for r in doc["rows"])
    assert "| 40 |" in capsys.readouterr().out
