"""What an uncertainty flags: the model's own errors, and out-of-domain texts at equal length.

``error_detection(probs, labels)`` scores each uncertainty of :data:`uqcore.stats.OOD_SCORES`
(1 - max p, predictive entropy, mutual information, variance) as a detector of the mean
prediction's errors: AUROC with the errors as positives (scikit-learn's ``roc_auc_score``; None
when every prediction is right or every one is wrong) and AURC, the mean error rate when the
examples are kept most-certain-first by that score (ties in input order; for ``max_prob`` this is
:func:`uqcore.stats.risk_coverage`'s AURC).

``detection_by_length`` answers "is the out-of-domain AUROC a length effect?": it splits the
in-domain and out-of-domain examples into bins of the number of tokens read and scores each bin
alone. A score that separates the domains overall but not within a bin is measuring length.

An AUROC below 0.5 means the score ranks backwards (the errors, or the out-of-domain texts, get
*lower* uncertainty): :func:`backwards` says so in words a page can show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score

from uqcore.exceptions import InputError
from uqcore.stats import OOD_SCORES, ood_scores
from uqcore.stats.checks import check_labels, check_probs

MIN_PER_SIDE = 20  # a length bin is scored only with this many examples of each domain


def _auroc(positive: np.ndarray, score: np.ndarray) -> float | None:
    """AUROC of ``score`` for the ``positive`` rows (bool [N]); None when one side is empty."""
    if positive.all() or not positive.any():
        return None
    return float(roc_auc_score(positive, score))


def error_detection(probs: Any, labels: Any) -> dict[str, dict]:
    """Per score of :data:`OOD_SCORES`: ``{"auroc": float | None, "aurc": float}`` for detecting
    the errors of the mean prediction of ``probs [T, N, C]``, plus ``"errors"`` (their count)
    and ``"n"`` (rows)."""
    p = check_probs(probs)  # [T, N, C]
    y = check_labels(labels, *p.shape[1:])  # [N]
    wrong = p.mean(axis=0).argmax(axis=-1) != y  # [N] bool
    k = np.arange(1, len(y) + 1)  # [N]
    out: dict[str, Any] = {"errors": int(wrong.sum()), "n": int(len(y))}
    for name in OOD_SCORES:
        score = ood_scores(p, name)  # [N], higher = less certain
        order = np.argsort(score, kind="stable")  # most certain first
        risk = np.cumsum(wrong[order]) / k  # [N]
        out[name] = {"auroc": _auroc(wrong, score), "aurc": float(risk.mean())}
    return out


@dataclass(frozen=True)
class LengthBin:
    """Tokens read in ``[lo, hi)``; ``n_id`` / ``n_ood`` examples of each domain; ``auroc`` of
    the score within the bin (None with fewer than :data:`MIN_PER_SIDE` on a side)."""

    lo: int
    hi: int
    n_id: int
    n_ood: int
    auroc: float | None

    def as_dict(self) -> dict:
        return {
            "tokens": [self.lo, self.hi],
            "id": self.n_id,
            "ood": self.n_ood,
            "auroc": self.auroc,
        }


def length_edges(read_len: int) -> list[int]:
    """Bin edges for texts read at up to ``read_len`` tokens: powers of two from 8 below it,
    then ``read_len`` and ``read_len + 1``, so the last bin holds exactly the texts that were
    cut at the read length."""
    if not isinstance(read_len, int) or read_len < 2:
        raise InputError(f"read_len must be an integer >= 2, got {read_len!r}.")
    edges = [0] + [2**k for k in range(3, 40) if 2**k < read_len]
    return edges + [read_len, read_len + 1]


def detection_by_length(
    id_scores: Any, ood_scores_: Any, id_lengths: Any, ood_lengths: Any, edges: list[int]
) -> list[LengthBin]:
    """OOD detection (out-of-domain positive, higher score = more likely OOD) within each bin
    ``[edges[i], edges[i + 1])`` of tokens read. Scores and lengths are 1-D, paired per domain."""
    s_id, s_ood = (np.asarray(a, dtype=np.float64) for a in (id_scores, ood_scores_))
    n_id, n_ood = (np.asarray(a, dtype=np.int64) for a in (id_lengths, ood_lengths))
    if s_id.shape != n_id.shape or s_ood.shape != n_ood.shape or s_id.ndim != 1:
        raise InputError("scores and lengths must be 1-D and of the same size per domain.")
    bins = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        a = s_id[(n_id >= lo) & (n_id < hi)]  # [n_a]
        b = s_ood[(n_ood >= lo) & (n_ood < hi)]  # [n_b]
        auroc = None
        if min(len(a), len(b)) >= MIN_PER_SIDE:
            auroc = float(roc_auc_score(np.r_[np.zeros(len(a)), np.ones(len(b))], np.r_[a, b]))
        bins.append(LengthBin(lo, hi, len(a), len(b), auroc))
    return bins


def backwards(auroc: float | None, what: str) -> str | None:
    """A sentence for an AUROC below 0.5 as shown (three decimals: 0.4996 reads 0.500 and is
    not called backwards), ``what`` naming the positives ("out-of-domain texts", "errors");
    else None."""
    if auroc is None or round(auroc, 3) >= 0.5:
        return None
    return (
        f"AUROC {auroc:.3f} is below 0.5: this score ranks backwards. It gives the {what} "
        "lower uncertainty than the rest, so flagging the most uncertain finds them less "
        "often than chance would."
    )
