"""NLL, Brier, ECE, the reliability diagram, risk-coverage and temperature scaling
(uqcore.stats.calibration) against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.uqcore.stats import random_probs
from uqcore import stats
from uqcore.exceptions import InputError
from uqcore.stats import adaptive_ece, fit_temperature, nll, risk_coverage, scaled_probs


def test_nll_and_brier_hand_values():
    mp = np.array([[0.7, 0.3], [0.4, 0.6]])  # [2, 2]
    y = np.array([0, 0])
    assert stats.nll(mp, y) == pytest.approx(-(math.log(0.7) + math.log(0.4)) / 2)
    assert stats.brier(mp, y) == pytest.approx(((0.09 + 0.09) + (0.36 + 0.36)) / 2)


def test_ece_hand_computation_and_reliability_consistency():
    mp = np.array([[0.95, 0.05], [0.95, 0.05], [0.55, 0.45], [0.6, 0.4], [1.0, 0.0]])  # [5, 2]
    y = np.array([0, 1, 0, 1, 0])
    # 10 bins: 0.95 and 1.0 -> bin 9 (conf 0.9667, acc 2/3); 0.55 -> bin 5 (acc 1); 0.6 -> bin 6
    expected = 3 / 5 * abs(2 / 3 - (0.95 + 0.95 + 1.0) / 3) + 1 / 5 * 0.45 + 1 / 5 * 0.6
    assert stats.ece(mp, y, n_bins=10) == pytest.approx(expected)
    rd = stats.reliability_diagram(mp, y, n_bins=10)
    assert rd.count.tolist() == [0, 0, 0, 0, 0, 1, 1, 0, 0, 3]
    assert rd.bin_lower[0] == 0.0 and rd.bin_upper[-1] == 1.0
    assert np.isnan(rd.confidence[0]) and np.isnan(rd.accuracy[0])
    m = rd.count > 0
    from_rd = np.sum(rd.count[m] / rd.count.sum() * np.abs(rd.accuracy[m] - rd.confidence[m]))
    assert stats.ece(mp, y, n_bins=10) == pytest.approx(from_rd)


def test_ece_matches_reliability_on_random_data_and_perfect_is_zero():
    mp = random_probs(1, 200, 3, seed=3)[0]  # [200, 3]
    y = np.random.default_rng(1).integers(0, 3, size=200)
    rd = stats.reliability_diagram(mp, y)
    assert len(rd.count) == 15 and rd.count.sum() == 200
    m = rd.count > 0
    from_rd = np.sum(rd.count[m] / 200 * np.abs(rd.accuracy[m] - rd.confidence[m]))
    assert stats.ece(mp, y) == pytest.approx(from_rd)
    onehot = np.eye(3)[y]  # [200, 3]: confidence 1.0 lands in the last bin, always right
    assert stats.ece(onehot, y) == 0.0
    assert stats.reliability_diagram(onehot, y).count[-1] == 200


def test_adaptive_ece_by_hand():
    """4 examples, 2 equal-mass bins: confidences 0.6, 0.7 | 0.8, 0.9 (sorted), hits 1, 0 | 1, 1.
    Bin 1: |0.5 - 0.65| = 0.15; bin 2: |1.0 - 0.85| = 0.15; aECE = (2 * 0.15 + 2 * 0.15) / 4."""
    p = np.array([[0.3, 0.7], [0.9, 0.1], [0.4, 0.6], [0.2, 0.8]])
    y = np.array([0, 0, 1, 1])  # hits: 0.7 wrong, 0.9 right, 0.6 right, 0.8 right
    assert adaptive_ece(p, y, n_bins=2) == pytest.approx(0.15)
    assert adaptive_ece(p, y, n_bins=4) == pytest.approx((0.4 + 0.7 + 0.2 + 0.1) / 4)


def test_risk_coverage_and_aurc_by_hand():
    """Confidences 0.9 (right), 0.8 (wrong), 0.7 (right), 0.6 (wrong): risks after keeping
    1..4 = 0, 1/2, 1/3, 2/4; AURC = their mean; accuracy at 50 % coverage = 1 - 1/2."""
    p = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7], [0.4, 0.6]])
    y = np.array([1, 1, 1, 0])
    rc = risk_coverage(p, y)
    assert np.allclose(rc.risk, [0, 1 / 2, 1 / 3, 2 / 4])
    assert np.allclose(rc.coverage, [0.25, 0.5, 0.75, 1.0])
    assert rc.aurc == pytest.approx((0 + 1 / 2 + 1 / 3 + 1 / 2) / 4)
    assert rc.accuracy_at(0.5) == pytest.approx(0.5) and rc.accuracy_at(0.8) == pytest.approx(0.5)
    with pytest.raises(InputError, match="coverage"):
        rc.accuracy_at(0.0)


def test_temperature_scaling_recovers_a_known_temperature():
    """Labels drawn from softmax(z / 2): the fitted temperature on overconfident logits z is 2,
    and scaling lowers the NLL."""
    rng = np.random.default_rng(0)
    z = rng.normal(0, 4, (1, 20_000, 3))  # [T=1, N, C]
    p_true = scaled_probs(z, 2.0)[0]  # [N, C]
    y = np.array([rng.choice(3, p=row) for row in p_true])
    t = fit_temperature(z, y)
    assert t == pytest.approx(2.0, rel=0.05)
    assert nll(scaled_probs(z, t).mean(0), y) < nll(scaled_probs(z, 1.0).mean(0), y)


def test_bins_must_be_a_positive_integer():
    with pytest.raises(ValueError, match="positive integer"):
        stats.ece(np.array([[0.9, 0.1], [0.2, 0.8]]), np.array([0, 1]), n_bins=0)
