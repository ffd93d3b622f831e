"""Tests of the statistics package uqcore/stats/ (one file per module) and their shared helper."""

from __future__ import annotations

import numpy as np


def random_probs(t: int, n: int, c: int, seed: int = 0) -> np.ndarray:
    """Softmax of seeded normal logits (scale 2): random sampled probabilities ``[t, n, c]``."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(t, n, c)) * 2.0  # [T, N, C]
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
