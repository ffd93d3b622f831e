"""A metric of the mean prediction with its percentile bootstrap interval over the rows, and the
paired difference of one metric between two models scored on the same rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from uqcore.exceptions import InputError
from uqcore.stats.checks import check_labels, check_mean_probs


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


def _check_settings(level: float, resamples: int) -> None:
    """``level`` in (0, 1) and ``resamples`` an integer >= 2, or InputError."""
    if not 0 < level < 1:
        raise InputError(f"level must be in (0, 1), got {level}.")
    if not isinstance(resamples, int) or resamples < 2:
        raise InputError(f"resamples must be an integer >= 2, got {resamples!r}.")


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

    p = check_mean_probs(mean_probs)  # [N, C]
    y = check_labels(labels, *p.shape)  # [N]
    _check_settings(level, resamples)
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


@dataclass(frozen=True)
class PairedInterval:
    """A metric of model A and of model B on the same rows, ``difference`` = B - A, and the
    percentile bootstrap interval ``[low, high]`` of that difference at ``level``: each of the
    ``resamples`` draws resamples the rows once and scores both models on them (paired)."""

    a: float
    b: float
    difference: float
    low: float
    high: float
    level: float
    resamples: int


def paired_bootstrap(
    metric: Any,
    probs_a: Any,
    probs_b: Any,
    labels: Any,
    *,
    level: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> PairedInterval:
    """``metric(probs_b, labels) - metric(probs_a, labels)`` (mean predictions ``[N, C]`` of two
    models on the same rows) with a paired percentile bootstrap interval: draw ``i`` takes the
    rows ``numpy.random.default_rng(seed).integers(0, N, N)`` (the ``i``-th call) for both
    models. Written here rather than through ``scipy.stats.bootstrap`` so that the draws are
    stated, and a plain loop over them gives the same interval (tests/uqcore/stats)."""
    pa, pb = check_mean_probs(probs_a), check_mean_probs(probs_b)  # [N, C] each
    if pa.shape != pb.shape:
        raise InputError(
            f"both models must be scored on the same rows: shapes {pa.shape} and {pb.shape}."
        )
    y = check_labels(labels, *pa.shape)  # [N]
    _check_settings(level, resamples)
    a, b = float(metric(pa, y)), float(metric(pb, y))
    n = len(y)
    if n < 2:  # nothing to resample: the interval is the value
        return PairedInterval(a, b, b - a, b - a, b - a, level, resamples)
    rng = np.random.default_rng(seed)
    diffs = np.empty(resamples)  # [R]
    for i in range(resamples):
        rows = rng.integers(0, n, n)  # [N] one draw, both models
        diffs[i] = float(metric(pb[rows], y[rows])) - float(metric(pa[rows], y[rows]))
    tail = (1 - level) / 2 * 100
    low, high = (float(v) for v in np.percentile(diffs, [tail, 100 - tail]))
    return PairedInterval(a, b, b - a, low, high, level, resamples)
