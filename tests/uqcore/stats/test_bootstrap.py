"""Bootstrap intervals of a metric of the mean prediction (uqcore.stats.bootstrap)."""

from __future__ import annotations

import numpy as np
import pytest

from uqcore import stats
from uqcore.exceptions import InputError


def _data(seed: int, n: int = 200, c: int = 3):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(c), size=n), rng.integers(0, c, n)


@pytest.mark.parametrize("metric", [stats.accuracy, stats.ece, stats.macro_f1])
def test_the_interval_holds_the_value_and_is_reproducible(metric):
    p, y = _data(1)
    got = stats.bootstrap_interval(metric, p, y, seed=3)
    assert got.value == pytest.approx(metric(p, y))
    assert got.low <= got.value <= got.high
    assert got.low < got.high  # 200 random rows: a real spread
    assert got == stats.bootstrap_interval(metric, p, y, seed=3)
    assert got != stats.bootstrap_interval(metric, p, y, seed=4)


def test_the_interval_narrows_with_more_rows():
    small = stats.bootstrap_interval(stats.accuracy, *_data(0, 100, 2))
    large = stats.bootstrap_interval(stats.accuracy, *_data(0, 3000, 2))
    assert large.high - large.low < (small.high - small.low) / 3


def test_the_interval_matches_a_hand_written_percentile_bootstrap():
    p, y = _data(2, 150, 2)
    got = stats.bootstrap_interval(stats.accuracy, p, y, resamples=4000, seed=0)
    rng = np.random.default_rng(123)
    hits = (p.argmax(1) == y).astype(float)
    means = [hits[rng.integers(0, len(y), len(y))].mean() for _ in range(4000)]
    lo, hi = np.percentile(means, [2.5, 97.5])
    assert got.low == pytest.approx(lo, abs=0.015) and got.high == pytest.approx(hi, abs=0.015)


def test_no_spread_gives_a_point_interval():
    p = np.tile([[0.9, 0.1]], (10, 1))
    got = stats.bootstrap_interval(stats.accuracy, p, np.zeros(10, int))
    assert (got.value, got.low, got.high) == (1.0, 1.0, 1.0)
    one = stats.bootstrap_interval(stats.ece, p[:1], np.zeros(1, int))
    assert one.low == one.value == one.high


@pytest.mark.parametrize("kwargs", [{"level": 1.0}, {"level": 0}, {"resamples": 1}])
def test_bad_settings_are_refused_with_a_message(kwargs):
    p, y = _data(0, 20, 2)
    with pytest.raises(InputError):
        stats.bootstrap_interval(stats.accuracy, p, y, **kwargs)


def _two_models(seed: int, n: int = 300):
    """Model B is A sharpened toward the gold label on some rows: better on every metric."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    pa = rng.dirichlet(np.ones(2), size=n)
    pb = pa.copy()
    fix = rng.random(n) < 0.4
    pb[fix, y[fix]] = 0.95
    pb[fix, 1 - y[fix]] = 0.05
    return pa, pb, y


@pytest.mark.parametrize("metric", [stats.accuracy, stats.ece, stats.nll, stats.brier])
def test_the_paired_interval_equals_a_plain_paired_bootstrap(metric):
    """A plain loop: resample the rows, score both models on them, take B - A, percentiles."""
    pa, pb, y = _two_models(0)
    got = stats.paired_bootstrap(metric, pa, pb, y, resamples=500, seed=7)
    rng = np.random.default_rng(7)
    diffs = []
    for _ in range(500):
        idx = rng.integers(0, len(y), len(y))
        diffs.append(metric(pb[idx], y[idx]) - metric(pa[idx], y[idx]))
    want = np.percentile(diffs, [2.5, 97.5])
    assert (got.low, got.high) == pytest.approx(tuple(want), rel=1e-12, abs=1e-15)
    assert got.a == metric(pa, y) and got.b == metric(pb, y)
    assert got.difference == got.b - got.a
    assert got.low <= got.difference <= got.high


def test_pairing_narrows_the_interval_and_agrees_with_scipy():
    """Paired: the rows' shared difficulty cancels, so the interval of B - A is narrower than
    the two unpaired intervals combined; scipy's paired percentile bootstrap agrees within its
    Monte Carlo error."""
    from scipy.stats import bootstrap

    pa, pb, y = _two_models(1, 400)
    got = stats.paired_bootstrap(stats.accuracy, pa, pb, y, resamples=4000, seed=0)
    assert got.low > 0  # B is better, and the interval says so
    ia = stats.bootstrap_interval(stats.accuracy, pa, y)
    ib = stats.bootstrap_interval(stats.accuracy, pb, y)
    assert got.high - got.low < (ia.high - ia.low) + (ib.high - ib.low)
    ref = bootstrap(
        (np.arange(len(y)),),
        lambda r: stats.accuracy(pb[r], y[r]) - stats.accuracy(pa[r], y[r]),
        n_resamples=4000,
        method="percentile",
        vectorized=False,
        rng=np.random.default_rng(1),
    ).confidence_interval
    assert got.low == pytest.approx(ref.low, abs=0.01)
    assert got.high == pytest.approx(ref.high, abs=0.01)


def test_the_same_model_twice_differs_by_nothing():
    pa, _, y = _two_models(2)
    got = stats.paired_bootstrap(stats.ece, pa, pa, y, resamples=50)
    assert (got.difference, got.low, got.high) == (0.0, 0.0, 0.0)


def test_a_paired_bootstrap_refuses_rows_that_are_not_the_same():
    pa, pb, y = _two_models(3)
    with pytest.raises(InputError, match="same rows"):
        stats.paired_bootstrap(stats.accuracy, pa, pb[:-1], y)
    with pytest.raises(InputError, match="resamples"):
        stats.paired_bootstrap(stats.accuracy, pa, pb, y, resamples=1)
