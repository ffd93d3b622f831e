"""Dataset-scale numbers on the bundled evaluation subsets (``assets/eval``), per example.

Examples are sampled in length-sorted batches (:func:`uqlab.workbench.compute.many_probs`); the
library keys every draw by the example's own tokens, so a row's numbers are the explorer's numbers
for that sentence (same checkpoint, T, seed, settings). No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from uqcore.stats import (
    ConformalSets,
    Interval,
    accuracy,
    bootstrap_interval,
    conformal_summary,
    ece,
    logit_scores,
    macro_f1,
    mutual_information,
    ood_detection,
    predictive_entropy,
    reliability_diagram,
    scaled_probs,
    table3_stats,
)
from uqcore.stats import risk_coverage as stats_risk_coverage
from uqlab.catalog.tasks import DOMAINS, TASKS
from uqlab.data import task_examples
from uqlab.evaluation.stored import bundled_rows

IN, OUT = DOMAINS["id"], DOMAINS["ood"]  # the ``domain`` column's values
DATASET_T = 10  # the dataset pages' default T (the paper's)
YOURS = "your file"  # the domain of a visitor's labelled file's rows (its second file: OUT)


def fitted_temperature(metrics: dict | None) -> float | None:
    """The temperature a checkpoint's evaluation fitted on dev (its ``metrics.json``), or None."""
    value = ((metrics or {}).get("temperature") or {}).get("value")
    return float(value) if isinstance(value, int | float) and value > 0 else None


def domains_of(df: pd.DataFrame) -> list[str]:
    """The domains a frame holds, in-domain ones first (the bundled set's or the visitor's
    file), out-of-domain last."""
    return sorted(dict.fromkeys(df["domain"]), key=lambda d: d == OUT)


def in_domain(df: pd.DataFrame) -> pd.DataFrame:
    """The rows that are not out of domain: the bundled in-domain set, or the visitor's file."""
    return df[df["domain"] != OUT]


@lru_cache(maxsize=16)
def subsets(task: str) -> tuple[tuple[str, str], ...]:
    """``((subset name, domain display name), ...)`` of a task's examples, in-domain first."""
    if task not in TASKS:
        return ()
    return tuple((name, DOMAINS[d]) for d, (name, _) in task_examples(task).items())


SCORES = {  # OOD score name -> (column, label); higher = more likely out of domain
    "mutual_information": ("mi", "mutual information"),
    "entropy": ("entropy", "predictive entropy"),
    "variance": ("var", "variance of p(predicted)"),
    "max_prob": ("one_minus_max", "1 - max probability"),
    "max_logit": ("neg_max_logit", "minus the max logit"),
    "energy": ("energy", "energy (minus log-sum-exp of the logits)"),
}


@lru_cache(maxsize=4)
def examples(task: str) -> tuple[tuple[str, int, str, int], ...]:
    """(text, gold, domain, index in its subset) of every bundled example of ``task``."""
    if task not in TASKS:
        return ()
    return tuple((t, y, DOMAINS[d], i) for t, y, d, i in bundled_rows(task))


def pick(
    task: str, per_domain: int | None, seed: int = 0, rows: tuple | None = None
) -> list[tuple[str, int, str, int]]:
    """All examples of ``task`` (or the given ``rows``: a visitor's file), or ``per_domain`` of
    each domain drawn with ``seed`` (kept in order)."""
    rows = examples(task) if rows is None else rows
    if per_domain is None:
        return list(rows)
    rng = np.random.default_rng(seed)
    out = []
    for domain in dict.fromkeys(r[2] for r in rows):
        idx = [i for i, r in enumerate(rows) if r[2] == domain]
        chosen = sorted(rng.choice(idx, size=min(per_domain, len(idx)), replace=False))
        out += [rows[i] for i in chosen]
    return out


CHUNK = 256  # texts per call of the sampler: the progress bar and the table move between chunks

Sampler = Callable[[tuple[str, ...]], list]  # texts -> per text Sampled or an error message


def chunks(rows: list) -> list[tuple[int, list[int]]]:
    """The order in which the dataset pages sample ``rows``: ``(start, indices)`` of chunks of
    :data:`CHUNK` texts, the texts sorted by words (each chunk's batches then carry little
    padding; an example's numbers do not depend on its chunk)."""
    order = sorted(range(len(rows)), key=lambda i: len(rows[i][0].split()))
    return [(lo, order[lo : lo + CHUNK]) for lo in range(0, len(order), CHUNK)]


def frame(
    rows: list[tuple[str, int, str, int]],
    probs_many: Sampler,
    progress: Callable[[float], None] | None = None,
    temperature: float | None = None,
    partial: Callable[[pd.DataFrame], None] | None = None,
) -> tuple[pd.DataFrame, int]:
    """One row per readable example with prediction and uncertainty, in the order of ``rows``;
    also how many were skipped (a text with no known word cannot be sampled). ``probs_many``
    samples a tuple of texts (:func:`uqlab.workbench.compute.many_probs`), called on the chunks
    of :func:`chunks`. With a ``temperature``,
    ``p1_scaled`` is the mean p(class 1) after temperature scaling. ``partial`` is given the
    rows finished so far after each chunk but the last (to fill a table while it computes)."""
    frames, kept, skipped = [], [], 0
    for lo, part in chunks(rows):
        got = probs_many(tuple(rows[i][0] for i in part))
        keep = [j for j, p in enumerate(got) if not isinstance(p, str)]  # str: why unreadable
        skipped += len(part) - len(keep)
        if keep:
            frames.append(
                _records([rows[part[j]] for j in keep], [got[j] for j in keep], temperature)
            )
            kept += [part[j] for j in keep]
        if progress is not None:
            progress(min(1.0, (lo + CHUNK) / max(1, len(rows))))
        if partial is not None and frames and lo + CHUNK < len(rows):
            partial(pd.concat(frames, ignore_index=True))
    if not frames:
        return pd.DataFrame(), skipped
    out = pd.concat(frames, ignore_index=True)
    return out.iloc[np.argsort(kept, kind="stable")].reset_index(drop=True), skipped


def _records(rows: list, sampled: list, temperature: float | None) -> pd.DataFrame:
    """The frame's rows for readable examples, all at once: ``sampled`` (one
    :class:`uqlab.workbench.compute.Sampled` each, the same T) -> the Table 3 statistics (against
    the gold label), entropy, mutual information and the OOD scores, computed on ``[T, N, C]``
    arrays by the same library functions the explorer's summary uses."""
    probs = np.stack([s.probs for s in sampled], axis=1)  # [T, N, C]
    logits = np.stack([s.logits for s in sampled], axis=1)  # [T, N, C]
    gold = np.array([r[1] for r in rows])  # [N]
    n = np.arange(len(rows))
    mean = probs.mean(0)  # [N, C]
    pred = mean.argmax(1)  # [N]
    t3 = table3_stats(probs, gold)
    out = pd.DataFrame(
        {
            "domain": [r[2] for r in rows],
            "index": [r[3] for r in rows],
            "text": [r[0] for r in rows],
            "gold": gold,
            "pred": pred,
            "p_gold": t3.p_gold_mean,
            "var_gold": t3.p_gold_var,
            "correct": t3.n_correct,
            "T": t3.n_samples,
            "entropy": predictive_entropy(probs),
            "mi": mutual_information(probs),
            "var": probs[:, n, pred].var(0),
            "one_minus_max": 1.0 - mean.max(1),
            "p1": mean[:, -1],
            "neg_max_logit": logit_scores(logits, "max_logit"),
            "energy": logit_scores(logits, "energy"),
        }
    )
    for c in range(mean.shape[1]):  # every class, for any number of classes
        out[f"{CLASS_P}{c}"] = mean[:, c]
    if temperature is not None:
        scaled = scaled_probs(logits, temperature).mean(0)  # [N, C]
        out["p1_scaled"] = scaled[:, -1]
        for c in range(scaled.shape[1]):
            out[f"{CLASS_P_SCALED}{c}"] = scaled[:, c]
    return out


CLASS_P, CLASS_P_SCALED = "p@", "p_scaled@"  # column prefixes of the mean p of each class


def mean_probs(part: pd.DataFrame, column: str = "p1") -> np.ndarray:
    """The mean prediction ``[N, C]`` of a frame's rows (``column`` "p1_scaled": after
    temperature scaling), from its per-class columns."""
    prefix = CLASS_P_SCALED if column == "p1_scaled" else CLASS_P
    cols = sorted(
        (c for c in part.columns if c.startswith(prefix)), key=lambda c: int(c[len(prefix) :])
    )
    if not cols:  # a two-class frame that only has p(class 1)
        p1 = part[column].to_numpy(dtype=np.float64)
        return np.stack([1.0 - p1, p1], 1)
    return part[cols].to_numpy(dtype=np.float64)


def reliability(df: pd.DataFrame, n_bins: int = 15, column: str = "p1"):
    """Reliability data (uqcore.stats) of the in-domain rows: confidence of the predicted
    class against accuracy, ``n_bins`` equal-width bins; ``column`` = "p1_scaled" after
    temperature scaling."""
    part = in_domain(df)
    return reliability_diagram(mean_probs(part, column), part["gold"].to_numpy(), n_bins)


def risk_coverage(df: pd.DataFrame) -> dict:
    """Selective prediction on the in-domain rows (uqcore.stats.risk_coverage of the mean
    prediction): ``coverage``, ``risk``, ``aurc``, plus the ``oracle`` risk (every error kept
    for last) and the ``random`` one (the overall error rate at every coverage)."""
    part = in_domain(df)
    rc = stats_risk_coverage(mean_probs(part), part["gold"].to_numpy())
    errors = int(round(rc.risk[-1] * len(rc.risk)))
    k = np.arange(1, len(rc.risk) + 1)
    oracle = np.maximum(0, k - (len(k) - errors)) / k  # [N]
    return {
        "coverage": rc.coverage,
        "risk": rc.risk,
        "aurc": rc.aurc,
        "oracle": oracle,
        "random": np.full(len(k), rc.risk[-1]),
    }


def confusion(df: pd.DataFrame, n_classes: int) -> np.ndarray:
    """``[C, C]`` counts of the in-domain rows by gold label (row) and predicted class (column:
    the class of the mean prediction, the frame's ``pred``)."""
    part = in_domain(df)
    out = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(out, (part["gold"].to_numpy(int), part["pred"].to_numpy(int)), 1)
    return out


def conformal_members(df: pd.DataFrame, sets: ConformalSets) -> np.ndarray:
    """Which classes are in each row's conformal set, ``[N, C]`` bool; the set rule is the
    library's (:meth:`ConformalSets.sets`)."""
    return sets.sets(mean_probs(df))  # [N, 2]


def conformal_rows(df: pd.DataFrame, sets: ConformalSets) -> dict[str, dict[str, float]]:
    """Per domain: empirical coverage and mean size of the conformal ``sets`` on a frame."""
    out = {}
    for domain in domains_of(df):
        part = df[df["domain"] == domain]
        got = conformal_summary(conformal_members(part, sets), part["gold"].to_numpy())
        out[domain] = {k: got[k] for k in ("coverage", "mean_size")}
    return out


def roc(df: pd.DataFrame, score: str) -> dict:
    """ROC curve and AUROC / AUPR / FPR@95 of ``score`` with out-of-domain as positive."""
    column = SCORES[score][0]
    ind = in_domain(df)[column].to_numpy()
    ood = df.loc[df["domain"] == OUT, column].to_numpy()
    det = ood_detection(ind, ood)
    return {
        "thresholds": det.roc_thresholds,  # point k flags the rows whose score is >= it
        "fpr": det.roc_fpr,
        "tpr": det.roc_tpr,
        "auroc": det.auroc,
        "aupr": det.aupr,
        "fpr95": det.fpr_at_95_tpr,
    }


@dataclass(frozen=True)
class Headline:
    """One domain's summary line: ``rows`` used, the ``accuracy`` and ``ece`` of the mean
    prediction and, with more than two classes, its ``macro_f1``; each with a bootstrap
    interval (:func:`uqcore.stats.bootstrap_interval`)."""

    domain: str
    rows: int
    accuracy: Interval
    ece: Interval
    macro_f1: Interval | None

    def cells(self) -> dict[str, object]:
        """The line as table cells: rows, then each metric with its interval, e.g.
        ``"0.823 [0.797, 0.848]"`` (one narrow column per metric, readable on a phone)."""
        out: dict[str, object] = {"rows": self.rows}
        named = [("accuracy", self.accuracy), ("ECE", self.ece), ("macro-F1", self.macro_f1)]
        for name, i in named:
            if i is not None:
                out[name] = f"{i.value:.3f} [{i.low:.3f}, {i.high:.3f}]"
        return out

    def text(self) -> str:
        """ "your file: 872 rows · accuracy 0.823 [0.797, 0.848] · ECE 0.071 [...]" """
        parts = [f"{self.domain}: {self.rows:,} rows", _said("accuracy", self.accuracy)]
        parts.append(_said("ECE", self.ece))
        if self.macro_f1 is not None:
            parts.append(_said("macro-F1", self.macro_f1))
        return " · ".join(parts)


def _said(name: str, i: Interval) -> str:
    return f"{name} {i.value:.3f} [{i.low:.3f}, {i.high:.3f}]"


def headlines(df: pd.DataFrame, seed: int = 0) -> list[Headline]:
    """Each domain's :class:`Headline` of a frame (its mean predictions against the gold
    labels, the library's metrics; the bootstrap seeded by ``seed``)."""
    out = []
    for domain in domains_of(df):
        part = df[df["domain"] == domain]
        p, y = mean_probs(part), part["gold"].to_numpy()  # [N, C], [N]
        f1 = bootstrap_interval(macro_f1, p, y, seed=seed) if p.shape[1] > 2 else None
        out.append(
            Headline(
                domain,
                len(part),
                bootstrap_interval(accuracy, p, y, seed=seed),
                bootstrap_interval(ece, p, y, seed=seed),
                f1,
            )
        )
    return out
