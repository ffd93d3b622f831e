"""Uncertainty statistics over sampled class probabilities (the formulas: docs/models.md §5).

Every function takes ``probs`` of shape ``[T, N, C]`` (T stochastic samples of N examples over C
classes; numpy arrays or torch tensors) or the mean prediction ``mean_probs`` ``[N, C]``, with
integer ``labels`` ``[N]`` in ``[0, C)``. Inputs are validated and bad ones raise
:class:`uqcore.exceptions.InputError` (a ``ValueError``) saying what to do. Valid input never yields
NaN except in the documented empty bins of :func:`reliability_diagram`; with ``T = 1`` all
variances and the mutual information are exactly 0. Logarithms are natural (nats).

One module per job, each importing only :mod:`uqcore.stats.checks` (the shared input checks) and
the modules before it: ``uncertainty`` (Table 3, entropies, mutual information, variance),
``calibration`` (NLL, Brier, ECE, risk-coverage, temperature scaling), ``classification``
(accuracy, macro-F1, MCC), ``ood`` (OOD scores and their detection quality), ``conformal``
(split conformal sets), ``bootstrap`` (intervals) and ``summary`` (every scalar at once). This
front door re-exports their public names: ``from uqcore.stats import ece``.
"""

from __future__ import annotations

from uqcore.stats.bootstrap import (
    BOOTSTRAP_RESAMPLES,
    Interval,
    PairedInterval,
    bootstrap_interval,
    paired_bootstrap,
)
from uqcore.stats.calibration import (
    ReliabilityData,
    RiskCoverage,
    adaptive_ece,
    brier,
    ece,
    fit_temperature,
    nll,
    reliability_diagram,
    risk_coverage,
    scaled_probs,
)
from uqcore.stats.classification import (
    accuracy,
    macro_f1,
    sampled_accuracy,
    sampled_macro_f1,
    sampled_mcc,
)
from uqcore.stats.conformal import (
    CONFORMAL_METHODS,
    TIE,
    ConformalSets,
    ResampledCoverage,
    calibration_scores,
    conformal_calibrate,
    conformal_from_scores,
    conformal_summary,
    resampled_coverage,
)
from uqcore.stats.ood import (
    LOGIT_SCORES,
    OOD_SCORES,
    Mahalanobis,
    OODResult,
    fit_mahalanobis,
    logit_scores,
    ood_detection,
    ood_scores,
)
from uqcore.stats.summary import summarize
from uqcore.stats.uncertainty import (
    Table3Stats,
    expected_entropy,
    mutual_information,
    predictive_entropy,
    predictive_variance,
    table3_stats,
)

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "CONFORMAL_METHODS",
    "ConformalSets",
    "Interval",
    "LOGIT_SCORES",
    "Mahalanobis",
    "OODResult",
    "OOD_SCORES",
    "PairedInterval",
    "ReliabilityData",
    "ResampledCoverage",
    "RiskCoverage",
    "TIE",
    "Table3Stats",
    "accuracy",
    "adaptive_ece",
    "bootstrap_interval",
    "brier",
    "calibration_scores",
    "conformal_calibrate",
    "conformal_from_scores",
    "conformal_summary",
    "ece",
    "expected_entropy",
    "fit_mahalanobis",
    "fit_temperature",
    "logit_scores",
    "macro_f1",
    "mutual_information",
    "nll",
    "ood_detection",
    "ood_scores",
    "paired_bootstrap",
    "predictive_entropy",
    "predictive_variance",
    "reliability_diagram",
    "resampled_coverage",
    "risk_coverage",
    "sampled_accuracy",
    "sampled_macro_f1",
    "sampled_mcc",
    "scaled_probs",
    "summarize",
    "table3_stats",
]
