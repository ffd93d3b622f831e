"""Slices of a dataset page's examples: accuracy, ECE and mean mutual information of each group
of rows side by side, grouped by length, gold label, prediction, domain, or whether the text
holds a word or pattern. No Streamlit here; the numbers come from :mod:`uqcore.stats`.
"""

from __future__ import annotations

import re

import pandas as pd

from uqcore.exceptions import InputError
from uqcore.stats import ece
from uqlab.workbench.dataset import mean_probs

BY = ("length", "gold label", "prediction", "domain", "word or pattern")
LENGTH_BINS = (0, 10, 20, 40, 80, 10**9)  # words: 1-10, 11-20, 21-40, 41-80, more
MAX_PATTERN = 200


def groups(df: pd.DataFrame, by: str, names: tuple[str, ...], pattern: str = "") -> pd.Series:
    """The slice each row falls in, as text (one value per row of ``df``)."""
    if by == "length":
        words = df["text"].str.split().str.len()
        edges = LENGTH_BINS
        labels = [
            f"{lo + 1}-{hi} words" if hi < 10**9 else f"over {lo} words"
            for lo, hi in zip(edges[:-1], edges[1:], strict=True)
        ]
        return pd.cut(words, bins=list(edges), labels=labels).astype(str)
    if by == "gold label":
        return df["gold"].map(lambda g: names[int(g)])
    if by == "prediction":
        return df["pred"].map(lambda p: names[int(p)])
    if by == "domain":
        return df["domain"].astype(str)
    if by == "word or pattern":
        if not pattern.strip():
            raise InputError("Type a word or a regular expression to slice by.")
        if len(pattern) > MAX_PATTERN:
            raise InputError(f"The pattern has {len(pattern)} characters; at most {MAX_PATTERN}.")
        try:
            rx = re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise InputError(
                f"Not a regular expression: {exc}. Escape special characters, or type a plain word."
            ) from None
        has = df["text"].map(lambda t: bool(rx.search(t)))
        return has.map({True: f"contains {pattern!r}", False: f"without {pattern!r}"})
    raise InputError(f"Slice by one of {', '.join(BY)}; got {by!r}.")


def table(df: pd.DataFrame, by: str, names: tuple[str, ...], pattern: str = "") -> pd.DataFrame:
    """One row per slice: its size, accuracy of the mean prediction, ECE and mean mutual
    information (largest slice first)."""
    keys = groups(df, by, names, pattern)
    rows = []
    for key, part in df.groupby(keys, sort=False):
        probs = mean_probs(part)
        gold = part["gold"].to_numpy()
        rows.append(
            {
                "slice": key,
                "examples": len(part),
                "accuracy": float((part["pred"] == part["gold"]).mean()),
                "ECE": ece(probs, gold),
                "mean MI": float(part["mi"].mean()),
            }
        )
    out = pd.DataFrame(rows, columns=["slice", "examples", "accuracy", "ECE", "mean MI"])
    return out.sort_values("examples", ascending=False, kind="stable").reset_index(drop=True)
