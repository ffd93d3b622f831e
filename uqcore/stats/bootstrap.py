"""A metric of the mean prediction with its percentile bootstrap interval over the rows."""

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
