"""Whether confidence matches correctness: NLL, Brier, the reliability diagram and the (adaptive)
expected calibration error, the risk-coverage curve of selective prediction, and temperature
scaling of sampled logits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from uqcore.exceptions import InputError
from uqcore.stats.checks import check_labels, check_mean_probs, to_numpy

_NLL_FLOOR = 1e-12  # probabilities are clamped here before the log


@dataclass(frozen=True)
class ReliabilityData:
    """Per-bin data of a reliability diagram over ``n_bins`` equal-width confidence bins.

    Bin b covers ``[bin_lower[b], bin_upper[b])``, the last also 1.0; ``confidence`` (mean max
    prob) and ``accuracy`` are NaN where ``count`` is 0.
    """

    bin_lower: np.ndarray  # [n_bins]
    bin_upper: np.ndarray  # [n_bins]
    confidence: np.ndarray  # [n_bins], NaN for empty bins
    accuracy: np.ndarray  # [n_bins], NaN for empty bins
    count: np.ndarray  # [n_bins] int


def nll(mean_probs: Any, labels: Any) -> float:
    """Mean negative log-likelihood of the gold labels, probabilities clamped at 1e-12."""
    p = check_mean_probs(mean_probs)  # [N, C]
    y = check_labels(labels, *p.shape)  # [N]
    return float(-np.mean(np.log(np.maximum(p[np.arange(len(y)), y], _NLL_FLOOR))))


def brier(mean_probs: Any, labels: Any) -> float:
    """Mean over examples of sum over classes of (p - onehot(y))^2 (range [0, 2])."""
    p = check_mean_probs(mean_probs)  # [N, C]
    y = check_labels(labels, *p.shape)  # [N]
    onehot = np.eye(p.shape[1])[y]  # [N, C]
    return float(np.mean(np.sum((p - onehot) ** 2, axis=-1)))


def _check_bins(n_bins: Any) -> None:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise InputError(f"n_bins must be a positive integer, got {n_bins!r}; the default is 15.")


def reliability_diagram(mean_probs: Any, labels: Any, n_bins: int = 15) -> ReliabilityData:
    """Bin examples by confidence (max prob) into ``n_bins`` equal-width bins over [0, 1]."""
    _check_bins(n_bins)
    p = check_mean_probs(mean_probs)  # [N, C]
    y = check_labels(labels, *p.shape)  # [N]
    conf = p.max(axis=-1)  # [N]
    hit = (p.argmax(axis=-1) == y).astype(np.float64)  # [N]
    idx = np.minimum((conf * n_bins).astype(np.int64), n_bins - 1)  # [N]; 1.0 -> last bin
    count = np.bincount(idx, minlength=n_bins)  # [n_bins]
    sum_conf = np.bincount(idx, weights=conf, minlength=n_bins)  # [n_bins]
    sum_hit = np.bincount(idx, weights=hit, minlength=n_bins)  # [n_bins]
    nonempty, denom = count > 0, np.maximum(count, 1)  # [n_bins], [n_bins]
    edges = np.linspace(0.0, 1.0, n_bins + 1)  # [n_bins + 1]
    return ReliabilityData(
        bin_lower=edges[:-1],
        bin_upper=edges[1:],
        confidence=np.where(nonempty, sum_conf / denom, np.nan),
        accuracy=np.where(nonempty, sum_hit / denom, np.nan),
        count=count.astype(np.int64),
    )


def ece(mean_probs: Any, labels: Any, n_bins: int = 15) -> float:
    """Expected calibration error: sum over non-empty bins of count/N * |accuracy - confidence|."""
    rd = reliability_diagram(mean_probs, labels, n_bins)
    m = rd.count > 0  # [n_bins]
    weights = rd.count[m] / rd.count.sum()  # [n_nonempty]
    return float(np.sum(weights * np.abs(rd.accuracy[m] - rd.confidence[m])))


def adaptive_ece(mean_probs: Any, labels: Any, n_bins: int = 15) -> float:
    """Adaptive (equal-mass) ECE: examples sorted by confidence and cut into ``n_bins`` bins of
    (nearly) equal size, then ``sum_b |bin|/N * |accuracy_b - confidence_b|``. Written here:
    scikit-learn has no calibration error, and torchmetrics' has equal-width bins only."""
    _check_bins(n_bins)
    p = check_mean_probs(mean_probs)  # [N, C]
    y = check_labels(labels, *p.shape)  # [N]
    conf = p.max(axis=-1)  # [N]
    hit = (p.argmax(axis=-1) == y).astype(np.float64)  # [N]
    order = np.argsort(conf, kind="stable")  # [N]
    total = 0.0
    for part in np.array_split(order, min(n_bins, len(order))):  # sizes differ by at most 1
        total += len(part) * abs(hit[part].mean() - conf[part].mean())
    return float(total / len(order))


@dataclass(frozen=True)
class RiskCoverage:
    """Selective prediction: keep the ``k`` most confident examples (``coverage [N] = k / N``),
    ``risk [N]`` = error rate among them; ``aurc`` = mean risk over every coverage."""

    coverage: np.ndarray
    risk: np.ndarray
    aurc: float

    def accuracy_at(self, coverage: float) -> float:
        """Accuracy on the most confident ``coverage`` share (at least one example)."""
        if not 0.0 < coverage <= 1.0:
            raise InputError(f"coverage must be in (0, 1], got {coverage!r}.")
        k = max(1, int(np.ceil(coverage * len(self.risk) - 1e-9)))
        return float(1.0 - self.risk[k - 1])


def risk_coverage(mean_probs: Any, labels: Any) -> RiskCoverage:
    """The risk-coverage curve of confidence = max mean probability (ties kept in input
    order) and its area AURC (Geifman & El-Yaniv, 2017): lower is better; an oracle that
    ranks every error last reaches the minimum for its accuracy."""
    p = check_mean_probs(mean_probs)  # [N, C]
    y = check_labels(labels, *p.shape)  # [N]
    conf = p.max(axis=-1)  # [N]
    err = (p.argmax(axis=-1) != y).astype(np.float64)  # [N]
    order = np.argsort(-conf, kind="stable")  # most confident first
    k = np.arange(1, len(err) + 1)  # [N]
    risk = np.cumsum(err[order]) / k  # [N]
    return RiskCoverage(coverage=k / len(err), risk=risk, aurc=float(risk.mean()))


def scaled_probs(logits: Any, temperature: float) -> np.ndarray:
    """``softmax(logits / temperature)`` of sampled logits ``[T, N, C]``, sample by sample."""
    z = to_numpy(logits).astype(np.float64) / float(temperature)
    z -= z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def fit_temperature(logits: Any, labels: Any) -> float:
    """The temperature that minimises the NLL of the predictive distribution
    ``mean_t softmax(z_t / temperature)`` on held-out data (dev), searched on log-temperature
    in [1/20, 20] (Guo et al., 2017). Each sample's logits are scaled, then the samples are
    averaged: the scaled model is then still a distribution over samples, and for a
    deterministic model this is ordinary temperature scaling."""
    from scipy.optimize import minimize_scalar

    z = to_numpy(logits).astype(np.float64)
    if z.ndim != 3 or not np.all(np.isfinite(z)):
        raise InputError(f"logits must be finite, shaped [T, N, C]; got shape {z.shape}.")
    y = check_labels(labels, *z.shape[1:])

    def loss(log_t: float) -> float:
        return nll(scaled_probs(z, np.exp(log_t)).mean(axis=0), y)

    best = minimize_scalar(
        loss, bounds=(-np.log(20.0), np.log(20.0)), method="bounded", options={"xatol": 1e-4}
    )
    return float(np.exp(best.x))
