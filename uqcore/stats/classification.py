"""How often the prediction is right: accuracy, macro-F1 and (two classes) Matthews correlation,
of each sampled run (mean and std over the T runs) and of the mean prediction."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.metrics import f1_score, matthews_corrcoef

from uqcore.stats.checks import check_labels, check_mean_probs, check_probs


def _spread(values: np.ndarray) -> tuple[float, float]:
    """Mean and population std over the T runs; the std is exactly 0 when every run gave the
    same value (a deterministic model: numpy's std of T equal floats can be 1e-16)."""
    std = 0.0 if np.ptp(values) == 0 else float(values.std())
    return float(values.mean()), std


def sampled_accuracy(probs: Any, labels: Any) -> tuple[float, float]:
    """Accuracy of each sampled run t (argmax of probs[t]); mean and population std over T."""
    p = check_probs(probs)  # [T, N, C]
    y = check_labels(labels, *p.shape[1:])  # [N]
    acc = (p.argmax(axis=-1) == y[None, :]).mean(axis=1)  # [T]
    return _spread(acc)


def sampled_mcc(probs: Any, labels: Any) -> tuple[float, float]:
    """Matthews correlation of each run t (0 where undefined); mean and population std over T."""
    p = check_probs(probs)  # [T, N, C]
    y = check_labels(labels, *p.shape[1:])  # [N]
    pred = p.argmax(axis=-1)  # [T, N]
    mcc = np.nan_to_num([matthews_corrcoef(y, pred_t) for pred_t in pred], nan=0.0)  # [T]
    return _spread(mcc)


def sampled_macro_f1(probs: Any, labels: Any) -> tuple[float, float]:
    """Macro-averaged F1 of each run t (the mean of the per-class F1 over the C classes, a class
    never predicted nor present counting 0); mean and population std over T."""
    p = check_probs(probs)  # [T, N, C]
    y = check_labels(labels, *p.shape[1:])  # [N]
    pred = p.argmax(axis=-1)  # [T, N]
    classes = list(range(p.shape[2]))
    f1 = np.array(
        [f1_score(y, pred_t, labels=classes, average="macro", zero_division=0) for pred_t in pred]
    )
    return _spread(f1)


def accuracy(mean_probs: Any, labels: Any) -> float:
    """Accuracy of the mean prediction: the share of rows whose arg-max is the label."""
    p = check_mean_probs(mean_probs)  # [N, C]
    y = check_labels(labels, *p.shape)  # [N]
    return float((p.argmax(axis=1) == y).mean())


def macro_f1(mean_probs: Any, labels: Any) -> float:
    """Macro-averaged F1 of the mean prediction over all C classes (a class never predicted
    nor present counts 0): scikit-learn's ``f1_score(average="macro", zero_division=0)``,
    counted here with numpy because a bootstrap calls it a thousand times (sklearn's checks
    cost ~4 ms a call; the test holds the two equal)."""
    p = check_mean_probs(mean_probs)  # [N, C]
    y = check_labels(labels, *p.shape)  # [N]
    c = p.shape[1]
    pred = p.argmax(axis=1)  # [N]
    hits = np.bincount(y[pred == y], minlength=c)  # [C] true positives
    both = np.bincount(pred, minlength=c) + np.bincount(y, minlength=c)  # [C] 2TP + FP + FN
    f1 = np.divide(2 * hits, both, out=np.zeros(c), where=both > 0)  # [C]
    return float(f1.mean())
