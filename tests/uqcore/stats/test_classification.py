"""Accuracy, macro-F1 and MCC of sampled runs and of the mean prediction
(uqcore.stats.classification) against hand-computed values and scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score, matthews_corrcoef

from tests.uqcore.stats import random_probs
from uqcore import stats


def test_sampled_accuracy_constructed():
    y = np.array([0, 1, 0, 1])
    right, wrong = np.eye(2)[y], np.eye(2)[1 - y]  # [4, 2]
    run_a = right  # accuracy 1.0
    run_b = np.concatenate([right[:2], wrong[2:]])  # accuracy 0.5
    probs = np.stack([run_a, run_b])  # [2, 4, 2]
    mean, std = stats.sampled_accuracy(probs, y)
    assert mean == pytest.approx(0.75) and std == pytest.approx(0.25)


def test_sampled_mcc_matches_sklearn():
    p = random_probs(5, 40, 2, seed=4)
    y = np.random.default_rng(2).integers(0, 2, size=40)
    per_run = [matthews_corrcoef(y, p[t].argmax(-1)) for t in range(5)]
    mean, std = stats.sampled_mcc(p, y)
    assert mean == pytest.approx(np.mean(per_run)) and std == pytest.approx(np.std(per_run))
    perfect = np.stack([np.eye(2)[y]] * 3)  # [3, 40, 2]
    assert stats.sampled_mcc(perfect, y) == pytest.approx((1.0, 0.0))


def test_macro_f1_is_sklearns_per_sample_run():
    y = np.array([0, 1, 2, 2, 1, 0, 2])
    p = random_probs(3, 7, 3)
    mean, std = stats.sampled_macro_f1(p, y)
    per_run = [
        f1_score(y, p[t].argmax(-1), labels=[0, 1, 2], average="macro", zero_division=0)
        for t in range(3)
    ]
    assert mean == pytest.approx(np.mean(per_run)) and std == pytest.approx(np.std(per_run))
    perfect = np.eye(3)[y][None].repeat(2, 0)  # [T, N, C], always right
    assert stats.sampled_macro_f1(perfect, y) == (1.0, 0.0)


def _data(seed: int, n: int = 200, c: int = 3):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(c), size=n), rng.integers(0, c, n)


@pytest.mark.parametrize("seed", range(12))
def test_macro_f1_equals_sklearn_on_any_number_of_classes(seed):
    rng = np.random.default_rng(seed)
    c, n = int(rng.integers(2, 7)), int(rng.integers(1, 60))
    p, y = _data(seed, n, c)
    want = f1_score(y, p.argmax(1), labels=list(range(c)), average="macro", zero_division=0)
    assert stats.macro_f1(p, y) == pytest.approx(want, abs=1e-12)


def test_accuracy_is_the_share_of_rows_whose_argmax_is_the_label():
    p = np.array([[0.9, 0.1], [0.4, 0.6], [0.7, 0.3], [0.2, 0.8]])
    assert stats.accuracy(p, np.array([0, 1, 1, 0])) == 0.5
