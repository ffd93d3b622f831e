"""Tests of uqcore.stats against hand-computed values and scikit-learn."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from sklearn.metrics import matthews_corrcoef

from uqcore import stats
from uqcore.errors import InputError


def _random_probs(t: int, n: int, c: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(t, n, c)) * 2.0  # [T, N, C]
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ----------------------------------------------------------------------------- Table 3


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


# ----------------------------------------------------------------------------- entropies


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
    p = _random_probs(7, 20, 4)
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
    p = _random_probs(1, 6, 3)
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


# ----------------------------------------------------------------------------- calibration


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
    mp = _random_probs(1, 200, 3, seed=3)[0]  # [200, 3]
    y = np.random.default_rng(1).integers(0, 3, size=200)
    rd = stats.reliability_diagram(mp, y)
    assert len(rd.count) == 15 and rd.count.sum() == 200
    m = rd.count > 0
    from_rd = np.sum(rd.count[m] / 200 * np.abs(rd.accuracy[m] - rd.confidence[m]))
    assert stats.ece(mp, y) == pytest.approx(from_rd)
    onehot = np.eye(3)[y]  # [200, 3]: confidence 1.0 lands in the last bin, always right
    assert stats.ece(onehot, y) == 0.0
    assert stats.reliability_diagram(onehot, y).count[-1] == 200


# ----------------------------------------------------------------------------- sampled runs


def test_sampled_accuracy_constructed():
    y = np.array([0, 1, 0, 1])
    right, wrong = np.eye(2)[y], np.eye(2)[1 - y]  # [4, 2]
    run_a = right  # accuracy 1.0
    run_b = np.concatenate([right[:2], wrong[2:]])  # accuracy 0.5
    probs = np.stack([run_a, run_b])  # [2, 4, 2]
    mean, std = stats.sampled_accuracy(probs, y)
    assert mean == pytest.approx(0.75) and std == pytest.approx(0.25)


def test_sampled_mcc_matches_sklearn():
    p = _random_probs(5, 40, 2, seed=4)
    y = np.random.default_rng(2).integers(0, 2, size=40)
    per_run = [matthews_corrcoef(y, p[t].argmax(-1)) for t in range(5)]
    mean, std = stats.sampled_mcc(p, y)
    assert mean == pytest.approx(np.mean(per_run)) and std == pytest.approx(np.std(per_run))
    perfect = np.stack([np.eye(2)[y]] * 3)  # [3, 40, 2]
    assert stats.sampled_mcc(perfect, y) == pytest.approx((1.0, 0.0))


# ----------------------------------------------------------------------------- OOD


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


# ----------------------------------------------------------------------------- summary


def test_summarize_keys_and_json():
    y3 = np.arange(10) % 3
    out3 = stats.summarize(_random_probs(4, 10, 3), y3)
    base = {
        "accuracy_mean",
        "accuracy_std",
        "nll",
        "brier",
        "ece",
        "aece",
        "aurc",
        "accuracy_at_80_coverage",
        "mean_entropy",
        "mean_expected_entropy",
        "mean_mutual_information",
        "mean_variance",
        "macro_f1_mean",
        "macro_f1_std",
    }
    assert set(out3) == base
    out2 = stats.summarize(_random_probs(4, 10, 2), np.arange(10) % 2)
    assert set(out2) == base | {"mcc_mean", "mcc_std"}
    for out in (out2, out3):
        assert all(type(v) is float and math.isfinite(v) for v in out.values())
        assert json.loads(json.dumps(out)) == out


# ----------------------------------------------------------------------------- validation


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


def test_other_invalid_inputs_raise():
    with pytest.raises(ValueError, match=r"2-D \[N, C\].*probs.mean\(0\)"):
        stats.nll(GOOD, np.array([0, 1]))
    with pytest.raises(ValueError, match="positive integer"):
        stats.ece(GOOD[0], np.array([0, 1]), n_bins=0)
    with pytest.raises(ValueError, match="1-D"):
        stats.ood_detection(np.zeros((2, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        stats.ood_detection(np.array([0.1, np.inf]), np.zeros(3))
    with pytest.raises(ValueError, match="non-empty"):
        stats.ood_detection(np.zeros(0), np.zeros(3))


def test_adaptive_ece_by_hand():
    """4 examples, 2 equal-mass bins: confidences 0.6, 0.7 | 0.8, 0.9 (sorted), hits 1, 0 | 1, 1.
    Bin 1: |0.5 - 0.65| = 0.15; bin 2: |1.0 - 0.85| = 0.15; aECE = (2 * 0.15 + 2 * 0.15) / 4."""
    from uqcore.stats import adaptive_ece

    p = np.array([[0.3, 0.7], [0.9, 0.1], [0.4, 0.6], [0.2, 0.8]])
    y = np.array([0, 0, 1, 1])  # hits: 0.7 wrong, 0.9 right, 0.6 right, 0.8 right
    assert adaptive_ece(p, y, n_bins=2) == pytest.approx(0.15)
    assert adaptive_ece(p, y, n_bins=4) == pytest.approx((0.4 + 0.7 + 0.2 + 0.1) / 4)


def test_risk_coverage_and_aurc_by_hand():
    """Confidences 0.9 (right), 0.8 (wrong), 0.7 (right), 0.6 (wrong): risks after keeping
    1..4 = 0, 1/2, 1/3, 2/4; AURC = their mean; accuracy at 50 % coverage = 1 - 1/2."""
    from uqcore.stats import risk_coverage

    p = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7], [0.4, 0.6]])
    y = np.array([1, 1, 1, 0])
    rc = risk_coverage(p, y)
    assert np.allclose(rc.risk, [0, 1 / 2, 1 / 3, 2 / 4])
    assert np.allclose(rc.coverage, [0.25, 0.5, 0.75, 1.0])
    assert rc.aurc == pytest.approx((0 + 1 / 2 + 1 / 3 + 1 / 2) / 4)
    assert rc.accuracy_at(0.5) == pytest.approx(0.5) and rc.accuracy_at(0.8) == pytest.approx(0.5)
    with pytest.raises(InputError, match="coverage"):
        rc.accuracy_at(0.0)


def test_energy_and_max_logit_by_hand():
    """Two samples of logits per example, averaged: [1, 3] and [0, 0]."""
    from uqcore.stats import logit_scores

    z = np.array([[[0.0, 2.0], [1.0, -1.0]], [[2.0, 4.0], [-1.0, 1.0]]])  # [T=2, N=2, C=2]
    assert np.allclose(logit_scores(z, "max_logit"), [-3.0, 0.0])
    assert np.allclose(logit_scores(z, "energy"), [-np.log(np.e + np.e**3), -np.log(2.0)])
    with pytest.raises(InputError, match="unknown logit score"):
        logit_scores(z, "mahalanobis")


def test_temperature_scaling_recovers_a_known_temperature():
    """Labels drawn from softmax(z / 2): the fitted temperature on overconfident logits z is 2,
    and scaling lowers the NLL."""
    from uqcore.stats import fit_temperature, nll, scaled_probs

    rng = np.random.default_rng(0)
    z = rng.normal(0, 4, (1, 20_000, 3))  # [T=1, N, C]
    p_true = scaled_probs(z, 2.0)[0]  # [N, C]
    y = np.array([rng.choice(3, p=row) for row in p_true])
    t = fit_temperature(z, y)
    assert t == pytest.approx(2.0, rel=0.05)
    assert nll(scaled_probs(z, t).mean(0), y) < nll(scaled_probs(z, 1.0).mean(0), y)


def test_conformal_sets_by_hand():
    """LAC on 4 calibration examples, true-label scores 0.1, 0.2, 0.3, 0.4: at coverage 0.6 the
    level is ceil(5 * 0.6) / 4 = 0.75, the 'higher' quantile 0.3."""
    from uqcore.stats import conformal_calibrate, conformal_summary

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
    from uqcore.stats import conformal_calibrate, conformal_summary

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
    from uqcore.stats import resampled_coverage

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
    from uqcore.stats import resampled_coverage

    scores = np.random.default_rng(3).random(900)
    r = resampled_coverage(scores[:300], scores[300:], 0.9, splits=2000, seed=1)
    assert 0.9 - 0.002 <= r.mean <= 0.9 + 1 / 301 + 0.002
    assert r.low < 0.88 < 0.92 < r.high and r.high - r.low < 0.1


def test_mahalanobis_by_hand():
    """Two classes at (0, 0) and (4, 0), features spread with variance 1 on x and 4 on y around
    them: the distance of (0, 2) is 2^2 / 4 = 1 (to class 0), of (2, 0) is 2^2 / 1 = 4."""
    from uqcore.stats import fit_mahalanobis

    offsets = np.array([[1.0, 2.0], [-1.0, -2.0], [1.0, -2.0], [-1.0, 2.0]])  # var 1 and 4
    x = np.concatenate([offsets, offsets + [4.0, 0.0]])
    y = np.array([0] * 4 + [1] * 4)
    m = fit_mahalanobis(x, y)
    assert np.allclose(m.means, [[0, 0], [4, 0]])
    assert np.allclose(m.scores(np.array([[0.0, 2.0], [2.0, 0.0], [4.0, 0.0]])), [1.0, 4.0, 0.0])


def test_macro_f1_is_sklearns_per_sample_run():
    from sklearn.metrics import f1_score

    y = np.array([0, 1, 2, 2, 1, 0, 2])
    p = _random_probs(3, 7, 3)
    mean, std = stats.sampled_macro_f1(p, y)
    per_run = [
        f1_score(y, p[t].argmax(-1), labels=[0, 1, 2], average="macro", zero_division=0)
        for t in range(3)
    ]
    assert mean == pytest.approx(np.mean(per_run)) and std == pytest.approx(np.std(per_run))
    perfect = np.eye(3)[y][None].repeat(2, 0)  # [T, N, C], always right
    assert stats.sampled_macro_f1(perfect, y) == (1.0, 0.0)
