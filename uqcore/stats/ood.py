"""Out-of-domain detection: per-example scores from sampled probabilities, from logits or from
features (Mahalanobis), and how well a score separates OOD from in-domain examples."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

from uqcore.exceptions import InputError
from uqcore.stats.checks import check_probs, to_numpy
from uqcore.stats.uncertainty import mutual_information, predictive_entropy, predictive_variance

OOD_SCORES: tuple[str, ...] = ("max_prob", "entropy", "mutual_information", "variance")


@dataclass(frozen=True)
class OODResult:
    """OOD detection quality with OOD as the positive class (higher score = more likely OOD)."""

    auroc: float
    aupr: float
    fpr_at_95_tpr: float  # in-domain FPR at the first threshold where OOD TPR >= 0.95
    roc_fpr: np.ndarray  # [K]
    roc_tpr: np.ndarray  # [K]
    roc_thresholds: np.ndarray | None = None  # [K] point k flags the scores >= threshold k


def ood_scores(probs: Any, score: str) -> np.ndarray:
    """Per-example OOD score, higher = more likely OOD. ``score`` is one of :data:`OOD_SCORES`.

    "max_prob" = 1 - max of the mean prob; "entropy" = predictive entropy; "mutual_information";
    "variance" = :func:`predictive_variance` of the predicted class. Returns [N].
    """
    if score not in OOD_SCORES:
        raise InputError(f"unknown OOD score {score!r}; choose one of {', '.join(OOD_SCORES)}.")
    if score == "max_prob":
        return 1.0 - check_probs(probs).mean(axis=0).max(axis=-1)  # [N]
    if score == "entropy":
        return predictive_entropy(probs)
    if score == "mutual_information":
        return mutual_information(probs)
    return predictive_variance(probs)


LOGIT_SCORES: tuple[str, ...] = ("max_logit", "energy")  # OOD scores read from logits


def logit_scores(logits: Any, score: str) -> np.ndarray:
    """Per-example OOD score from sampled logits ``[T, N, C]`` (averaged over the samples),
    higher = more likely OOD: "max_logit" = minus the largest mean logit (Hendrycks et al.,
    2022); "energy" = minus the log-sum-exp of the mean logits (Liu et al., 2020). Returns [N]."""
    if score not in LOGIT_SCORES:
        raise InputError(f"unknown logit score {score!r}; choose one of {', '.join(LOGIT_SCORES)}.")
    z = to_numpy(logits).astype(np.float64)
    if z.ndim != 3 or not np.all(np.isfinite(z)):
        raise InputError(f"logits must be finite, shaped [T, N, C]; got shape {z.shape}.")
    mean = z.mean(axis=0)  # [N, C]
    if score == "max_logit":
        return -mean.max(axis=-1)
    top = mean.max(axis=-1, keepdims=True)  # [N, 1]
    return -(top[:, 0] + np.log(np.exp(mean - top).sum(axis=-1)))


def _check_scores(s: Any, name: str) -> np.ndarray:
    a = to_numpy(s)
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
    fpr, tpr, thresholds = roc_curve(y, s, drop_intermediate=False)  # [K] each
    return OODResult(
        auroc=float(roc_auc_score(y, s)),
        aupr=float(average_precision_score(y, s)),
        fpr_at_95_tpr=float(fpr[np.argmax(tpr >= 0.95)]),
        roc_fpr=fpr,
        roc_tpr=tpr,
        roc_thresholds=thresholds,
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
        x = to_numpy(features).astype(np.float64)  # [N, D]
        diff = x[:, None, :] - self.means[None]  # [N, C, D]
        return np.einsum("ncd,de,nce->nc", diff, self.precision, diff).min(axis=1)


def fit_mahalanobis(features: Any, labels: Any) -> Mahalanobis:
    """Fit :class:`Mahalanobis` on training features ``[N, D]``: the covariance of the features
    around their class means, shared by the classes (scikit-learn's ``EmpiricalCovariance`` on
    the centred features; its pseudo-inverse as the precision)."""
    from sklearn.covariance import EmpiricalCovariance

    x = to_numpy(features).astype(np.float64)
    if x.ndim != 2 or not np.all(np.isfinite(x)):
        raise InputError(f"features must be finite, shaped [N, D]; got shape {x.shape}.")
    y = to_numpy(labels).astype(np.int64)
    classes = np.unique(y)
    means = np.stack([x[y == c].mean(axis=0) for c in classes])  # [C, D]
    centred = x - means[np.searchsorted(classes, y)]  # [N, D]
    cov = EmpiricalCovariance(assume_centered=True, store_precision=True).fit(centred)
    return Mahalanobis(means=means, precision=cov.precision_)
