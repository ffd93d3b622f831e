"""Every scalar of a sampled evaluation in one JSON-ready dict (uqcore.stats.summary)."""

from __future__ import annotations

import json
import math

import numpy as np

from tests.uqcore.stats import random_probs
from uqcore import stats


def test_summarize_keys_and_json():
    y3 = np.arange(10) % 3
    out3 = stats.summarize(random_probs(4, 10, 3), y3)
    base = {
        "accuracy_mean",
        "accuracy_std",
        "nll",
        "brier",
        "ece",
        "aece",
        "aurc",
        "accuracy_at_80_coverage",
        "mean_entropy",
        "mean_expected_entropy",
        "mean_mutual_information",
        "mean_variance",
        "macro_f1_mean",
        "macro_f1_std",
    }
    assert set(out3) == base
    out2 = stats.summarize(random_probs(4, 10, 2), np.arange(10) % 2)
    assert set(out2) == base | {"mcc_mean", "mcc_std"}
    for out in (out2, out3):
        assert all(type(v) is float and math.isfinite(v) for v in out.values())
        assert json.loads(json.dumps(out)) == out
