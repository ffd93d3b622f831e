"""Uncertainty statistics over sampled class probabilities (GUIDE §3).

Every function takes ``probs`` of shape ``[T, N, C]`` (T stochastic samples of N examples over C
classes; numpy arrays or torch tensors) or the mean prediction ``mean_probs`` ``[N, C]``, with
integer ``labels`` ``[N]`` in ``[0, C)``. Inputs are validated and bad ones raise
:class:`uqcore.errors.InputError` (a ``ValueError``) saying what to do. Valid input never yields
NaN except in the documented empty bins of :func:`reliability_diagram`; with ``T = 1`` all
variances and the mutual information are exactly 0. Logarithms are natural (nats).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.special import xlogy
from sklearn.metrics import (
    average_precision_score,
    f1_score,
    matthews_corrcoef,
    roc_auc_score,
    roc_curve,
)

from uqcore.errors import InputError

OOD_SCORES: tuple[str, ...] = ("max_prob", "entropy", "mutual_information", "variance")
_RANGE_SLACK = 1e-5  # probabilities may stray this far outside [0, 1]
_SUM_TOL = 1e-3  # class probabilities must sum to 1 within this
_NLL_FLOOR = 1e-12  # probabilities are clamped here before the log


@dataclass(frozen=True)
class Table3Stats:
    """Per-example statistics of the paper's Table 3 for the gold label y.

    ``p_gold_mean`` / ``p_gold_var``: mean and population variance (ddof=0) over T of p_t(y), [N].
    ``n_correct``: number of samples whose argmax is y, int [N]. ``n_samples``: T.
    """

    p_gold_mean: np.ndarray  # [N]
    p_gold_var: np.ndarray  # [N]
    n_correct: np.ndarray  # [N] int
    n_samples: int


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


@dataclass(frozen=True)
class OODResult:
    """OOD detection quality with OOD as the positive class (higher score = more likely OOD)."""

    auroc: float
    aupr: float
    fpr_at_95_tpr: float  # in-domain FPR at the first threshold where OOD TPR >= 0.95
    roc_fpr: np.ndarray  # [K]
    roc_tpr: np.ndarray  # [K]


def _to_numpy(x: Any) -> np.ndarray:
    return np.asarray(x.detach().cpu() if hasattr(x, "detach") else x)  # torch tensors too


def _check_prob_values(p: np.ndarray, name: str) -> np.ndarray:
    if not np.issubdtype(p.dtype, np.number) or np.issubdtype(p.dtype, np.complexfloating):
        raise InputError(f"{name} has dtype {p.dtype}; pass real-valued class probabilities.")
    p = p.astype(np.float64)
    if not np.all(np.isfinite(p)):
        raise InputError(f"{name} contains NaN or inf; check the model output for overflow.")
    if p.min() < -_RANGE_SLACK or p.max() > 1 + _RANGE_SLACK:
        raise InputError(
            f"{name} has values in [{p.min():.4g}, {p.max():.4g}], outside [0, 1]; "
            "pass probabilities (apply softmax to logits first)."
        )
    worst = float(np.max(np.abs(p.sum(axis=-1) - 1.0)))  # over all rows [..., C] -> scalar
    if worst > _SUM_TOL:
        raise InputError(
            f"{name} rows must sum to 1 over the class axis (last), but one is off by {worst:.4g}; "
            "pass softmax probabilities with classes on the last axis."
        )
    return np.clip(p, 0.0, 1.0)


def _check_probs(probs: Any) -> np.ndarray:
    p = _to_numpy(probs)
    if p.ndim != 3 or p.shape[0] < 1 or p.shape[1] < 1 or p.shape[2] < 2:
        raise InputError(
            f"probs must be 3-D [T, N, C] (samples, examples, classes) with T >= 1, N >= 1 and "
            f"C >= 2, got shape {p.shape}; add a leading sample axis for one run (probs[None])."
        )
    return _check_prob_values(p, "probs")  # [T, N, C]


def _check_mean_probs(mean_probs: Any) -> np.ndarray:
    p = _to_numpy(mean_probs)
    if p.ndim != 2 or p.shape[0] < 1 or p.shape[1] < 2:
        raise InputError(
            f"mean_probs must be 2-D [N, C] with N >= 1 and C >= 2, got shape {p.shape}; "
            "average sampled probabilities over the sample axis first (probs.mean(0))."
        )
    return _check_prob_values(p, "mean_probs")  # [N, C]


def _check_labels(labels: Any, n: int, c: int) -> np.ndarray:
    y = _to_numpy(labels)
    if y.dtype == bool or not np.issubdtype(y.dtype, np.integer):
        raise InputError(f"labels must be integer class ids, got {y.dtype}; use .astype(int).")
    if y.shape != (n,):
        raise InputError(f"labels must have shape [N] = ({n},), got {y.shape}; one per example.")
    if y.min() < 0 or y.max() >= c:
        raise InputError(
            f"labels must lie in [0, {c}) for C = {c} classes, got range [{y.min()}, {y.max()}]; "
            "check the label mapping."
        )
    return y.astype(np.int64)  # [N]


def _entropy(p: np.ndarray) -> np.ndarray:
    """Entropy over the last axis with 0 * log 0 = 0 (xlogy), never NaN."""
    return -np.sum(xlogy(p, p), axis=-1)


def table3_stats(probs: Any, labels: Any) -> Table3Stats:
    """Table 3 statistics: mean/variance over T of p_t(y) and how many samples predict y."""
    p = _check_probs(probs)  # [T, N, C]
    y = _check_labels(labels, *p.shape[1:])  # [N]
    p_gold = p[:, np.arange(len(y)), y]  # [T, N]
    correct = p.argmax(axis=-1) == y[None, :]  # [T, N]
    return Table3Stats(
        p_gold_mean=p_gold.mean(axis=0),  # [N]
        p_gold_var=p_gold.var(axis=0),  # [N]
        n_correct=correct.sum(axis=0).astype(np.int64),  # [N]
        n_samples=p.shape[0],
    )


def predictive_entropy(probs: Any) -> np.ndarray:
    """Entropy of the mean prediction, H[mean_t p_t], in nats. Returns [N]."""
    p = _check_probs(probs)  # [T, N, C]
    return _entropy(p.mean(axis=0))  # [N]


def expected_entropy(probs: Any) -> np.ndarray:
    """Mean over T of the per-sample entropy, mean_t H[p_t] (aleatoric part). Returns [N]."""
    p = _check_probs(probs)  # [T, N, C]
    return _entropy(p).mean(axis=0)  # [N]


def mutual_information(probs: Any) -> np.ndarray:
    """Predictive minus expected entropy (epistemic part), clipped at 0. Returns [N].

    Exactly 0 where all T samples agree bit for bit (a deterministic model), where the two entropies
    would otherwise differ by rounding (~1e-17).
    """
    p = _check_probs(probs)  # [T, N, C]
    mi = _entropy(p.mean(axis=0)) - _entropy(p).mean(axis=0)  # [N]
    mi[_constant_over_samples(p)] = 0.0
    return np.maximum(mi, 0.0)


def _constant_over_samples(p: np.ndarray) -> np.ndarray:
    """[T, N, C] -> [N] bool: True where every sample equals the first one exactly."""
    return (p == p[:1]).all(axis=(0, 2))


def predictive_variance(probs: Any, labels: Any = None) -> np.ndarray:
    """Population variance over T of p_t(k); k = gold label if given, else argmax of mean. [N]"""
    p = _check_probs(probs)  # [T, N, C]
    n = p.shape[1]
    k = p.mean(axis=0).argmax(-1) if labels is None else _check_labels(labels, *p.shape[1:])  # [N]
    var = p[:, np.arange(n), k].var(axis=0)  # [N]
    var[_constant_over_samples(p)] = 0.0
    return var


def nll(mean_probs: Any, labels: Any) -> float:
    """Mean negative log-likelihood of the gold labels, probabilities clamped at 1e-12."""
    p = _check_mean_probs(mean_probs)  # [N, C]
    y = _check_labels(labels, *p.shape)  # [N]
    return float(-np.mean(np.log(np.maximum(p[np.arange(len(y)), y], _NLL_FLOOR))))


def brier(mean_probs: Any, labels: Any) -> float:
    """Mean over examples of sum over classes of (p - onehot(y))^2 (range [0, 2])."""
    p = _check_mean_probs(mean_probs)  # [N, C]
    y = _check_labels(labels, *p.shape)  # [N]
    onehot = np.eye(p.shape[1])[y]  # [N, C]
    return float(np.mean(np.sum((p - onehot) ** 2, axis=-1)))


def _check_bins(n_bins: Any) -> None:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise InputError(f"n_bins must be a positive integer, got {n_bins!r}; the default is 15.")


def reliability_diagram(mean_probs: Any, labels: Any, n_bins: int = 15) -> ReliabilityData:
    """Bin examples by confidence (max prob) into ``n_bins`` equal-width bins over [0, 1]."""
    _check_bins(n_bins)
    p = _check_mean_probs(mean_probs)  # [N, C]
    y = _check_labels(labels, *p.shape)  # [N]
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
    p = _check_mean_probs(mean_probs)  # [N, C]
    y = _check_labels(labels, *p.shape)  # [N]
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
    p = _check_mean_probs(mean_probs)  # [N, C]
    y = _check_labels(labels, *p.shape)  # [N]
    conf = p.max(axis=-1)  # [N]
    err = (p.argmax(axis=-1) != y).astype(np.float64)  # [N]
    order = np.argsort(-conf, kind="stable")  # most confident first
    k = np.arange(1, len(err) + 1)  # [N]
    risk = np.cumsum(err[order]) / k  # [N]
    return RiskCoverage(coverage=k / len(err), risk=risk, aurc=float(risk.mean()))


def _spread(values: np.ndarray) -> tuple[float, float]:
    """Mean and population std over the T runs; the std is exactly 0 when every run gave the
    same value (a deterministic model: numpy's std of T equal floats can be 1e-16)."""
    std = 0.0 if np.ptp(values) == 0 else float(values.std())
    return float(values.mean()), std


def sampled_accuracy(probs: Any, labels: Any) -> tuple[float, float]:
    """Accuracy of each sampled run t (argmax of probs[t]); mean and population std over T."""
    p = _check_probs(probs)  # [T, N, C]
    y = _check_labels(labels, *p.shape[1:])  # [N]
    acc = (p.argmax(axis=-1) == y[None, :]).mean(axis=1)  # [T]
    return _spread(acc)


def sampled_mcc(probs: Any, labels: Any) -> tuple[float, float]:
    """Matthews correlation of each run t (0 where undefined); mean and population std over T."""
    p = _check_probs(probs)  # [T, N, C]
    y = _check_labels(labels, *p.shape[1:])  # [N]
    pred = p.argmax(axis=-1)  # [T, N]
    mcc = np.nan_to_num([matthews_corrcoef(y, pred_t) for pred_t in pred], nan=0.0)  # [T]
    return _spread(mcc)


def sampled_macro_f1(probs: Any, labels: Any) -> tuple[float, float]:
    """Macro-averaged F1 of each run t (the mean of the per-class F1 over the C classes, a class
    never predicted nor present counting 0); mean and population std over T."""
    p = _check_probs(probs)  # [T, N, C]
    y = _check_labels(labels, *p.shape[1:])  # [N]
    pred = p.argmax(axis=-1)  # [T, N]
    classes = list(range(p.shape[2]))
    f1 = np.array(
        [f1_score(y, pred_t, labels=classes, average="macro", zero_division=0) for pred_t in pred]
    )
    return _spread(f1)


def ood_scores(probs: Any, score: str) -> np.ndarray:
    """Per-example OOD score, higher = more likely OOD. ``score`` is one of :data:`OOD_SCORES`.

    "max_prob" = 1 - max of the mean prob; "entropy" = predictive entropy; "mutual_information";
    "variance" = :func:`predictive_variance` of the predicted class. Returns [N].
    """
    if score not in OOD_SCORES:
        raise InputError(f"unknown OOD score {score!r}; choose one of {', '.join(OOD_SCORES)}.")
    if score == "max_prob":
        return 1.0 - _check_probs(probs).mean(axis=0).max(axis=-1)  # [N]
    if score == "entropy":
        return predictive_entropy(probs)
    if score == "mutual_information":
        return mutual_information(probs)
    return predictive_variance(probs)


def scaled_probs(logits: Any, temperature: float) -> np.ndarray:
    """``softmax(logits / temperature)`` of sampled logits ``[T, N, C]``, sample by sample."""
    z = _to_numpy(logits).astype(np.float64) / float(temperature)
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

    z = _to_numpy(logits).astype(np.float64)
    if z.ndim != 3 or not np.all(np.isfinite(z)):
        raise InputError(f"logits must be finite, shaped [T, N, C]; got shape {z.shape}.")
    y = _check_labels(labels, *z.shape[1:])

    def loss(log_t: float) -> float:
        return nll(scaled_probs(z, np.exp(log_t)).mean(axis=0), y)

    best = minimize_scalar(
        loss, bounds=(-np.log(20.0), np.log(20.0)), method="bounded", options={"xatol": 1e-4}
    )
    return float(np.exp(best.x))


LOGIT_SCORES: tuple[str, ...] = ("max_logit", "energy")  # OOD scores read from logits


def logit_scores(logits: Any, score: str) -> np.ndarray:
    """Per-example OOD score from sampled logits ``[T, N, C]`` (averaged over the samples),
    higher = more likely OOD: "max_logit" = minus the largest mean logit (Hendrycks et al.,
    2022); "energy" = minus the log-sum-exp of the mean logits (Liu et al., 2020). Returns [N]."""
    if score not in LOGIT_SCORES:
        raise InputError(f"unknown logit score {score!r}; choose one of {', '.join(LOGIT_SCORES)}.")
    z = _to_numpy(logits).astype(np.float64)
    if z.ndim != 3 or not np.all(np.isfinite(z)):
        raise InputError(f"logits must be finite, shaped [T, N, C]; got shape {z.shape}.")
    mean = z.mean(axis=0)  # [N, C]
    if score == "max_logit":
        return -mean.max(axis=-1)
    top = mean.max(axis=-1, keepdims=True)  # [N, 1]
    return -(top[:, 0] + np.log(np.exp(mean - top).sum(axis=-1)))


def _check_scores(s: Any, name: str) -> np.ndarray:
    a = _to_numpy(s)
    if a.ndim != 1 or a.size == 0:
        raise InputError(f"{name} must be a non-empty 1-D array [N], got shape {a.shape}.")
    if not np.issubdtype(a.dtype, np.number) or not np.all(np.isfinite(a)):
        raise InputError(f"{name} must be finite real numbers; compute them with ood_scores().")
    return a.astype(np.float64)


def ood_detection(id_scores: Any, ood_scores: Any) -> OODResult:
    """AUROC, AUPR and FPR@95%TPR for separating OOD (positive) from in-domain by score."""
    s_id = _check_scores(id_scores, "id_scores")  # [N_id]
    s_ood = _check_scores(ood_scores, "ood_scores")  # [N_ood]
    y = np.concatenate([np.zeros(len(s_id)), np.ones(len(s_ood))])  # [N_id + N_ood]
    s = np.concatenate([s_id, s_ood])  # [N_id + N_ood]
    # Keep every threshold: dropping collinear points could skip the first one reaching 95% TPR.
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)  # [K], [K]
    return OODResult(
        auroc=float(roc_auc_score(y, s)),
        aupr=float(average_precision_score(y, s)),
        fpr_at_95_tpr=float(fpr[np.argmax(tpr >= 0.95)]),
        roc_fpr=fpr,
        roc_tpr=tpr,
    )


def summarize(probs: Any, labels: Any) -> dict[str, float]:
    """All scalar metrics of a sampled evaluation as plain (JSON-serialisable) floats.

    Keys: accuracy_mean, accuracy_std, nll, brier, ece, aece (adaptive), aurc and
    accuracy_at_80_coverage (selective prediction on the mean prediction), mean_entropy,
    mean_expected_entropy, mean_mutual_information, mean_variance (of p(gold)), macro_f1_mean,
    macro_f1_std; plus mcc_mean, mcc_std when C == 2.
    """
    p = _check_probs(probs)  # [T, N, C]
    y = _check_labels(labels, *p.shape[1:])  # [N]
    mean_p = p.mean(axis=0)  # [N, C]
    out = dict(zip(("accuracy_mean", "accuracy_std"), sampled_accuracy(p, y), strict=True))
    out |= {
        "nll": nll(mean_p, y),
        "brier": brier(mean_p, y),
        "ece": ece(mean_p, y),
        "aece": adaptive_ece(mean_p, y),
        "mean_entropy": float(predictive_entropy(p).mean()),
        "mean_expected_entropy": float(expected_entropy(p).mean()),
        "mean_mutual_information": float(mutual_information(p).mean()),
        "mean_variance": float(table3_stats(p, y).p_gold_var.mean()),
    }
    rc = risk_coverage(mean_p, y)
    out |= {"aurc": rc.aurc, "accuracy_at_80_coverage": rc.accuracy_at(0.8)}
    out["macro_f1_mean"], out["macro_f1_std"] = sampled_macro_f1(p, y)
    if p.shape[2] == 2:
        out["mcc_mean"], out["mcc_std"] = sampled_mcc(p, y)
    return out


def accuracy(mean_probs: Any, labels: Any) -> float:
    """Accuracy of the mean prediction: the share of rows whose arg-max is the label."""
    p = _check_mean_probs(mean_probs)  # [N, C]
    y = _check_labels(labels, *p.shape)  # [N]
    return float((p.argmax(axis=1) == y).mean())


def macro_f1(mean_probs: Any, labels: Any) -> float:
    """Macro-averaged F1 of the mean prediction over all C classes (a class never predicted
    nor present counts 0): scikit-learn's ``f1_score(average="macro", zero_division=0)``,
    counted here with numpy because a bootstrap calls it a thousand times (sklearn's checks
    cost ~4 ms a call; the test holds the two equal)."""
    p = _check_mean_probs(mean_probs)  # [N, C]
    y = _check_labels(labels, *p.shape)  # [N]
    c = p.shape[1]
    pred = p.argmax(axis=1)  # [N]
    hits = np.bincount(y[pred == y], minlength=c)  # [C] true positives
    both = np.bincount(pred, minlength=c) + np.bincount(y, minlength=c)  # [C] 2TP + FP + FN
    f1 = np.divide(2 * hits, both, out=np.zeros(c), where=both > 0)  # [C]
    return float(f1.mean())


@dataclass(frozen=True)
class Interval:
    """A metric's ``value`` on all rows and its percentile bootstrap interval ``[low, high]``
    at ``level`` (rows resampled with replacement ``resamples`` times)."""

    value: float
    low: float
    high: float
    level: float
    resamples: int


BOOTSTRAP_RESAMPLES = 1000


def bootstrap_interval(
    metric: Any,
    mean_probs: Any,
    labels: Any,
    *,
    level: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """``metric(mean_probs, labels)`` (e.g. :func:`accuracy`, :func:`ece`, :func:`macro_f1`)
    with a percentile bootstrap interval over the rows, by ``scipy.stats.bootstrap`` (paired
    rows, the generator seeded by ``seed``: the same inputs give the same interval)."""
    from scipy.stats import bootstrap

    p = _check_mean_probs(mean_probs)  # [N, C]
    y = _check_labels(labels, *p.shape)  # [N]
    if not 0 < level < 1:
        raise InputError(f"level must be in (0, 1), got {level}.")
    if not isinstance(resamples, int) or resamples < 2:
        raise InputError(f"resamples must be an integer >= 2, got {resamples!r}.")
    value = float(metric(p, y))
    if len(y) < 2:  # nothing to resample: the interval is the value
        return Interval(value, value, value, level, resamples)
    got = bootstrap(
        (np.arange(len(y)),),
        lambda rows: metric(p[rows], y[rows]),
        n_resamples=resamples,
        confidence_level=level,
        method="percentile",
        vectorized=False,
        rng=np.random.default_rng(seed),
    )
    low, high = (float(v) for v in (got.confidence_interval.low, got.confidence_interval.high))
    if not (np.isfinite(low) and np.isfinite(high)):  # every resample equal: no spread
        low = high = value
    return Interval(value, low, high, level, resamples)


CONFORMAL_METHODS: tuple[str, ...] = ("lac", "aps")
TIE = 1e-12  # a score this close above the threshold still counts as within it (float rounding)


def _conformal_scores(mean_probs: np.ndarray, method: str) -> np.ndarray:
    """Non-conformity of every class for every example ``[N, C]``: LAC ``1 - p_c``; APS the
    total probability of the classes at least as likely as ``c`` (``c`` included)."""
    if method == "lac":
        return 1.0 - mean_probs
    order = np.argsort(-mean_probs, axis=1, kind="stable")  # [N, C] most likely first
    cum = np.cumsum(np.take_along_axis(mean_probs, order, axis=1), axis=1)  # [N, C]
    out = np.empty_like(mean_probs)
    np.put_along_axis(out, order, cum, axis=1)
    return out


@dataclass(frozen=True)
class ConformalSets:
    """Split conformal prediction: ``threshold`` calibrated on held-out data so that the sets
    ``{c : score_c(x) <= threshold}`` hold the true label with probability at least
    ``coverage`` (for exchangeable data)."""

    method: str
    coverage: float
    threshold: float

    def sets(self, mean_probs: Any) -> np.ndarray:
        """Membership ``[N, C]`` (bool) of every class in every example's set."""
        p = _check_mean_probs(mean_probs)
        return _conformal_scores(p, self.method) <= self.threshold + TIE


def _check_coverage(coverage: Any) -> None:
    if isinstance(coverage, bool) or not 0.0 < float(coverage) < 1.0:
        raise InputError(f"coverage must be strictly between 0 and 1, got {coverage!r}.")


def conformal_calibrate(
    mean_probs: Any, labels: Any, coverage: float = 0.9, method: str = "lac"
) -> ConformalSets:
    """Split conformal (Vovk et al.; Angelopoulos & Bates' tutorial): the threshold is the
    ``ceil((n + 1) coverage)``-th smallest of the true labels' scores on the calibration data
    (dev; every class when there are too few examples). LAC (Sadinle et al., 2019) gives the
    smallest sets on average; APS (Romano et al., 2020, without the randomisation) adapts the
    set size to the example's difficulty. Written
    here: MAPIE and TorchCP wrap estimators or torch models, while these are fixed probabilities
    averaged over samples."""
    _check_coverage(coverage)
    return conformal_from_scores(calibration_scores(mean_probs, labels, method), coverage, method)


def calibration_scores(mean_probs: Any, labels: Any, method: str = "lac") -> np.ndarray:
    """The true labels' non-conformity scores on calibration data, ascending ``[N]``: all a
    split-conformal threshold needs, at any coverage (:func:`conformal_from_scores`)."""
    if method not in CONFORMAL_METHODS:
        raise InputError(f"unknown conformal method {method!r}; choose lac or aps.")
    p = _check_mean_probs(mean_probs)
    y = _check_labels(labels, *p.shape)
    return np.sort(_conformal_scores(p, method)[np.arange(len(y)), y])


def conformal_from_scores(scores: Any, coverage: float, method: str = "lac") -> ConformalSets:
    """:class:`ConformalSets` from stored calibration scores (:func:`calibration_scores`)."""
    _check_coverage(coverage)
    s = np.sort(_to_numpy(scores).astype(np.float64))
    if s.ndim != 1 or s.size == 0:
        raise InputError("calibration scores must be a non-empty list of numbers.")
    k = int(np.ceil((len(s) + 1) * float(coverage)))  # the k-th smallest score
    threshold = float(s[k - 1]) if k <= len(s) else float("inf")
    return ConformalSets(method=method, coverage=float(coverage), threshold=threshold)


def conformal_summary(sets: np.ndarray, labels: Any) -> dict[str, float]:
    """Empirical coverage, mean set size and the share of sets with more than one class."""
    s = np.asarray(sets, dtype=bool)  # [N, C]
    y = _check_labels(labels, len(s), s.shape[1])
    return {
        "coverage": float(s[np.arange(len(y)), y].mean()),
        "mean_size": float(s.sum(1).mean()),
        "ambiguous": float((s.sum(1) > 1).mean()),
    }


@dataclass(frozen=True)
class ResampledCoverage:
    """Coverage of split-conformal sets over random re-splits of held-out data: ``mean`` and
    the 5th / 95th percentiles ``low`` / ``high`` over ``splits`` splits into ``n_cal``
    calibration and ``n_eval`` evaluation examples."""

    mean: float
    low: float
    high: float
    splits: int
    n_cal: int
    n_eval: int

    def as_dict(self) -> dict[str, float | int]:
        """The fields as a plain dict (metrics.json)."""
        return asdict(self)


def resampled_coverage(
    cal_scores: Any, eval_scores: Any, coverage: float = 0.9, splits: int = 1000, seed: int = 0
) -> ResampledCoverage:
    """The coverage split conformal promises, checked as Angelopoulos & Bates' tutorial does
    (section 2, "checking coverage"): pool the true labels' scores of the calibration data and
    of the evaluation data (:func:`calibration_scores`; both held out from training), draw
    ``splits`` random splits of the pool with the original sizes, calibrate on one part
    (:func:`conformal_from_scores`) and measure coverage on the other. For exchangeable data
    the mean lies in ``[coverage, coverage + 1 / (n_cal + 1)]`` (without ties); one split's
    coverage scatters around it (one draw is what the dev -> test figure is)."""
    _check_coverage(coverage)
    cal = _to_numpy(cal_scores).astype(np.float64).ravel()
    held = _to_numpy(eval_scores).astype(np.float64).ravel()
    if cal.size == 0 or held.size == 0 or splits < 1:
        raise InputError(
            "resampled coverage needs calibration and evaluation scores and at least one split."
        )
    pool = np.concatenate([cal, held])  # [n]
    rng = np.random.default_rng(seed)
    got = np.empty(splits)
    for i in range(splits):
        order = rng.permutation(pool.size)
        threshold = conformal_from_scores(pool[order[: cal.size]], coverage).threshold
        got[i] = np.mean(pool[order[cal.size :]] <= threshold + TIE)
    return ResampledCoverage(
        mean=float(got.mean()),
        low=float(np.quantile(got, 0.05)),
        high=float(np.quantile(got, 0.95)),
        splits=splits,
        n_cal=int(cal.size),
        n_eval=int(held.size),
    )


@dataclass(frozen=True)
class Mahalanobis:
    """Class means ``[C, D]`` and the shared precision ``[D, D]`` of training features: the
    distance baseline of Lee et al. (2018), strong on a pretrained encoder's features under
    domain shift (Uppaal et al., 2023)."""

    means: np.ndarray
    precision: np.ndarray

    def scores(self, features: Any) -> np.ndarray:
        """Per-example OOD score ``min_c (x - mu_c)^T P (x - mu_c)``, higher = more likely OOD."""
        x = _to_numpy(features).astype(np.float64)  # [N, D]
        diff = x[:, None, :] - self.means[None]  # [N, C, D]
        return np.einsum("ncd,de,nce->nc", diff, self.precision, diff).min(axis=1)


def fit_mahalanobis(features: Any, labels: Any) -> Mahalanobis:
    """Fit :class:`Mahalanobis` on training features ``[N, D]``: the covariance of the features
    around their class means, shared by the classes (scikit-learn's ``EmpiricalCovariance`` on
    the centred features; its pseudo-inverse as the precision)."""
    from sklearn.covariance import EmpiricalCovariance

    x = _to_numpy(features).astype(np.float64)
    if x.ndim != 2 or not np.all(np.isfinite(x)):
        raise InputError(f"features must be finite, shaped [N, D]; got shape {x.shape}.")
    y = _to_numpy(labels).astype(np.int64)
    classes = np.unique(y)
    means = np.stack([x[y == c].mean(axis=0) for c in classes])  # [C, D]
    centred = x - means[np.searchsorted(classes, y)]  # [N, D]
    cov = EmpiricalCovariance(assume_centered=True, store_precision=True).fit(centred)
    return Mahalanobis(means=means, precision=cov.precision_)
