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
