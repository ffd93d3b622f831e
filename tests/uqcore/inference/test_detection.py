"""Error detection and OOD detection within length bins (uqcore.inference.detection)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from uqcore.exceptions import InputError
from uqcore.inference.detection import (
    MIN_PER_SIDE,
    backwards,
    detection_by_length,
    error_detection,
    length_edges,
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
