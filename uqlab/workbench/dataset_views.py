"""What the dataset pages draw and list, assembled from frames
(:func:`uqlab.workbench.dataset.frame`), in one place for Results, Error analysis, the notebook
and the report: the same inputs give the same figures and the same rows whichever of them asks.
No Streamlit here.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from uqlab.workbench import dataset, figures

IN_DOMAIN, YOUR_FILE = "in-domain", "your file"  # what the curves' rows are called


def rows_name(mine: bool) -> str:
    """What a reliability or risk-coverage figure calls its rows: a visitor's file is not
    in-domain."""
    return YOUR_FILE if mine else IN_DOMAIN


def reliability_curves(frames: dict[str, pd.DataFrame]) -> dict[str, dict]:
    """Each checkpoint's reliability data, then, for those whose frame has temperature-scaled
    probabilities (``p1_scaled``), the scaled one under ``"<name>, temperature-scaled"``."""
    curves = {n: dataset.reliability(f) for n, f in frames.items()}
    curves |= {
        f"{n}, temperature-scaled": dataset.reliability(f, column="p1_scaled")
        for n, f in frames.items()
        if "p1_scaled" in f
    }
    return curves


def reliability(
    frames: dict[str, pd.DataFrame], mine: bool, curves: dict | None = None
) -> go.Figure:
    """Results' reliability diagram of ``frames`` (their :func:`reliability_curves`, or
    ``curves`` when the caller already has them)."""
    curves = reliability_curves(frames) if curves is None else curves
    return figures.reliability_figure(curves, rows_name(mine))


def risk_coverage(frames: dict[str, pd.DataFrame], mine: bool) -> go.Figure:
    """Results' risk-coverage figure of ``frames``."""
    curves = {n: dataset.risk_coverage(f) for n, f in frames.items()}
    return figures.risk_coverage_figure(curves, rows_name(mine))


def with_ood(frames: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The frames that hold out-of-domain rows (the only ones an ROC can be drawn for)."""
    return {n: f for n, f in frames.items() if (f["domain"] == dataset.OUT).any()}


def rocs(frames: dict[str, pd.DataFrame], score: str) -> dict[str, dict]:
    """The ROC data of ``score`` (a :data:`uqlab.workbench.dataset.SCORES` name) of each frame
    with out-of-domain rows."""
    return {n: dataset.roc(f, score) for n, f in with_ood(frames).items()}


def roc(frames: dict[str, pd.DataFrame], score: str, got: dict | None = None) -> go.Figure | None:
    """Results' ROC figure of ``score`` (from :func:`rocs`, or ``got`` when the caller already
    has them); None when no frame has out-of-domain rows."""
    got = rocs(frames, score) if got is None else got
    return figures.roc_figure(got, dataset.SCORES[score][1]) if got else None


def score_values(frame: pd.DataFrame, score: str) -> dict[str, pd.Series]:
    """Domain -> the values of ``score`` on that domain's rows (in-domain first)."""
    column = dataset.SCORES[score][0]
    return {d: frame.loc[frame["domain"] == d, column] for d in dataset.domains_of(frame)}


def histogram(name: str, frame: pd.DataFrame, score: str) -> go.Figure:
    """Results' histogram of ``score`` by domain for checkpoint ``name``."""
    label = dataset.SCORES[score][1]
    return figures.domain_histograms(
        score_values(frame, score), label, f"{name}: {label} by domain"
    )


def confusion(name: str, frame: pd.DataFrame, names: tuple[str, ...], mine: bool) -> go.Figure:
    """Results' confusion matrix of checkpoint ``name`` on its in-domain rows."""
    title = f"{name}: confusion matrix ({rows_name(mine)})"
    return figures.confusion_figure(dataset.confusion(frame, len(names)), names, title)


# Error analysis's views ("Show") and sorts; a page may add views of its own (conformal sets)
VIEWS = {
    "all": lambda d: d.index == d.index,
    "confidently wrong (p(gold) < 0.2)": lambda d: d["p_gold"] < 0.2,
    "uncertain (entropy > 0.5 nats)": lambda d: d["entropy"] > 0.5,
    "correct but unstable (some samples wrong)": lambda d: (
        (d["pred"] == d["gold"]) & (d["correct"] < d["T"])
    ),
    "wrong": lambda d: d["pred"] != d["gold"],
}
SORTS = {
    "mutual information": "mi",
    "predictive entropy": "entropy",
    "variance of p(gold)": "var_gold",
    "p(gold), lowest first": "p_gold",
}
CONFIDENTLY_WRONG = "confidently wrong (p(gold) < 0.2)"


def shown(df: pd.DataFrame, view: str, sort: str, domain: str = "all", views=None) -> pd.DataFrame:
    """Error analysis's rows: those of ``view`` (in ``views``, by default :data:`VIEWS`) in
    ``domain`` ("all": every domain), sorted by ``sort`` (:data:`SORTS`; p(gold) lowest first,
    the others highest first)."""
    part = df[(views or VIEWS)[view](df)]
    if domain != "all":
        part = part[part["domain"] == domain]
    return part.sort_values(SORTS[sort], ascending=SORTS[sort] == "p_gold")


ROW_COLUMNS = ["p_gold", "correct", "gold", "pred", "text", "domain", "var_gold", "entropy", "mi"]


def readable(part: pd.DataFrame, names: tuple[str, ...]) -> pd.DataFrame:
    """Rows as people read them: label names for ids, ``correct`` as "7/10" samples right, the
    spread (``var_gold``, entropy, mutual information) beside p(gold)."""
    return part.assign(
        gold=part["gold"].map(lambda g: names[int(g)]),
        pred=part["pred"].map(lambda p: names[int(p)]),
        correct=[f"{c}/{t}" for c, t in zip(part["correct"], part["T"], strict=True)],
    )[ROW_COLUMNS]


def worst_errors(df: pd.DataFrame, names: tuple[str, ...], n: int = 20) -> pd.DataFrame:
    """The ``n`` most confident errors: Error analysis's "confidently wrong" rows, p(gold)
    lowest first."""
    return readable(shown(df, CONFIDENTLY_WRONG, "p(gold), lowest first").head(n), names)


def most_uncertain(df: pd.DataFrame, names: tuple[str, ...], n: int = 20) -> pd.DataFrame:
    """The ``n`` rows of highest mutual information (Error analysis: all rows, sorted by it)."""
    return readable(shown(df, "all", "mutual information").head(n), names)
