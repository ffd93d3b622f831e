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

``length_matched`` draws the two domains to one histogram of tokens read (bins of
:data:`MATCH_WIDTH` tokens, one: equal lengths; the texts cut at the read length a bin of their
own): in each bin both sides keep as many texts as the smaller side holds, drawn at random with a
seed. An AUROC on the matched rows cannot come from length. Where the lengths do not overlap
(fewer than :data:`MIN_PER_SIDE` a side), there is no matched figure, and the report says why.

``paired_auroc_difference`` answers "does this uncertainty beat the plain baseline on the same
rows?": the AUROC of a score minus the AUROC of 1 - max p, with a percentile bootstrap interval
over the rows (resampled within each class, together for both scores) and a verdict, better /
tie / worse, from whether the interval excludes 0.
``paired_models_difference`` asks it across two models on the same rows, each scoring its own
errors: does this family's uncertainty find its errors better than the deterministic model's
1 - max p finds that model's?

An AUROC below 0.5 means the score ranks backwards (the errors, or the out-of-domain texts, get
*lower* uncertainty): :func:`backwards` says so in words a page can show.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

from uqcore.exceptions import InputError
from uqcore.stats import OOD_SCORES, ood_scores
from uqcore.stats.checks import check_labels, check_probs

MIN_PER_SIDE = 20  # a length bin is scored only with this many examples of each domain
# tokens: the width of the bins both domains are drawn to in length_matched. One: equal
# lengths. With 8-token bins, sentences (mean 14 tokens) against reviews (mean 40) kept a
# length AUROC of 0.85 inside the matched set on synthetic Poisson lengths (each side at its
# own end of the shared bins).
MATCH_WIDTH = 1
VERDICT_LEVEL = 0.95
VERDICT_RESAMPLES = 1000


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


def matching_edges(read_len: int, width: int = MATCH_WIDTH) -> list[int]:
    """Bin edges every ``width`` tokens below ``read_len``, then ``read_len`` and
    ``read_len + 1`` (the texts cut at the read length form a bin of their own)."""
    if not isinstance(read_len, int) or read_len < 2:
        raise InputError(f"read_len must be an integer >= 2, got {read_len!r}.")
    if not isinstance(width, int) or width < 1:
        raise InputError(f"width must be an integer >= 1, got {width!r}.")
    return [*range(0, read_len, width), read_len, read_len + 1]


@dataclass(frozen=True)
class MatchedSet:
    """The rows of each domain kept by :func:`length_matched` (sorted indices into the inputs)
    and how many each bin of ``edges`` kept per side; ``n`` rows a side."""

    id_rows: np.ndarray  # [n] int
    ood_rows: np.ndarray  # [n] int
    edges: list[int]
    per_bin: list[int]

    @property
    def n(self) -> int:
        return len(self.id_rows)


def length_matched(
    id_lengths: Any, ood_lengths: Any, edges: list[int], seed: int = 0
) -> MatchedSet:
    """Both domains drawn to one length histogram: in each bin ``[edges[i], edges[i + 1])``
    each side keeps ``min(n_id, n_ood)`` of its texts there, chosen at random by ``seed`` (the
    same inputs give the same rows). Lengths outside every bin are dropped."""
    a, b = (np.asarray(x, dtype=np.int64) for x in (id_lengths, ood_lengths))
    if a.ndim != 1 or b.ndim != 1:
        raise InputError("lengths must be 1-D, one per text.")
    if len(edges) < 2 or any(hi <= lo for lo, hi in zip(edges[:-1], edges[1:], strict=True)):
        raise InputError("edges must be at least two increasing integers.")
    rng = np.random.default_rng(seed)
    keep_a: list[np.ndarray] = []
    keep_b: list[np.ndarray] = []
    per_bin = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        in_a = np.flatnonzero((a >= lo) & (a < hi))  # [n_a]
        in_b = np.flatnonzero((b >= lo) & (b < hi))  # [n_b]
        k = min(len(in_a), len(in_b))
        keep_a.append(rng.choice(in_a, k, replace=False) if k else in_a[:0])
        keep_b.append(rng.choice(in_b, k, replace=False) if k else in_b[:0])
        per_bin.append(k)
    return MatchedSet(
        np.sort(np.concatenate(keep_a)), np.sort(np.concatenate(keep_b)), edges, per_bin
    )


def _aurocs(positive: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """AUROC of each row of ``scores [B, N]`` for the ``positive`` columns (bool [N]) by the
    rank-sum (Mann-Whitney) formula, ties counted half: equal to ``roc_auc_score``."""
    ranks = rankdata(scores, axis=-1)  # [B, N], ties averaged
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    u = ranks[:, positive].sum(axis=-1) - n_pos * (n_pos + 1) / 2  # [B]
    return u / (n_pos * n_neg)


@dataclass(frozen=True)
class PairedDifference:
    """AUROC of a score and of the baseline (1 - max p) on the same rows, their difference and
    its percentile bootstrap interval ``[low, high]``; ``verdict`` "better" when the interval
    lies above 0, "worse" below, else "tie"."""

    score: float
    baseline: float
    difference: float
    low: float
    high: float
    level: float
    resamples: int

    @property
    def verdict(self) -> str:
        return "better" if self.low > 0 else "worse" if self.high < 0 else "tie"

    def as_dict(self) -> dict:
        return {
            "auroc": self.score,
            "baseline_auroc": self.baseline,
            "difference": self.difference,
            "interval": [self.low, self.high],
            "level": self.level,
            "resamples": self.resamples,
            "verdict": self.verdict,
        }


def bootstrap_rows(
    positive: Any, resamples: int, seed: int, chunk: int = 100
) -> Iterator[np.ndarray]:
    """``resamples`` bootstrap draws of the rows, ``chunk`` at a time (``[b, N]`` each: memory
    stays bounded on large files), each class resampled with replacement within itself, the
    positives first (every draw keeps both classes and their counts)."""
    y = np.asarray(positive, dtype=bool)
    return stratified_rows([np.flatnonzero(y), np.flatnonzero(~y)], resamples, seed, chunk)


def stratified_rows(
    strata: list[np.ndarray], resamples: int, seed: int, chunk: int = 100
) -> Iterator[np.ndarray]:
    """``resamples`` bootstrap draws ``[b, N]`` (``chunk`` at a time), each stratum (an array
    of row indices; together every row once) resampled with replacement within itself and laid
    out in the order given, so every draw keeps each stratum's count in the same columns."""
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, chunk):
        b = min(chunk, resamples - start)
        yield np.concatenate(
            [s[rng.integers(0, len(s), size=(b, len(s)))] for s in strata if len(s)], axis=1
        )


def _check_settings(level: float, resamples: int) -> None:
    """A bootstrap's ``level`` in (0, 1) and ``resamples`` an integer >= 2, or InputError."""
    if not 0 < level < 1:
        raise InputError(f"level must be in (0, 1), got {level}.")
    if not isinstance(resamples, int) or resamples < 2:
        raise InputError(f"resamples must be an integer >= 2, got {resamples!r}.")


def _percentile_interval(draws: np.ndarray, level: float) -> tuple[float, float]:
    """The central ``level`` percentile interval of the bootstrap ``draws`` [B]."""
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return float(low), float(high)


def paired_auroc_difference(
    positive: Any,
    score: Any,
    baseline: Any,
    *,
    level: float = VERDICT_LEVEL,
    resamples: int = VERDICT_RESAMPLES,
    seed: int = 0,
) -> PairedDifference | None:
    """AUROC(``score``) - AUROC(``baseline``) for the ``positive`` rows (bool [N]; higher score
    = more likely positive), both on the same rows of each bootstrap draw
    (:func:`bootstrap_rows`), with the percentile interval at ``level``. None when one class is
    empty (no AUROC)."""
    y = np.asarray(positive, dtype=bool)
    if y.ndim != 1 or np.shape(score) != y.shape or np.shape(baseline) != y.shape:
        raise InputError("positive, score and baseline must be 1-D and of one length.")
    # one model's positives for both: the four cells of paired_models_difference are the two
    # classes, drawn as bootstrap_rows draws them
    return paired_models_difference(
        y, score, y, baseline, level=level, resamples=resamples, seed=seed
    )


def auroc_interval(
    positive: Any,
    score: Any,
    *,
    level: float = VERDICT_LEVEL,
    resamples: int = VERDICT_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float, float] | None:
    """``(auroc, low, high)``: the AUROC of ``score`` for the ``positive`` rows and its
    percentile bootstrap interval at ``level`` (rows resampled within each class,
    :func:`bootstrap_rows`); None when one class is empty."""
    y = np.asarray(positive, dtype=bool)
    s = np.asarray(score, dtype=np.float64)
    if y.ndim != 1 or s.shape != y.shape:
        raise InputError("positive and score must be 1-D and of one length.")
    _check_settings(level, resamples)
    if y.all() or not y.any():
        return None
    y_b = np.r_[np.ones(int(y.sum()), bool), np.zeros(int((~y).sum()), bool)]  # a draw's layout
    got = np.concatenate([_aurocs(y_b, s[rows]) for rows in bootstrap_rows(y, resamples, seed)])
    low, high = _percentile_interval(got, level)
    return float(roc_auc_score(y, s)), low, high


def paired_models_difference(
    positive_a: Any,
    score_a: Any,
    positive_b: Any,
    score_b: Any,
    *,
    level: float = VERDICT_LEVEL,
    resamples: int = VERDICT_RESAMPLES,
    seed: int = 0,
) -> PairedDifference | None:
    """Two models on the same rows, each scoring its own positives (its own errors, say):
    AUROC(``score_a`` for ``positive_a``) - AUROC(``score_b`` for ``positive_b``), with the
    percentile interval at ``level`` over bootstrap draws of the rows that both are scored on
    (:func:`stratified_rows`, the four cells of (positive for A, positive for B) resampled
    within themselves, so every draw keeps both classes of both models). ``baseline`` of the
    result is B's AUROC. With one positive vector for both this is a stratified version of
    :func:`paired_auroc_difference`. None when either model has one class only."""
    ya, yb = (np.asarray(x, dtype=bool) for x in (positive_a, positive_b))
    sa, sb = (np.asarray(x, dtype=np.float64) for x in (score_a, score_b))
    if ya.ndim != 1 or any(x.shape != ya.shape for x in (yb, sa, sb)):
        raise InputError("positives and scores of both models must be 1-D and of one length.")
    _check_settings(level, resamples)
    if any(y.all() or not y.any() for y in (ya, yb)):
        return None
    cells = [np.flatnonzero((ya == a) & (yb == b)) for a in (True, False) for b in (True, False)]
    order = np.concatenate(cells)  # the columns of every draw, cell by cell
    ya_d, yb_d = ya[order], yb[order]  # [N] each: a draw's layout of both models' positives
    diffs = np.concatenate(
        [
            _aurocs(ya_d, sa[rows]) - _aurocs(yb_d, sb[rows])
            for rows in stratified_rows(cells, resamples, seed)
        ]
    )  # [B]
    low, high = _percentile_interval(diffs, level)
    a_a, a_b = float(roc_auc_score(ya, sa)), float(roc_auc_score(yb, sb))
    return PairedDifference(a_a, a_b, a_a - a_b, low, high, level, resamples)


def errors_versus_max_prob(probs: Any, labels: Any, seed: int = 0) -> dict[str, dict | None]:
    """Per score of :data:`OOD_SCORES` but 1 - max p: does it find the mean prediction's errors
    better than 1 - max p of the same samples? :meth:`PairedDifference.as_dict` (None when every
    prediction is right or every one wrong)."""
    p = check_probs(probs)  # [T, N, C]
    y = check_labels(labels, *p.shape[1:])  # [N]
    wrong = p.mean(axis=0).argmax(axis=-1) != y  # [N] bool
    base = ood_scores(p, "max_prob")  # [N]
    out: dict[str, dict | None] = {}
    for name in OOD_SCORES:
        if name != "max_prob":
            d = paired_auroc_difference(wrong, ood_scores(p, name), base, seed=seed)
            out[name] = None if d is None else d.as_dict()
    return out


def matched_ood_detection(
    id_probs: Any, ood_probs: Any, id_lengths: Any, ood_lengths: Any, read_len: int, seed: int = 0
) -> dict:
    """OOD detection with length held fixed: both domains drawn to one histogram of tokens read
    (:func:`length_matched`, bins of :data:`MATCH_WIDTH`), then the AUROC of every score of
    :data:`OOD_SCORES` (out-of-domain positive) and, for each but 1 - max p, its paired
    difference from 1 - max p. ``n_per_side`` texts a side of ``of`` ([in, out]); below
    :data:`MIN_PER_SIDE` no figure, and ``note`` says the lengths do not overlap."""
    a, b = check_probs(id_probs), check_probs(ood_probs)  # [T, N_id, C], [T, N_ood, C]
    m = length_matched(id_lengths, ood_lengths, matching_edges(read_len), seed)
    out: dict[str, Any] = {
        "n_per_side": m.n,
        "of": [a.shape[1], b.shape[1]],
        "bin_width": MATCH_WIDTH,
        "seed": seed,
        "min_per_side": MIN_PER_SIDE,
    }
    if m.n < MIN_PER_SIDE:
        out["note"] = (
            f"the lengths of the two domains hardly overlap: {m.n} texts a side at equal "
            f"length (fewer than {MIN_PER_SIDE}), so no length-matched figure"
        )
        return out
    positive = np.r_[np.zeros(m.n, bool), np.ones(m.n, bool)]  # [2n]
    scores = {
        name: np.r_[ood_scores(a[:, m.id_rows], name), ood_scores(b[:, m.ood_rows], name)]
        for name in OOD_SCORES
    }  # each [2n]
    out["auroc"] = {name: _auroc(positive, s) for name, s in scores.items()}
    out["versus_max_prob"] = {
        name: paired_auroc_difference(positive, s, scores["max_prob"], seed=seed).as_dict()
        for name, s in scores.items()
        if name != "max_prob"
    }
    return out
