"""A selection of rows a link carries (ui.logic.selection): what the library counts, read back
strictly from a link."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ui.logic import selection
from ui.logic.selection import Selection, parse, picked_bin, picked_top
from uqcore.stats import reliability_diagram, risk_coverage
from uqlab.workbench.dataset import CLASS_P, OUT, confusion
from uqlab.workbench.figures import confusion_figure, reliability_figure


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
        Selection("cell", 10, 300, gold=0, pred=1),
        Selection("cell", 10, 0, gold=49, pred=49, mine=True),
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
        "cell|0|50|T10|n60",  # at most 50 labels
        "cell|-1|0|T10|n60",
        "cell|0|T10|n60",
        "cell|a|b|T10|n60",
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


def test_a_histogram_bar_holds_the_rows_counted_in_its_bin():
    """Every bar of a histogram by domain, read back from its click, holds the rows that
    domain has in [lo, hi): together, every row once."""
    from uqlab.workbench.figures import domain_histograms, histogram_bins

    df = _frame()
    df["mi"] = np.random.default_rng(3).gamma(1.0, 0.01, len(df))
    values = {d: df.loc[df["domain"] == d, "mi"] for d in ("in", OUT)}
    bins = histogram_bins(values)
    fig = domain_histograms(values, "MI", "t")
    assert fig.data[0].xbins.size == bins["size"]
    total = 0
    for curve, domain in enumerate(values):
        for k in range(41):
            x = bins["start"] + (k + 0.5) * bins["size"]  # a bar's centre, as a click sends it
            event = {"selection": {"points": [{"curve_number": curve, "x": x}]}}
            got_domain, lo, hi = selection.picked_range(event, list(values), bins)
            assert got_domain == domain
            sel = Selection("range", 10, 0, score="mutual_information", lo=lo, hi=hi, domain=domain)
            assert parse(sel.encode()) == (sel, None)
            inside = df[sel.mask(df, ("no", "yes"))]
            v = values[domain].to_numpy()
            assert len(inside) == int(((v >= lo) & (v < hi)).sum())
            total += len(inside)
    assert total == len(df)


@pytest.mark.parametrize(
    "raw",
    [
        "range|mutual_information|0.2|0.1|in|T10|n60",  # lo above hi
        "range|__class__|0.1|0.2|in|T10|n60",  # no such score
        "range|entropy|nan|0.2|in|T10|n60",
        "range|entropy|0.1|1e999|in|T10|n60",
        "range|entropy|0.1|0.2||T10|n60",
        "range|entropy|0.1|0.2|" + "d" * 61 + "|T10|n60",
    ],
)
def test_a_range_the_app_never_makes_is_refused(raw):
    got, why = parse(raw)
    assert got is None and why and why.endswith("ignored.")


def test_a_roc_point_flags_the_rows_at_its_threshold_as_the_library_counts_them():
    """Point k of uqcore.stats.ood_detection's curve: the rows whose score is at least its
    threshold, out-of-domain ones over all out-of-domain = TPR, in-domain ones = FPR."""
    from uqlab.workbench import dataset
    from uqlab.workbench.figures import roc_figure

    df = _frame()
    df["entropy"] = np.round(np.random.default_rng(5).random(len(df)), 2)  # ties
    roc = dataset.roc(df, "entropy")
    fig = roc_figure({"a": roc}, "entropy")
    assert fig.data[1].mode == "lines+markers"  # clickable points
    n_out = int((df["domain"] == OUT).sum())
    n_in = len(df) - n_out
    first = {"selection": {"points": [{"curve_number": 1, "point_index": 0}]}}
    assert selection.picked_flag(first, {"a": roc}) is None  # threshold inf: flags nothing
    for k in (1, 5, len(roc["fpr"]) // 2, len(roc["fpr"]) - 1):
        event = {"selection": {"points": [{"curve_number": 1, "point_index": k}]}}
        name, threshold = selection.picked_flag(event, {"a": roc})
        sel = Selection("flag", 10, 0, score="entropy", lo=threshold)
        assert name == "a" and parse(sel.encode()) == (sel, None)
        flagged = df[sel.mask(df, ("no", "yes"))]
        assert (flagged["domain"] == OUT).sum() == round(roc["tpr"][k] * n_out)
        assert (flagged["domain"] != OUT).sum() == round(roc["fpr"][k] * n_in)


def test_a_linked_name_is_shown_inert_never_as_markup():
    """A slice or domain name comes from a link or a visitor's file: a button label and an
    info box render markdown, so it is escaped (a link, an image, emphasis stay text)."""
    for sel in (
        Selection("slice", 10, 0, by="gold label", group="[click](http://evil.example)"),
        Selection("range", 10, 0, score="entropy", lo=0.0, hi=1.0, domain="![x](http://e.x/a.png)"),
    ):
        said = sel.what()
        assert "](http" not in said, said  # no live link or image
        assert "\\[" in said, said  # the bracket escaped
        assert parse(sel.encode())[0] == sel  # still selects the rows by the raw name


def test_a_confusion_cell_holds_the_in_domain_rows_of_its_gold_label_and_prediction():
    df = _frame()
    counts = confusion(df, 2)
    part = df[df["domain"] != OUT]
    fig = confusion_figure(counts, ("no", "yes"), "a: confusion")
    for k, data in enumerate(fig.data[1].customdata.tolist()):  # every clickable cell
        sent = {str(i): v for i, v in enumerate(data)}  # as Streamlit sends an array row
        event = {
            "selection": {"points": [{"curve_number": 1, "point_index": k, "customdata": sent}]}
        }
        gold, pred = selection.picked_cell(event)
        sel = Selection("cell", 10, 0, gold=gold, pred=pred)
        picked = df[sel.mask(df, ("no", "yes"))]
        expect = part[(part["gold"] == gold) & (part["pred"] == pred)]
        assert set(picked.index) == set(expect.index) and len(picked) == counts[gold, pred]
        assert data[2] == counts[gold, pred]
        wrong = 0 if gold == pred else len(expect)
        assert sel.words(picked, ("no", "yes")) == (
            f"gold {('no', 'yes')[gold]}, predicted {('no', 'yes')[pred]} (a cell of the "
            f"confusion matrix): {len(expect):,} texts, {wrong:,} wrong"
        )
    assert counts.sum() == len(part)
    assert selection.picked_cell({"selection": {"points": [{"customdata": [0, 99, 3]}]}}) is None
    assert selection.picked_cell(None) is None
    said = Selection("cell", 10, 0, gold=0, pred=1).what(("[x](http://e.vil)", "b"))
    assert "[x](http" not in said  # a visitor's label name is escaped
