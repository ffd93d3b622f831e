"""Split conformal sets and their coverage (uqcore.stats.conformal), by hand and held out."""

from __future__ import annotations

import numpy as np
import pytest

from uqcore.exceptions import InputError
from uqcore.stats import conformal_calibrate, conformal_summary, resampled_coverage


def test_conformal_sets_by_hand():
    """LAC on 4 calibration examples, true-label scores 0.1, 0.2, 0.3, 0.4: at coverage 0.6 the
    level is ceil(5 * 0.6) / 4 = 0.75, the 'higher' quantile 0.3."""
    p = np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.4, 0.6]])
    y = np.array([0, 1, 0, 1])  # scores 1 - p_y: 0.1, 0.2, 0.3, 0.4
    cal = conformal_calibrate(p, y, coverage=0.6, method="lac")
    assert cal.threshold == pytest.approx(0.3)
    sets = cal.sets(np.array([[0.75, 0.25], [0.5, 0.5]]))
    assert sets.tolist() == [[True, False], [False, False]]
    assert conformal_summary(cal.sets(p), y) == {
        "coverage": 0.75,
        "mean_size": 0.75,
        "ambiguous": 0.0,
    }
    aps = conformal_calibrate(p, y, coverage=0.6, method="aps")  # scores 0.9, 0.8, 0.7, 0.6
    assert aps.threshold == pytest.approx(0.8)
    with pytest.raises(InputError, match="strictly between 0 and 1"):
        conformal_calibrate(p, y, coverage=1.0)


@pytest.mark.parametrize("method", ["lac", "aps"])
def test_conformal_coverage_holds_on_held_out_data(method):
    """Calibrated on one half of a noisy classifier's outputs, the other half is covered within
    2 points of the 90 % target."""
    rng = np.random.default_rng(1)
    z = rng.normal(0, 2, (8000, 3))
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    y = np.array([rng.choice(3, p=row) for row in p])
    cal = conformal_calibrate(p[:4000], y[:4000], 0.9, method)
    got = conformal_summary(cal.sets(p[4000:]), y[4000:])
    assert abs(got["coverage"] - 0.9) <= 0.02 and 1.0 <= got["mean_size"] <= 3.0


def test_resampled_coverage_by_hand():
    """Pool {0.1, 0.2, 0.3}, two to calibrate, one to evaluate, coverage 0.5: the threshold is
    the larger calibration score (ceil(3 * 0.5) = 2nd smallest), so the held-out score is
    covered unless it is 0.3: the mean over splits is 2/3 and a split gives 0 or 1."""
    r = resampled_coverage([0.2, 0.1], [0.3], coverage=0.5, splits=3000, seed=0)
    assert r.mean == pytest.approx(2 / 3, abs=0.03)
    assert (r.low, r.high, r.n_cal, r.n_eval, r.splits) == (0.0, 1.0, 2, 1, 3000)
    assert resampled_coverage([0.2, 0.1], [0.3], 0.5, 50, seed=4) == resampled_coverage(
        [0.2, 0.1], [0.3], 0.5, 50, seed=4
    )
    with pytest.raises(InputError, match="strictly between 0 and 1"):
        resampled_coverage([0.1], [0.2], coverage=0.0)
    with pytest.raises(InputError, match="calibration and evaluation scores"):
        resampled_coverage([], [0.2])


def test_resampled_coverage_meets_the_guarantee_on_exchangeable_scores():
    """Continuous exchangeable scores, 300 to calibrate and 600 to evaluate: the mean coverage
    over splits lies in [0.9, 0.9 + 1/301] up to the Monte Carlo error of 2,000 splits, while
    single splits scatter (standard deviation about 2 points: the 5-95 % range is some 7)."""
    scores = np.random.default_rng(3).random(900)
    r = resampled_coverage(scores[:300], scores[300:], 0.9, splits=2000, seed=1)
    assert 0.9 - 0.002 <= r.mean <= 0.9 + 1 / 301 + 0.002
    assert r.low < 0.88 < 0.92 < r.high and r.high - r.low < 0.1


def test_aps_sets_do_not_depend_on_float_rounding_of_the_total_mass():
    """Two classes, a third of dev misclassified: the 90 % threshold is the whole mass, and
    every set holds both classes, however float32 rounds each row's sum (1e-7 either side)."""
    rng = np.random.default_rng(0)
    p1 = rng.uniform(0.55, 0.95, size=300)
    p = np.stack([p1, 1 - p1], axis=1).astype(np.float32)  # [N, 2]
    y = (rng.random(300) < 0.33).astype(int)  # a third of the labels the less likely class
    jitter = (1 + rng.normal(0, 1e-7, size=(300, 2))).astype(np.float32)
    got = []
    for probs in (p, p * jitter):
        sets = conformal_calibrate(probs, y, coverage=0.9, method="aps").sets(probs)
        got.append(sets)
    assert got[0].all() and (got[0] == got[1]).all()
