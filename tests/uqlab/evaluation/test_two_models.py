"""Two checkpoints on the same rows, with a verdict (uqlab.evaluation.two_models)."""

from __future__ import annotations

import numpy as np
import pytest

from uqcore import stats
from uqcore.inference.detection import paired_models_difference
from uqlab.evaluation.comparison import Scored
from uqlab.evaluation.two_models import ERRORS, rows, sentence, two_models


def _pair(seed: int = 0, n: int = 400, T: int = 6):
    """A: noisy samples; B: the same samples pulled toward the gold label on 40 % of rows."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    pa = rng.dirichlet(np.ones(2), size=(T, n))  # [T, N, 2]
    pb = pa.copy()
    fix = rng.random(n) < 0.4
    pb[:, fix, y[fix]] = 0.9 + 0.05 * rng.random((T, int(fix.sum())))
    pb[:, fix, 1 - y[fix]] = 1 - pb[:, fix, y[fix]]
    return Scored.of(pa), Scored.of(pb), y


def test_a_better_model_is_named_better_with_its_interval():
    a, b, y = _pair()
    block = two_models(a, b, y, ("weak", "strong"), resamples=300)
    m = block["metrics"]
    assert m["accuracy"]["better"] == "b" and m["accuracy"]["interval"][0] > 0
    assert m["NLL"]["better"] == "b" and m["NLL"]["interval"][1] < 0  # lower is better
    assert m["Brier"]["better"] == "b"
    said = sentence(block)
    assert said.startswith("strong is better on accuracy: +")
    assert "B − A = strong − weak" in said and "400 rows" in said
    table = rows(block)
    assert [r["metric"] for r in table] == ["accuracy", "ECE", "NLL", "Brier", f"{ERRORS} (1−p)"]
    assert table[0]["better"] == "strong"


def test_the_intervals_are_the_paired_bootstraps():
    a, b, y = _pair(1)
    block = two_models(a, b, y, ("A", "B"), resamples=200, seed=5)
    got = stats.paired_bootstrap(stats.ece, a.mean, b.mean, y, resamples=200, seed=5)
    assert block["metrics"]["ECE"]["interval"] == [got.low, got.high]
    assert block["metrics"]["ECE"]["difference"] == got.b - got.a
    d = paired_models_difference(
        b.wrong(y), b.scores["entropy"], a.wrong(y), a.scores["entropy"], resamples=200, seed=5
    )
    errors = two_models(a, b, y, ("A", "B"), score="entropy", resamples=200, seed=5)
    assert errors["metrics"][ERRORS]["interval"] == [d.low, d.high]
    assert errors["metrics"][ERRORS]["difference"] == pytest.approx(d.score - d.baseline)
    assert "AUROC for errors (entropy)" in sentence(errors)


def test_swapping_the_two_flips_every_sign_and_the_same_model_ties():
    a, b, y = _pair(2)
    ab = two_models(a, b, y, ("A", "B"), resamples=200)
    ba = two_models(b, a, y, ("B", "A"), resamples=200)
    for key, entry in ab["metrics"].items():
        assert ba["metrics"][key]["difference"] == pytest.approx(-entry["difference"])
        named = {None: None, "a": "A", "b": "B"}
        assert (
            named[entry["better"]] == {None: None, "a": "B", "b": "A"}[ba["metrics"][key]["better"]]
        )
    same = two_models(a, a, y, ("A", "A again"), resamples=100)
    assert all(e["better"] is None for e in same["metrics"].values())
    assert sentence(same).startswith("no difference in accuracy, ECE, NLL, Brier and AUROC")


def test_no_error_auroc_for_a_model_that_is_always_right():
    a, b, y = _pair(3, n=60)
    right = Scored(np.eye(2)[y] * 0.98 + 0.01, {k: v.copy() for k, v in a.scores.items()})
    block = two_models(a, right, y, ("A", "perfect"), resamples=50)
    assert block["metrics"][ERRORS] is None
    assert "no AUROC for errors (1−p) (a model with no error" in sentence(block)
    assert rows(block)[-1]["B − A [95 %]"] == "—"


def test_bad_requests_are_refused():
    a, b, y = _pair(4, n=50)
    with pytest.raises(ValueError, match="score must be one of"):
        two_models(a, b, y, ("A", "B"), score="<b>")
    with pytest.raises(ValueError, match="same rows"):
        two_models(a, b.rows(np.arange(40)), y, ("A", "B"))
