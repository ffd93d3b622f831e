"""Table 3, the entropies, the mutual information and the variance (uqcore.stats.uncertainty)
against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tests.uqcore.stats import random_probs
from uqcore import stats


def test_table3_hand_example_with_tie():
    probs = np.array([[[0.9, 0.1]], [[0.5, 0.5]]])  # [T=2, N=1, C=2]; the tie argmaxes to 0
    s = stats.table3_stats(probs, np.array([0]))
    assert s.p_gold_mean == pytest.approx([0.7])
    assert s.p_gold_var == pytest.approx([0.04])
    assert s.n_correct.tolist() == [2]
    assert s.n_samples == 2


def test_table3_counts_wrong_samples():
    probs = np.array([[[0.9, 0.1]], [[0.3, 0.7]], [[0.2, 0.8]]])  # [3, 1, 2]
    s = stats.table3_stats(probs, np.array([0]))
    assert s.p_gold_mean == pytest.approx([(0.9 + 0.3 + 0.2) / 3])
    assert s.p_gold_var == pytest.approx([np.var([0.9, 0.3, 0.2])])
    assert s.n_correct.tolist() == [1]
    assert s.n_samples == 3


def test_table3_accepts_torch():
    probs = torch.tensor([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.4, 0.6]]], requires_grad=True)
    s = stats.table3_stats(probs, torch.tensor([0, 1]))
    assert s.p_gold_mean == pytest.approx([0.7, 0.7])
    assert s.n_correct.tolist() == [2, 2]


def test_entropy_of_uniform_is_log_c():
    for c in (2, 5):
        probs = np.full((3, 4, c), 1.0 / c)  # [3, 4, C]
        assert stats.predictive_entropy(probs) == pytest.approx([math.log(c)] * 4)
        assert stats.expected_entropy(probs) == pytest.approx([math.log(c)] * 4)


def test_mi_zero_for_identical_samples_and_positive_when_disagreeing():
    same = np.tile(np.array([[0.8, 0.2]]), (5, 1, 1))  # [5, 1, 2]
    assert stats.mutual_information(same) == pytest.approx([0.0], abs=1e-12)
    assert stats.predictive_variance(same) == pytest.approx([0.0], abs=1e-12)
    # A deterministic model: exactly 0 (the mean of T equal floats can differ in the last bit).
    rows = np.tile(np.random.default_rng(0).dirichlet([1.0, 1.0], size=50), (10, 1, 1))
    assert np.all(stats.mutual_information(rows) == 0.0)
    assert np.all(stats.predictive_variance(rows) == 0.0)
    disagree = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])  # [2, 1, 2]
    # Two confident samples that disagree: H(mean) = log 2, mean H = 0.
    assert stats.mutual_information(disagree) == pytest.approx([math.log(2)])
    assert stats.expected_entropy(disagree) == pytest.approx([0.0])


def test_entropy_hand_value_and_mi_bounds():
    probs = np.array([[[0.9, 0.1]], [[0.5, 0.5]]])  # [2, 1, 2]
    h = lambda p: -sum(x * math.log(x) for x in p)  # noqa: E731
    assert stats.predictive_entropy(probs) == pytest.approx([h([0.7, 0.3])])
    assert stats.expected_entropy(probs) == pytest.approx([(h([0.9, 0.1]) + h([0.5, 0.5])) / 2])
    p = random_probs(7, 20, 4)
    mi, pe = stats.mutual_information(p), stats.predictive_entropy(p)
    assert np.all(mi >= 0) and np.all(mi <= pe + 1e-12) and np.any(mi > 0)
    assert mi == pytest.approx(pe - stats.expected_entropy(p), abs=1e-12)


def test_predictive_variance_gold_vs_predicted():
    probs = np.array([[[0.9, 0.1]], [[0.5, 0.5]]])  # [2, 1, 2]
    assert stats.predictive_variance(probs, np.array([1])) == pytest.approx([0.04])
    assert stats.predictive_variance(probs) == pytest.approx([0.04])
    three = np.array([[[0.6, 0.3, 0.1]], [[0.4, 0.3, 0.3]]])  # [2, 1, 3]
    assert stats.predictive_variance(three, np.array([1])) == pytest.approx([0.0])
    assert stats.predictive_variance(three) == pytest.approx([0.01])


def test_single_sample_gives_zero_variance_and_mi():
    p = random_probs(1, 6, 3)
    y = np.arange(6) % 3
    assert np.all(stats.mutual_information(p) == 0)
    assert np.all(stats.predictive_variance(p) == 0)
    assert np.all(stats.table3_stats(p, y).p_gold_var == 0)
    assert stats.sampled_accuracy(p, y)[1] == 0.0


def test_no_nan_on_zero_probabilities():
    probs = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]])
    y = np.array([1, 1])  # example 0 has p(gold) = 0 in every sample: NLL hits the clamp
    for v in (
        stats.predictive_entropy(probs),
        stats.expected_entropy(probs),
        stats.mutual_information(probs),
        stats.predictive_variance(probs, y),
    ):
        assert np.all(np.isfinite(v))
    assert stats.expected_entropy(probs) == pytest.approx([0.0, 0.0])
    assert stats.nll(probs.mean(0), y) == pytest.approx(-math.log(1e-12) / 2)
    assert all(math.isfinite(v) for v in stats.summarize(probs, y).values())
