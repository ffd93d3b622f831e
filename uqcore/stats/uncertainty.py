"""How unsure the sampled predictions are: the paper's Table 3 statistics of the gold label, the
predictive and expected entropies, their difference (the mutual information) and the variance
over the samples, per example, in nats."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import xlogy

from uqcore.stats.checks import check_labels, check_probs


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


def _entropy(p: np.ndarray) -> np.ndarray:
    """Entropy over the last axis with 0 * log 0 = 0 (xlogy), never NaN."""
    return -np.sum(xlogy(p, p), axis=-1)


def table3_stats(probs: Any, labels: Any) -> Table3Stats:
    """Table 3 statistics: mean/variance over T of p_t(y) and how many samples predict y."""
    p = check_probs(probs)  # [T, N, C]
    y = check_labels(labels, *p.shape[1:])  # [N]
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
    p = check_probs(probs)  # [T, N, C]
    return _entropy(p.mean(axis=0))  # [N]


def expected_entropy(probs: Any) -> np.ndarray:
    """Mean over T of the per-sample entropy, mean_t H[p_t] (aleatoric part). Returns [N]."""
    p = check_probs(probs)  # [T, N, C]
    return _entropy(p).mean(axis=0)  # [N]


def mutual_information(probs: Any) -> np.ndarray:
    """Predictive minus expected entropy (epistemic part), clipped at 0. Returns [N].

    Exactly 0 where all T samples agree bit for bit (a deterministic model), where the two entropies
    would otherwise differ by rounding (~1e-17).
    """
    p = check_probs(probs)  # [T, N, C]
    mi = _entropy(p.mean(axis=0)) - _entropy(p).mean(axis=0)  # [N]
    mi[_constant_over_samples(p)] = 0.0
    return np.maximum(mi, 0.0)


def _constant_over_samples(p: np.ndarray) -> np.ndarray:
    """[T, N, C] -> [N] bool: True where every sample equals the first one exactly."""
    return (p == p[:1]).all(axis=(0, 2))


def predictive_variance(probs: Any, labels: Any = None) -> np.ndarray:
    """Population variance over T of p_t(k); k = gold label if given, else argmax of mean. [N]"""
    p = check_probs(probs)  # [T, N, C]
    n = p.shape[1]
    k = p.mean(axis=0).argmax(-1) if labels is None else check_labels(labels, *p.shape[1:])  # [N]
    var = p[:, np.arange(n), k].var(axis=0)  # [N]
    var[_constant_over_samples(p)] = 0.0
    return var
