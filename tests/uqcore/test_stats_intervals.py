"""Accuracy, macro-F1 of the mean prediction and their bootstrap intervals (uqcore.stats)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score

from uqcore import stats as S
from uqcore.errors import InputError


def _data(seed: int, n: int = 200, c: int = 3):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(c), size=n), rng.integers(0, c, n)


@pytest.mark.parametrize("seed", range(12))
def test_macro_f1_equals_sklearn_on_any_number_of_classes(seed):
    rng = np.random.default_rng(seed)
    c, n = int(rng.integers(2, 7)), int(rng.integers(1, 60))
    p, y = _data(seed, n, c)
    want = f1_score(y, p.argmax(1), labels=list(range(c)), average="macro", zero_division=0)
    assert S.macro_f1(p, y) == pytest.approx(want, abs=1e-12)


def test_accuracy_is_the_share_of_rows_whose_argmax_is_the_label():
    p = np.array([[0.9, 0.1], [0.4, 0.6], [0.7, 0.3], [0.2, 0.8]])
    assert S.accuracy(p, np.array([0, 1, 1, 0])) == 0.5


@pytest.mark.parametrize("metric", [S.accuracy, S.ece, S.macro_f1])
def test_the_interval_holds_the_value_and_is_reproducible(metric):
    p, y = _data(1)
    got = S.bootstrap_interval(metric, p, y, seed=3)
    assert got.value == pytest.approx(metric(p, y))
    assert got.low <= got.value <= got.high
    assert got.low < got.high  # 200 random rows: a real spread
    assert got == S.bootstrap_interval(metric, p, y, seed=3)
    assert got != S.bootstrap_interval(metric, p, y, seed=4)


def test_the_interval_narrows_with_more_rows():
    small = S.bootstrap_interval(S.accuracy, *_data(0, 100, 2))
    large = S.bootstrap_interval(S.accuracy, *_data(0, 3000, 2))
    assert large.high - large.low < (small.high - small.low) / 3


def test_the_interval_matches_a_hand_written_percentile_bootstrap():
    p, y = _data(2, 150, 2)
    got = S.bootstrap_interval(S.accuracy, p, y, resamples=4000, seed=0)
    rng = np.random.default_rng(123)
    hits = (p.argmax(1) == y).astype(float)
    means = [hits[rng.integers(0, len(y), len(y))].mean() for _ in range(4000)]
    lo, hi = np.percentile(means, [2.5, 97.5])
    assert got.low == pytest.approx(lo, abs=0.015) and got.high == pytest.approx(hi, abs=0.015)


def test_no_spread_gives_a_point_interval():
    p = np.tile([[0.9, 0.1]], (10, 1))
    got = S.bootstrap_interval(S.accuracy, p, np.zeros(10, int))
    assert (got.value, got.low, got.high) == (1.0, 1.0, 1.0)
    one = S.bootstrap_interval(S.ece, p[:1], np.zeros(1, int))
    assert one.low == one.value == one.high


@pytest.mark.parametrize("kwargs", [{"level": 1.0}, {"level": 0}, {"resamples": 1}])
def test_bad_settings_are_refused_with_a_message(kwargs):
    p, y = _data(0, 20, 2)
    with pytest.raises(InputError):
        S.bootstrap_interval(S.accuracy, p, y, **kwargs)
