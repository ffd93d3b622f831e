"""Every scalar metric of a sampled evaluation in one plain dict (metrics.json)."""

from __future__ import annotations

from typing import Any

from uqcore.stats.calibration import adaptive_ece, brier, ece, nll, risk_coverage
from uqcore.stats.checks import check_labels, check_probs
from uqcore.stats.classification import sampled_accuracy, sampled_macro_f1, sampled_mcc
from uqcore.stats.uncertainty import (
    expected_entropy,
    mutual_information,
    predictive_entropy,
    table3_stats,
)


def summarize(probs: Any, labels: Any) -> dict[str, float]:
    """All scalar metrics of a sampled evaluation as plain (JSON-serialisable) floats.

    Keys: accuracy_mean, accuracy_std, nll, brier, ece, aece (adaptive), aurc and
    accuracy_at_80_coverage (selective prediction on the mean prediction), mean_entropy,
    mean_expected_entropy, mean_mutual_information, mean_variance (of p(gold)), macro_f1_mean,
    macro_f1_std; plus mcc_mean, mcc_std when C == 2.
    """
    p = check_probs(probs)  # [T, N, C]
    y = check_labels(labels, *p.shape[1:])  # [N]
    mean_p = p.mean(axis=0)  # [N, C]
    out = dict(zip(("accuracy_mean", "accuracy_std"), sampled_accuracy(p, y), strict=True))
    out |= {
        "nll": nll(mean_p, y),
        "brier": brier(mean_p, y),
        "ece": ece(mean_p, y),
        "aece": adaptive_ece(mean_p, y),
        "mean_entropy": float(predictive_entropy(p).mean()),
        "mean_expected_entropy": float(expected_entropy(p).mean()),
        "mean_mutual_information": float(mutual_information(p).mean()),
        "mean_variance": float(table3_stats(p, y).p_gold_var.mean()),
    }
    rc = risk_coverage(mean_p, y)
    out |= {"aurc": rc.aurc, "accuracy_at_80_coverage": rc.accuracy_at(0.8)}
    out["macro_f1_mean"], out["macro_f1_std"] = sampled_macro_f1(p, y)
    if p.shape[2] == 2:
        out["mcc_mean"], out["mcc_std"] = sampled_mcc(p, y)
    return out
