"""The input checks every statistic shares: sampled probabilities ``[T, N, C]``, mean
probabilities ``[N, C]`` and integer labels ``[N]`` (numpy arrays or torch tensors), turned into
float64 / int64 numpy arrays or refused with an :class:`uqcore.exceptions.InputError` saying what to
do."""

from __future__ import annotations

from typing import Any

import numpy as np

from uqcore.exceptions import InputError

_RANGE_SLACK = 1e-5  # probabilities may stray this far outside [0, 1]
_SUM_TOL = 1e-3  # class probabilities must sum to 1 within this


def to_numpy(x: Any) -> np.ndarray:
    """``x`` as a numpy array; a torch tensor is detached and moved to the CPU first."""
    return np.asarray(x.detach().cpu() if hasattr(x, "detach") else x)  # torch tensors too


def _check_prob_values(p: np.ndarray, name: str) -> np.ndarray:
    """Real, finite values in [0, 1] (within ``_RANGE_SLACK``, then clipped) whose rows sum to 1."""
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


def check_probs(probs: Any) -> np.ndarray:
    """Sampled probabilities ``[T, N, C]`` (T, N >= 1, C >= 2) as float64, or InputError."""
    p = to_numpy(probs)
    if p.ndim != 3 or p.shape[0] < 1 or p.shape[1] < 1 or p.shape[2] < 2:
        raise InputError(
            f"probs must be 3-D [T, N, C] (samples, examples, classes) with T >= 1, N >= 1 and "
            f"C >= 2, got shape {p.shape}; add a leading sample axis for one run (probs[None])."
        )
    return _check_prob_values(p, "probs")  # [T, N, C]


def check_mean_probs(mean_probs: Any) -> np.ndarray:
    """Mean probabilities ``[N, C]`` (N >= 1, C >= 2) as float64, or InputError."""
    p = to_numpy(mean_probs)
    if p.ndim != 2 or p.shape[0] < 1 or p.shape[1] < 2:
        raise InputError(
            f"mean_probs must be 2-D [N, C] with N >= 1 and C >= 2, got shape {p.shape}; "
            "average sampled probabilities over the sample axis first (probs.mean(0))."
        )
    return _check_prob_values(p, "mean_probs")  # [N, C]


def check_labels(labels: Any, n: int, c: int) -> np.ndarray:
    """Integer labels ``[n]`` in ``[0, c)`` as int64, or InputError."""
    y = to_numpy(labels)
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
