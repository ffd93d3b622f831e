"""What the dataset pages draw and list (uqlab.workbench.dataset_views), shared by Results, Error
analysis, the notebook and the report: the curves of the right rows, the error views' rows and
orders, and the rows as people read them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from uqlab.workbench import dataset, dataset_views
from uqlab.workbench.dataset import CLASS_P, OUT, YOURS


def _frame(n: int = 120, ood: int = 30, seed: int = 0, scaled: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p1 = rng.uniform(0, 1, n + ood)
    gold = rng.integers(0, 2, n + ood)
    df = pd.DataFrame(
        {
            "domain": [YOURS] * n + [OUT] * ood,
            "index": range(n + ood),
            "text": [f"text {i}" for i in range(n + ood)],
            "gold": gold,
            "pred": (p1 > 0.5).astype(int),
            "p_gold": np.where(gold == 1, p1, 1 - p1),
            "correct": rng.integers(0, 11, n + ood),
            "T": 10,
            "var_gold": rng.uniform(0, 0.1, n + ood),
            "entropy": rng.uniform(0, 0.7, n + ood),
            "mi": rng.uniform(0, 0.2, n + ood),
        }
    )
    df[f"{CLASS_P}0"], df[f"{CLASS_P}1"], df["p1"] = 1 - p1, p1, p1
    if scaled:
        df["p1_scaled"] = 0.5 + (p1 - 0.5) / 2
        df[f"{dataset.CLASS_P_SCALED}0"], df[f"{dataset.CLASS_P_SCALED}1"] = (
            1 - df["p1_scaled"],
            df["p1_scaled"],
        )
    return df


def test_the_curves_read_in_domain_rows_and_the_scaled_ones_are_named():
    frames = {"a": _frame(scaled=True), "b": _frame(seed=1)}
    curves = dataset_views.reliability_curves(frames)
    assert list(curves) == ["a", "b", "a, temperature-scaled"]
    assert curves["a"].count.sum() == 120  # the out-of-domain rows are left out
    fig = dataset_views.reliability(frames, mine=True)
    assert "your file" in fig.layout.title.text
    assert set(dataset_views.rocs(frames, "entropy")) == {"a", "b"}
    no_ood = {"a": dataset.in_domain(_frame())}
    assert dataset_views.roc(no_ood, "entropy") is None and dataset_views.with_ood(no_ood) == {}
    values = dataset_views.score_values(frames["a"], "mutual_information")
    assert list(values) == [YOURS, OUT] and len(values[OUT]) == 30


def test_the_error_views_pick_and_order_rows_as_error_analysis_does():
    df = _frame()
    wrong = dataset_views.shown(df, "confidently wrong (p(gold) < 0.2)", "p(gold), lowest first")
    assert (wrong["p_gold"] < 0.2).all() and wrong["p_gold"].is_monotonic_increasing
    mi = dataset_views.shown(df, "all", "mutual information", domain=OUT)
    assert set(mi["domain"]) == {OUT} and mi["mi"].is_monotonic_decreasing
    names = ("no", "yes")
    worst = dataset_views.worst_errors(df, names, 5)
    assert list(worst.columns) == dataset_views.ROW_COLUMNS and len(worst) == min(5, len(wrong))
    assert set(worst["gold"]) <= set(names) and worst["correct"].str.endswith("/10").all()
    assert (
        dataset_views.most_uncertain(df, names, 3)["mi"].tolist()
        == sorted(df["mi"], reverse=True)[:3]
    )
    counts = dataset.confusion(df, 2)
    part = dataset.in_domain(df)
    assert counts[1, 0] == int(((part["gold"] == 1) & (part["pred"] == 0)).sum())
