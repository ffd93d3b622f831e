"""The explorer's numbers views, one function each, from the cached result of
:func:`uqlab.workbench.compute.explore` (notices, the Table 3 metrics, the conformal set, the
glossary, the prediction histogram), and the chart helpers every view draws with (:func:`chart`,
:func:`figure`, :func:`chart_spec`). The maps sit in :mod:`ui.map_views`, the export panel in
:mod:`ui.export_views`. Each view has a short plain-language explanation for a classroom."""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui import cached
from ui.logic import keys as K
from ui.logic.catalog import lac_scores
from ui.logic.format import mean_pm_var, plain, sig
from ui.logic.glossary import glossary_markdown
from uqcore.stats import conformal_from_scores
from uqlab.workbench import figures
from uqlab.workbench.compute import ExploreResult, Summary, running_mean
from uqlab.workbench.explore_figures import sample_caption
from uqlab.workbench.titles import as_figure

PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


def chart(fig, key: str, settings: dict[str, object] | None = None) -> None:
    """Draw ``fig`` and offer it to the export panel under ``key``, with ``settings``: the
    view's own choices (method, layer, window, ...) that its exported file records beside the
    sidebar's (:func:`figure_record`)."""
    st.plotly_chart(fig, width="stretch", config=PLOT_CONFIG, key=f"{K.FIGURE_PREFIX}{key}")
    st.session_state.setdefault(K.FIGURES, {})[key] = fig
    st.session_state.setdefault(K.FIGURE_SETTINGS, {})[key] = dict(settings or {})


def figure(res: ExploreResult, key: str, choices: tuple, build):
    """``build()`` (a figure's plotly JSON, or a tuple of it and what the view says about it),
    cached across sessions under the result's ``key``, the figure's ``key`` and the view's
    ``choices`` (:func:`ui.cached.figure`); built here when the result has no key."""
    return build() if res.key is None else cached.figure((res.key, key, *choices), build)


def chart_spec(spec: dict, key: str, settings: dict[str, object] | None = None) -> None:
    """:func:`chart` of a figure's plotly JSON (a figure of this session's own, so the export
    panel can lay it out for a file)."""
    chart(as_figure(spec), key, settings)


def notices(res: ExploreResult) -> None:
    longer = res.read_len > res.trained_len > 0
    if longer:
        st.warning(
            f"Read at up to {res.read_len:,} tokens, longer than the {res.trained_len:,} it was "
            "trained at: the model never saw texts this long, so these numbers describe it "
            "outside its training."
        )
    if res.n_dropped:
        at = "" if longer else f", the length it was trained at ({res.trained_len:,} tokens)"
        st.warning(
            f"The text is longer than the model reads{at}: only its first {res.n_used:,} "
            f"tokens are used ({res.n_dropped:,} dropped)."
        )
    if any(t.startswith("##") for t in res.tokens):
        st.caption(
            "Tokens are WordPiece pieces: ## marks a piece that continues the word "
            "before it (un ##play ##able)."
        )
    unknown = sum(res.unknown)
    if unknown:
        st.info(
            f"{unknown} of {len(res.tokens) - 1} tokens are not in the model's "
            "vocabulary; they are read as [UNK] (marked ⟨unk⟩ on the axes)."
        )
    if res.members is not None:  # a deep ensemble
        m = int(res.members.max()) + 1
        st.info(
            f"A deep ensemble's samples are its {m} members (sample t is member t mod {m}),"
            " so the seed does not change them."
        )
    elif not res.stochastic:
        st.info(
            "With these settings the model is deterministic: all T samples are identical, "
            "so the variance and the mutual information are 0."
        )


def summary_metrics(s: Summary, names: tuple[str, ...], gold: bool, one: bool = False) -> None:
    """The four Table 3 numbers of one sentence as metrics, written the same on every page.
    ``one``: a stranger's first screen, one notion of uncertainty (how the samples spread: the
    paper's mean ± variance and how many are right), the two others one click away."""
    target = plain(names[s.target])  # a label name a file gave: shown as text
    if one:
        c1, c2 = st.columns([1.5, 2])
        more = st.expander("Two more measures of uncertainty: entropy and mutual information")
        c3, c4 = more.columns(2)
    else:
        c1, c2, c3, c4 = st.columns([1.5, 1, 1, 1])
    c1.metric(
        f"p({target}) mean ± variance",
        mean_pm_var(s.p_mean, s.p_var),
        help="Mean and variance over the T samples of the probability of the "
        + (
            "gold label (the paper's Table 3 'Prob. Corr.')."
            if gold
            else "predicted class (give a gold label to score against it)."
        ),
    )
    c2.metric(
        "Correct / T" if gold else f"Samples predicting {target}",
        f"{s.correct} / {s.T}",
        help="Samples whose most probable class is the "
        + ("gold label (Table 3 'Corr./Total')." if gold else "mean prediction's class."),
    )
    c3.metric(
        "Predictive entropy",
        f"{s.entropy:.3f} nats",
        help="Entropy of the averaged prediction: all the uncertainty "
        f"(at most ln {len(names)} = {np.log(len(names)):.3f}).",
    )
    c4.metric(
        "Mutual information",
        f"{sig(s.mi)} nats",
        help="Predictive entropy minus the mean entropy of single samples: the part "
        "that comes from samples disagreeing (model uncertainty).",
    )


@st.fragment
def conformal(res: ExploreResult, names: tuple[str, ...], metrics: dict | None) -> None:
    """The sentence's split-conformal prediction set (LAC) at a coverage the user picks, from
    the calibration scores its evaluation stored (dev split), or why there is none."""
    calib = (metrics or {}).get("conformal_calibration") or {}
    scores = lac_scores(metrics)
    if not scores:
        st.caption(
            "No conformal set: this checkpoint has no calibration data (scores of its dev "
            "split, stored when the whole checkpoint is evaluated on the server)."
        )
        return
    c1, c2 = st.columns([1, 2])
    coverage = c1.slider(
        "Conformal coverage",
        0.50,
        0.99,
        0.90,
        0.01,
        key=K.CONF_COVERAGE,
        help="The share of inputs whose set holds the true label "
        "(guaranteed on data like the calibration split).",
    )
    sets = conformal_from_scores(scores, coverage, "lac").sets(res.probs.mean(0)[None])[0]
    chosen = [n for n, keep in zip(names, sets, strict=True) if keep]
    shown = "{" + ", ".join(chosen) + "}" if chosen else "{ } (empty)"
    meaning = (
        "both labels: at this coverage the model cannot rule either out"
        if len(chosen) > 1
        else "one label: confident enough at this coverage"
        if chosen
        else "no label reaches the threshold at this coverage"
    )
    c2.metric(f"Prediction set at {coverage:.0%} coverage", shown, help=meaning)
    c2.caption(
        f"{meaning}. Calibrated on the {calib.get('on', 'dev')} split with the "
        f"checkpoint's trained settings, T = {calib.get('samples')}, seed "
        f"{calib.get('seed')} (split conformal, LAC)."
    )


def glossary() -> None:
    """The glossary of the screen's units and acronyms (:data:`ui.logic.glossary.GLOSSARY`) in
    a popover, one plain sentence each."""
    with st.popover("Glossary", icon=":material/menu_book:"):
        st.markdown(glossary_markdown())


def predictions(res: ExploreResult, names: tuple[str, ...], gold: bool, one: bool = False) -> None:
    """Table 3 numbers (``res.summary``; ``one``: the first screen's single notion, see
    :func:`summary_metrics`) with the glossary, the histogram of predictions (its caption says
    what one sample is: :func:`sample_caption`) and the running mean."""
    s = res.summary
    target = names[s.target]
    summary_metrics(s, names, gold, one)
    glossary()
    left, right = st.columns(2)
    with left:
        chart_spec(
            figure(
                res,
                "histogram",
                (s.target, gold, names),
                lambda: figures.prediction_histogram.spec(res.probs, names, s.target, gold),
            ),
            "histogram",
        )
        st.caption(sample_caption(res))
    with right:
        chart_spec(
            figure(
                res,
                "running_mean",
                (s.target, target),
                lambda: figures.running_mean_figure.spec(
                    *running_mean(res.probs[:, s.target]), target
                ),
            ),
            "running_mean",
        )
        st.caption(
            "Averaging samples gives the prediction; the band shrinks like 1/√T, "
            "so a few dozen samples usually settle the mean."
        )
