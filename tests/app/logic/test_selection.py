"""A selection of rows a link carries (ui.logic.selection): what the library counts, read back
strictly from a link."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ui.logic import selection
from ui.logic.dataset import CLASS_P, OUT
from ui.logic.selection import Selection, parse, picked_bin, picked_top
from uqcore.stats import reliability_diagram, risk_coverage
from viz.figures import reliability_figure


def _frame(n: int = 200, ood: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p1 = np.round(rng.uniform(0, 1, n + ood), 2)  # rounded: ties in confidence
    gold = rng.integers(0, 2, n + ood)
    df = pd.DataFrame(
        {
            "domain": ["in"] * n + [OUT] * ood,
            "text": [" ".join(["w"] * (1 + i % 30)) + f" {i}" for i in range(n + ood)],
            "gold": gold,
            "pred": (p1 > 0.5).astype(int),
        }
    )
    df[f"{CLASS_P}0"], df[f"{CLASS_P}1"] = 1 - p1, p1
    return df.sample(frac=1.0, random_state=1)  # an index that is not 0..n-1 in order


def test_every_bin_holds_the_rows_the_library_counts():
    df = _frame()
    part = df[df["domain"] != OUT]
    p = part[[f"{CLASS_P}0", f"{CLASS_P}1"]].to_numpy()
    rd = reliability_diagram(p, part["gold"].to_numpy())
    total = 0
    for b in range(selection.N_BINS):
        got = df[Selection("bin", 10, 0, bin=b).mask(df, ("no", "yes"))]
        assert len(got) == rd.count[b] and (got["domain"] != OUT).all()
        if len(got):
            right = (got["pred"] == got["gold"]).mean()
            assert right == pytest.approx(rd.accuracy[b])
        total += len(got)
    assert total == len(part)  # every in-domain row in exactly one bin


def test_a_coverage_point_keeps_the_most_confident_as_the_library_orders_them():
    df = _frame()
    part = df[df["domain"] != OUT]
    p = part[[f"{CLASS_P}0", f"{CLASS_P}1"]].to_numpy()
    rc = risk_coverage(p, part["gold"].to_numpy())
    for k in (1, 17, 100, len(part)):
        got = df[Selection("top", 10, 0, top=k).mask(df, ("no", "yes"))]
        assert len(got) == k
        assert (got["pred"] != got["gold"]).sum() == round(rc.risk[k - 1] * k)
        least = got[[f"{CLASS_P}0", f"{CLASS_P}1"]].to_numpy().max(1).min()
        rest = df.drop(got.index)
        rest = rest[rest["domain"] != OUT][[f"{CLASS_P}0", f"{CLASS_P}1"]].to_numpy().max(1)
        assert not len(rest) or rest.max() <= least  # none left out is more confident


@pytest.mark.parametrize(
    "sel",
    [
        Selection("bin", 10, 60, bin=14),
        Selection("top", 1, 0, top=30, mine=True),
        Selection("slice", 100, 2000, by="length", group="1-10 words"),
        Selection("slice", 5, 20, by="gold label", group="acceptable", mine=True),
    ],
)
def test_a_selection_survives_its_link(sel):
    assert parse(sel.encode()) == (sel, None)


@pytest.mark.parametrize(
    "raw",
    [
        "bin|15|T10|n60",  # no bin 16 of 15
        "bin|-1|T10|n60",
        "bin|1.5|T10|n60",
        "top|0|T10|n60",
        "top|5|T0|n60",
        "top|5|T10|n-1",
        "top|5|T10|n60|x",
        "slice|word or pattern|(a+)+$|T10|n60",  # a link never brings a pattern to run
        "slice|length||T10|n60",
        "slice|length|" + "x" * 81 + "|T10|n60",
        "drop table|1|T10|n60",
        "x" * 300,
        "bin|1|10|60",
    ],
)
def test_anything_else_is_refused_with_a_reason(raw):
    got, why = parse(raw)
    assert got is None and why and why.endswith("ignored.")


def test_clicked_markers_and_points_name_their_checkpoint_and_rows():
    df = _frame()
    part = df[df["domain"] != OUT]
    rd = reliability_diagram(
        part[[f"{CLASS_P}0", f"{CLASS_P}1"]].to_numpy(), part["gold"].to_numpy()
    )
    fig = reliability_figure({"a": rd, "a, temperature-scaled": rd})
    marker = fig.data[1].customdata[3].tolist()  # what the browser sends back for that point
    event = {"selection": {"points": [{"curve_number": 1, "point_index": 3, "customdata": marker}]}}
    assert picked_bin(event, ["a", "a, temperature-scaled"]) == ("a", int(marker[1]))
    assert marker[0] == rd.count[int(marker[1])]
    sent = {"0": marker[0], "1": marker[1]}  # as Streamlit sends an array row
    event = {"selection": {"points": [{"curve_number": 1, "point_index": 3, "customdata": sent}]}}
    assert picked_bin(event, ["a", "a, temperature-scaled"]) == ("a", int(marker[1]))
    assert picked_bin({"selection": {"points": [{"curve_number": 0}]}}, ["a"]) is None  # diagonal
    assert picked_bin(None, ["a"]) is None and picked_bin({"selection": "?"}, ["a"]) is None
    top = {"selection": {"points": [{"curve_number": 1, "point_index": 9}]}}
    assert picked_top(top, ["a", "b"], {"a": 50, "b": 40}) == ("b", 10)
    oracle = {"selection": {"points": [{"curve_number": 2, "point_index": 9}]}}
    assert picked_top(oracle, ["a", "b"], {"a": 50, "b": 40}) is None  # not a checkpoint's
