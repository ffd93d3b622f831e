"""Slices of Error analysis (uqlab.workbench.slices): each slice's accuracy, ECE and mean MI equal
the library's numbers on that slice's rows; bad patterns get a message."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from uqcore.exceptions import InputError
from uqcore.stats import ece
from uqlab.workbench.slices import table

NAMES = ("neg", "pos")


def _frame() -> pd.DataFrame:
    p1 = np.array([0.9, 0.2, 0.6, 0.4, 0.95, 0.1])
    return pd.DataFrame(
        {
            "text": [
                "a great film",
                "not good at all",
                "great but long " * 4,
                "dull",
                "GREAT acting and a great story told well over two hours",
                "bad",
            ],
            "gold": [1, 0, 0, 1, 1, 0],
            "pred": (p1 > 0.5).astype(int),
            "domain": [
                "in-domain",
                "in-domain",
                "in-domain",
                "out-of-domain",
                "out-of-domain",
                "out-of-domain",
            ],
            "mi": [0.01, 0.02, 0.3, 0.2, 0.0, 0.05],
            "p@0": 1 - p1,
            "p@1": p1,
        }
    )


def test_each_slice_is_its_rows_numbers():
    df = _frame()
    got = table(df, "word or pattern", NAMES, "great")
    inside = df[df["text"].str.contains("great", case=False)]
    row = got[got["slice"] == "contains 'great'"].iloc[0]
    assert row["examples"] == 3
    assert row["accuracy"] == pytest.approx((inside["pred"] == inside["gold"]).mean())
    probs = inside[["p@0", "p@1"]].to_numpy()
    assert row["ECE"] == pytest.approx(ece(probs, inside["gold"].to_numpy()))
    assert row["mean MI"] == pytest.approx(inside["mi"].mean())
    assert set(table(df, "domain", NAMES)["slice"]) == {"in-domain", "out-of-domain"}
    assert set(table(df, "gold label", NAMES)["slice"]) == {"neg", "pos"}
    assert table(df, "prediction", NAMES)["examples"].sum() == len(df)
    lengths = table(df, "length", NAMES)
    assert lengths["examples"].sum() == len(df) and "1-10 words" in set(lengths["slice"])


@pytest.mark.parametrize(
    "pattern, message",
    [
        ("", "Type a word"),
        ("(unclosed", "Not a regular expression"),
        ("x" * 300, "at most 200"),
    ],
)
def test_bad_patterns_are_said(pattern, message):
    with pytest.raises(InputError, match=message):
        table(_frame(), "word or pattern", NAMES, pattern)
