"""The shared input checks (uqcore.stats.checks): bad probabilities, mean probabilities and labels
are refused with a message saying what to do."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from uqcore import stats
from uqcore.exceptions import InputError
from uqcore.stats import checks

GOOD = np.array([[[0.9, 0.1], [0.2, 0.8]]])  # [1, 2, 2]


@pytest.mark.parametrize(
    ("probs", "match"),
    [
        (np.array([[0.9, 0.1]]), r"3-D \[T, N, C\].*probs\[None\]"),
        (np.zeros((0, 2, 2)), "T >= 1"),
        (np.ones((1, 2, 1)), "C >= 2"),
        (np.array([[[np.nan, 1.0]]]), "NaN or inf"),
        (np.array([[[1.5, -0.5]]]), "apply softmax"),
        (np.array([[[0.6, 0.6]]]), "sum to 1"),
        (np.array([[["a", "b"]]]), "real-valued"),
    ],
)
def test_invalid_probs_raise(probs, match):
    with pytest.raises(ValueError, match=match):
        stats.predictive_entropy(probs)


@pytest.mark.parametrize(
    ("labels", "match"),
    [
        (np.array([0.0, 1.0]), "integer class ids"),
        (np.array([0]), r"shape \[N\]"),
        (np.array([0, 2]), r"lie in \[0, 2\)"),
        (np.array([-1, 0]), r"lie in \[0, 2\)"),
    ],
)
def test_invalid_labels_raise(labels, match):
    with pytest.raises(InputError, match=match):
        stats.table3_stats(GOOD, labels)


def test_mean_probs_must_be_two_dimensional():
    with pytest.raises(ValueError, match=r"2-D \[N, C\].*probs.mean\(0\)"):
        stats.nll(GOOD, np.array([0, 1]))


def test_valid_input_comes_back_as_float64_and_int64_numpy():
    p = torch.tensor([[[1.0 + 5e-6, -5e-6], [0.25, 0.75]]])  # within the slack of [0, 1]
    got = checks.check_probs(p)
    assert got.dtype == np.float64 and got.min() == 0.0 and got.max() == 1.0
    assert checks.check_mean_probs(got[0]).shape == (2, 2)
    y = checks.check_labels(np.array([0, 1], dtype=np.int8), 2, 2)
    assert y.dtype == np.int64 and y.tolist() == [0, 1]
