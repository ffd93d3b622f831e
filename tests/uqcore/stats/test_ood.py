"""OOD scores and their detection quality (uqcore.stats.ood) against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from uqcore import stats
from uqcore.exceptions import InputError
from uqcore.stats import fit_mahalanobis, logit_scores


def test_ood_scores_values_and_unknown():
    probs = np.array([[[0.9, 0.1], [0.5, 0.5]], [[0.7, 0.3], [0.5, 0.5]]])  # [2, 2, 2]
    assert stats.ood_scores(probs, "max_prob") == pytest.approx([0.2, 0.5])
    assert stats.ood_scores(probs, "entropy") == pytest.approx(stats.predictive_entropy(probs))
    assert stats.ood_scores(probs, "variance") == pytest.approx([0.01, 0.0])
    mi = stats.ood_scores(probs, "mutual_information")
    assert mi == pytest.approx(stats.mutual_information(probs))
    with pytest.raises(ValueError, match="max_prob, entropy, mutual_information, variance"):
        stats.ood_scores(probs, "energy")


def test_ood_detection_perfect_and_swapped():
    id_s, ood_s = np.array([0.1, 0.2, 0.3]), np.array([0.7, 0.8, 0.9, 1.0])
    r = stats.ood_detection(id_s, ood_s)
    assert r.auroc == 1.0 and r.aupr == pytest.approx(1.0) and r.fpr_at_95_tpr == 0.0
    assert r.roc_fpr.shape == r.roc_tpr.shape and r.roc_tpr[-1] == 1.0
    s = stats.ood_detection(ood_s, id_s)
    assert s.auroc == 0.0 and s.fpr_at_95_tpr == 1.0


def test_ood_detection_partial_overlap():
    # ID scores 0..19, OOD scores 10..29: FPR at the threshold where TPR first reaches 0.95
    id_s, ood_s = np.arange(20.0), np.arange(10.0, 30.0)
    r = stats.ood_detection(id_s, ood_s)
    # TPR >= 0.95 needs threshold <= 11 (19 of 20 OOD); ID scores >= 11 are 11..19 = 9 of 20
    assert r.fpr_at_95_tpr == pytest.approx(9 / 20)
    assert 0.5 < r.auroc < 1.0


def test_energy_and_max_logit_by_hand():
    """Two samples of logits per example, averaged: [1, 3] and [0, 0]."""
    z = np.array([[[0.0, 2.0], [1.0, -1.0]], [[2.0, 4.0], [-1.0, 1.0]]])  # [T=2, N=2, C=2]
    assert np.allclose(logit_scores(z, "max_logit"), [-3.0, 0.0])
    assert np.allclose(logit_scores(z, "energy"), [-np.log(np.e + np.e**3), -np.log(2.0)])
    with pytest.raises(InputError, match="unknown logit score"):
        logit_scores(z, "mahalanobis")


def test_mahalanobis_by_hand():
    """Two classes at (0, 0) and (4, 0), features spread with variance 1 on x and 4 on y around
    them: the distance of (0, 2) is 2^2 / 4 = 1 (to class 0), of (2, 0) is 2^2 / 1 = 4."""
    offsets = np.array([[1.0, 2.0], [-1.0, -2.0], [1.0, -2.0], [-1.0, 2.0]])  # var 1 and 4
    x = np.concatenate([offsets, offsets + [4.0, 0.0]])
    y = np.array([0] * 4 + [1] * 4)
    m = fit_mahalanobis(x, y)
    assert np.allclose(m.means, [[0, 0], [4, 0]])
    assert np.allclose(m.scores(np.array([[0.0, 2.0], [2.0, 0.0], [4.0, 0.0]])), [1.0, 4.0, 0.0])


def test_invalid_scores_raise():
    with pytest.raises(ValueError, match="1-D"):
        stats.ood_detection(np.zeros((2, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        stats.ood_detection(np.array([0.1, np.inf]), np.zeros(3))
    with pytest.raises(ValueError, match="non-empty"):
        stats.ood_detection(np.zeros(0), np.zeros(3))
