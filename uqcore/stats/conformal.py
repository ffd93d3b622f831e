"""Split conformal prediction sets (LAC and APS) over mean probabilities: calibration on held-out
data, the sets, their empirical coverage and size, and coverage over random re-splits."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from uqcore.exceptions import InputError
from uqcore.stats.checks import check_labels, check_mean_probs, to_numpy

CONFORMAL_METHODS: tuple[str, ...] = ("lac", "aps")
TIE = 1e-12  # a score this close above the threshold still counts as within it (float rounding)


def _conformal_scores(mean_probs: np.ndarray, method: str) -> np.ndarray:
    """Non-conformity of every class for every example ``[N, C]``: LAC ``1 - p_c``; APS the
    total probability of the classes at least as likely as ``c`` (``c`` included)."""
    if method == "lac":
        return 1.0 - mean_probs
    p = mean_probs.astype(np.float64)
    p = p / p.sum(axis=1, keepdims=True)  # [N, C]
    order = np.argsort(-p, axis=1, kind="stable")  # [N, C] most likely first
    cum = np.minimum(np.cumsum(np.take_along_axis(p, order, axis=1), axis=1), 1.0)  # [N, C]
    # the least likely class holds the whole mass: exactly 1, whatever the float rounding. A
    # float32 sum lands 1e-7 either side of 1, and with a threshold at that mass (over 10 % of
    # dev misclassified at 90 % coverage) rounding alone decided which sets held both classes:
    # a re-run changing logits in the 8th digit moved CoLA's APS coverage 0.934 -> 0.892
    cum[:, -1] = 1.0
    out = np.empty_like(p)
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
        p = check_mean_probs(mean_probs)
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
    p = check_mean_probs(mean_probs)
    y = check_labels(labels, *p.shape)
    return np.sort(_conformal_scores(p, method)[np.arange(len(y)), y])


def conformal_from_scores(scores: Any, coverage: float, method: str = "lac") -> ConformalSets:
    """:class:`ConformalSets` from stored calibration scores (:func:`calibration_scores`)."""
    _check_coverage(coverage)
    s = np.sort(to_numpy(scores).astype(np.float64))
    if s.ndim != 1 or s.size == 0:
        raise InputError("calibration scores must be a non-empty list of numbers.")
    k = int(np.ceil((len(s) + 1) * float(coverage)))  # the k-th smallest score
    threshold = float(s[k - 1]) if k <= len(s) else float("inf")
    return ConformalSets(method=method, coverage=float(coverage), threshold=threshold)


def conformal_summary(sets: np.ndarray, labels: Any) -> dict[str, float]:
    """Empirical coverage, mean set size and the share of sets with more than one class."""
    s = np.asarray(sets, dtype=bool)  # [N, C]
    y = check_labels(labels, len(s), s.shape[1])
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
    cal = to_numpy(cal_scores).astype(np.float64).ravel()
    held = to_numpy(eval_scores).astype(np.float64).ravel()
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
