"""Error detection and OOD detection within length bins (uqcore.inference.detection)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from uqcore.exceptions import InputError
from uqcore.inference.detection import (
    MIN_PER_SIDE,
    auroc_interval,
    backwards,
    bootstrap_rows,
    detection_by_length,
    error_detection,
    errors_versus_max_prob,
    length_edges,
    length_matched,
    matched_ood_detection,
    matching_edges,
    paired_auroc_difference,
    paired_models_difference,
    stratified_rows,
)
from uqcore.stats import OOD_SCORES, ood_scores, risk_coverage, summarize


def _probs(seed: int, T: int = 6, N: int = 80, C: int = 2) -> np.ndarray:
    logits = np.random.default_rng(seed).normal(size=(T, N, C)) * 2.0
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)  # [T, N, C]


def test_error_detection_equals_scikit_learn_per_score():
    p = _probs(0)
    y = np.random.default_rng(1).integers(0, 2, size=p.shape[1])
    got = error_detection(p, y)
    wrong = p.mean(0).argmax(-1) != y
    assert got["errors"] == int(wrong.sum()) and got["n"] == len(y)
    for score in OOD_SCORES:
        want = roc_auc_score(wrong, ood_scores(p, score))
        assert got[score]["auroc"] == pytest.approx(want, abs=1e-12), score
    # rejecting by 1 - max p is the risk-coverage curve of summarize()
    assert got["max_prob"]["aurc"] == pytest.approx(risk_coverage(p.mean(0), y).aurc, abs=1e-12)
    assert got["max_prob"]["aurc"] == pytest.approx(summarize(p, y)["aurc"], abs=1e-12)


def test_an_oracle_score_reaches_the_lowest_aurc_and_no_errors_give_no_auroc():
    p = _probs(2)
    y = p.mean(0).argmax(-1)  # every prediction right
    got = error_detection(p, y)
    assert all(got[s]["auroc"] is None and got[s]["aurc"] == 0.0 for s in OOD_SCORES)
    # 3 classes: still one AUROC per score
    p3 = _probs(3, C=3)
    y3 = np.random.default_rng(4).integers(0, 3, size=p3.shape[1])
    assert all(0.0 <= error_detection(p3, y3)[s]["auroc"] <= 1.0 for s in OOD_SCORES)


def test_deterministic_runs_have_an_accuracy_spread_of_exactly_zero():
    one = _probs(5, T=1)
    same = np.repeat(one, 7, axis=0)  # [7, N, C]: a deterministic model sampled 7 times
    y = np.random.default_rng(6).integers(0, 2, size=same.shape[1])
    s = summarize(same, y)
    assert s["accuracy_std"] == 0.0 and s["mcc_std"] == 0.0 and s["macro_f1_std"] == 0.0


def test_length_edges_end_with_the_bin_of_texts_cut_at_the_read_length():
    assert length_edges(64) == [0, 8, 16, 32, 64, 65]
    assert length_edges(256) == [0, 8, 16, 32, 64, 128, 256, 257]
    assert length_edges(10) == [0, 8, 10, 11]
    with pytest.raises(InputError, match="read_len"):
        length_edges(1)


def test_detection_by_length_scores_each_bin_alone():
    rng = np.random.default_rng(7)
    # in-domain texts short, out-of-domain long; the score is length plus noise: overall it
    # separates the domains, within a bin it does not
    n_id, n_ood = rng.integers(8, 40, 300), rng.integers(30, 65, 300)
    s_id, s_ood = n_id + rng.normal(0, 1, 300), n_ood + rng.normal(0, 1, 300)
    bins = detection_by_length(s_id, s_ood, n_id, n_ood, length_edges(64))
    assert [(b.lo, b.hi) for b in bins] == [(0, 8), (8, 16), (16, 32), (32, 64), (64, 65)]
    assert sum(b.n_id for b in bins) == 300 and sum(b.n_ood for b in bins) == 300
    mixed = next(b for b in bins if b.lo == 32)
    assert min(mixed.n_id, mixed.n_ood) >= MIN_PER_SIDE
    inside = (n_id >= 32) & (n_id < 64), (n_ood >= 32) & (n_ood < 64)
    want = roc_auc_score(
        np.r_[np.zeros(inside[0].sum()), np.ones(inside[1].sum())],
        np.r_[s_id[inside[0]], s_ood[inside[1]]],
    )
    assert mixed.auroc == pytest.approx(want, abs=1e-12)
    assert next(b for b in bins if b.lo == 8).auroc is None  # no out-of-domain text that short
    assert mixed.as_dict()["tokens"] == [32, 64]
    with pytest.raises(InputError, match="same size"):
        detection_by_length(s_id, s_ood, n_id[:-1], n_ood, length_edges(64))


def test_backwards_says_so_below_one_half_only():
    assert backwards(0.62, "errors") is None and backwards(None, "errors") is None
    assert backwards(0.4996, "errors") is None  # reads 0.500: not called backwards
    line = backwards(0.384, "out-of-domain texts")
    assert "0.384" in line and "backwards" in line and "out-of-domain texts" in line


# ------------------------------------------------------------------ length held fixed
def _lengths(seed: int, n: int, mean: float, read: int = 64) -> np.ndarray:
    return np.clip(np.random.default_rng(seed).poisson(mean, size=n), 1, read)


def _length_auroc(a: np.ndarray, b: np.ndarray, m) -> float:
    both = np.r_[a[m.id_rows], b[m.ood_rows]]
    return roc_auc_score(np.r_[np.zeros(m.n), np.ones(m.n)], both)


def test_a_length_matched_set_has_one_histogram_bin_by_bin_and_is_seeded():
    short, long = _lengths(0, 400, 20), _lengths(1, 300, 32)  # sentences vs short reviews
    edges = matching_edges(64)
    assert edges[:3] == [0, 1, 2] and edges[-2:] == [64, 65] and matching_edges(64, 8)[1] == 8
    m = length_matched(short, long, edges, seed=3)
    h_id = np.histogram(short[m.id_rows], bins=edges)[0]
    h_ood = np.histogram(long[m.ood_rows], bins=edges)[0]
    assert (h_id == h_ood).all() and list(h_id) == m.per_bin and m.n == h_id.sum() > 0
    assert len(set(m.id_rows)) == m.n and len(set(m.ood_rows)) == m.n  # no text twice
    again = length_matched(short, long, edges, seed=3)
    assert (again.id_rows == m.id_rows).all() and (again.ood_rows == m.ood_rows).all()
    other = length_matched(short, long, edges, seed=4)
    assert not (other.id_rows == m.id_rows).all()
    # the raw lengths separate the domains; the matched ones cannot (equal lengths), while
    # 8-token bins still would: each side sits at its own end of the shared bins
    raw = roc_auc_score(np.r_[np.zeros(400), np.ones(300)], np.r_[short, long])
    assert raw > 0.9 and _length_auroc(short, long, m) == 0.5 and m.n > 40
    assert _length_auroc(short, long, length_matched(short, long, matching_edges(64, 8))) > 0.7


def test_lengths_that_never_overlap_keep_nothing():
    m = length_matched(np.full(50, 10), np.full(50, 60), matching_edges(64))
    assert m.n == 0 and sum(m.per_bin) == 0
    with pytest.raises(InputError, match="increasing"):
        length_matched([1], [1], [0, 8, 8])
    with pytest.raises(InputError, match="read_len"):
        matching_edges(1)


def test_the_paired_difference_equals_a_plain_bootstrap_and_says_its_verdict():
    rng = np.random.default_rng(5)
    y = rng.random(120) < 0.3
    base = y + rng.normal(0, 1.0, 120)  # a fair detector
    good = y + rng.normal(0, 0.3, 120)  # a better one on the same rows
    got = paired_auroc_difference(y, good, base, resamples=200, seed=7)
    diffs = []
    for chunk in bootstrap_rows(y, 200, 7):
        for rows in chunk:  # a plain loop with scikit-learn over the same draws
            diffs.append(roc_auc_score(y[rows], good[rows]) - roc_auc_score(y[rows], base[rows]))
    low, high = np.percentile(diffs, [2.5, 97.5])
    assert got.low == pytest.approx(low, abs=1e-12) and got.high == pytest.approx(high, abs=1e-12)
    assert got.score == pytest.approx(roc_auc_score(y, good))
    assert got.difference == pytest.approx(got.score - got.baseline)
    assert got.verdict == "better" and got.as_dict()["verdict"] == "better"
    assert paired_auroc_difference(y, base, good, resamples=200).verdict == "worse"
    assert paired_auroc_difference(y, base, base + 1e-9 * y, resamples=200).verdict == "tie"
    assert paired_auroc_difference(np.ones(5, bool), good[:5], base[:5]) is None
    first = next(bootstrap_rows(y, 200, 7))
    assert first.shape == (100, 120) and (y[first].sum(axis=1) == y.sum()).all()


def test_two_models_paired_on_the_same_rows_equal_a_plain_bootstrap():
    rng = np.random.default_rng(11)
    n = 150
    wrong_a, wrong_b = rng.random(n) < 0.25, rng.random(n) < 0.35  # each model's own errors
    good = wrong_a + rng.normal(0, 0.3, n)  # A's score finds A's errors well
    fair = wrong_b + rng.normal(0, 1.0, n)  # B's finds B's less well
    got = paired_models_difference(wrong_a, good, wrong_b, fair, resamples=300, seed=3)
    cells = [np.flatnonzero((wrong_a == a) & (wrong_b == b)) for a in (1, 0) for b in (1, 0)]
    diffs = []
    for chunk in stratified_rows(cells, 300, 3):
        for rows in chunk:  # a plain loop with scikit-learn over the same draws of the rows
            diffs.append(
                roc_auc_score(wrong_a[rows], good[rows]) - roc_auc_score(wrong_b[rows], fair[rows])
            )
            assert wrong_a[rows].sum() == wrong_a.sum() and wrong_b[rows].sum() == wrong_b.sum()
    low, high = np.percentile(diffs, [2.5, 97.5])
    assert got.low == pytest.approx(low, abs=1e-12) and got.high == pytest.approx(high, abs=1e-12)
    assert got.score == pytest.approx(roc_auc_score(wrong_a, good))
    assert got.baseline == pytest.approx(roc_auc_score(wrong_b, fair))
    assert got.verdict == "better"
    swapped = paired_models_difference(wrong_b, fair, wrong_a, good, resamples=300, seed=3)
    assert swapped.verdict == "worse"
    same = paired_models_difference(wrong_a, good, wrong_a, good, resamples=50)
    assert (same.difference, same.low, same.high, same.verdict) == (0.0, 0.0, 0.0, "tie")
    assert paired_models_difference(np.zeros(n, bool), good, wrong_b, fair) is None
    with pytest.raises(InputError):
        paired_models_difference(wrong_a, good[:-1], wrong_b, fair)


def test_an_auroc_interval_is_the_percentiles_of_the_plain_bootstrap():
    rng = np.random.default_rng(4)
    y = rng.random(90) < 0.4
    s = y + rng.normal(0, 0.8, 90)
    value, low, high = auroc_interval(y, s, resamples=200, seed=9)
    plain = [roc_auc_score(y[r], s[r]) for chunk in bootstrap_rows(y, 200, 9) for r in chunk]
    assert value == pytest.approx(roc_auc_score(y, s))
    assert (low, high) == pytest.approx(tuple(np.percentile(plain, [2.5, 97.5])), abs=1e-12)
    assert low < value < high
    assert auroc_interval(np.ones(4, bool), s[:4]) is None


def _sure(margin: np.ndarray, T: int = 4) -> np.ndarray:
    """Probabilities [T, N, 2], surer with a larger ``margin`` (a little noise per sample)."""
    noise = np.random.default_rng(0).normal(0, 0.05, size=(T, len(margin)))
    p1 = 1 / (1 + np.exp(-(margin[None] + noise)))  # [T, N]
    return np.stack([1 - p1, p1], axis=-1)


def test_errors_versus_max_prob_is_the_paired_difference_per_score():
    p = _probs(2)
    y = np.random.default_rng(3).integers(0, 2, size=p.shape[1])
    got = errors_versus_max_prob(p, y)
    assert set(got) == set(OOD_SCORES) - {"max_prob"}
    wrong = p.mean(0).argmax(-1) != y
    mi = paired_auroc_difference(
        wrong, ood_scores(p, "mutual_information"), ood_scores(p, "max_prob")
    )
    assert got["mutual_information"] == mi.as_dict()
    right = p.mean(0).argmax(-1)
    assert errors_versus_max_prob(p, right) == dict.fromkeys(got)  # no error: no AUROC


def test_an_ood_auroc_made_of_length_vanishes_once_lengths_are_matched():
    rng = np.random.default_rng(4)
    n_id, n_ood = 600, 600
    len_id, len_ood = _lengths(5, n_id, 18), _lengths(6, n_ood, 26)

    def margin(n: np.ndarray) -> np.ndarray:  # a model less sure of longer texts, any domain
        return 4.0 - 0.1 * n + rng.normal(0, 0.3, size=len(n))

    a, b = _sure(margin(len_id)), _sure(margin(len_ood))
    raw = roc_auc_score(
        np.r_[np.zeros(n_id), np.ones(n_ood)],
        np.r_[ood_scores(a, "max_prob"), ood_scores(b, "max_prob")],
    )
    got = matched_ood_detection(a, b, len_id, len_ood, read_len=64)
    assert raw > 0.8 and got["n_per_side"] >= 200 and got["of"] == [n_id, n_ood]
    assert abs(got["auroc"]["max_prob"] - 0.5) < 0.08
    assert got["versus_max_prob"]["mutual_information"]["verdict"] in {"tie", "worse", "better"}
    apart = matched_ood_detection(a, b, np.full(n_id, 5), np.full(n_ood, 50), read_len=64)
    assert apart["n_per_side"] == 0 and "hardly overlap" in apart["note"] and "auroc" not in apart
