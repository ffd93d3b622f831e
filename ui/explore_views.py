"""The views of the explore page, one function each, from the cached result of
:func:`ui.logic.compute.explore`. Each view has a short plain-language explanation for a
classroom."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pandas as pd
import streamlit as st

from ui import cached
from ui.logic import keys as K
from ui.logic.catalog import lac_scores
from ui.logic.compute import (
    ExploreResult,
    Summary,
    hide_future,
    identical,
    running_mean,
    uniform_prior,
)
from ui.logic.exports import csv_text, download, figure_file
from ui.logic.format import mean_pm_var, plain, sig
from ui.logic.glossary import glossary_markdown
from ui.logic.lesson import LINKS
from ui.logic.state import ViewState, explorer_url
from uqcore.families import FAMILIES, get_family
from uqcore.stats import conformal_from_scores
from viz import figures as F
from viz.titles import as_figure

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


def tokens_for_axes(res: ExploreResult) -> list[str]:
    return [f"{t}⟨unk⟩" if u else t for t, u in zip(res.tokens, res.unknown, strict=True)]


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


def sample_caption(res: ExploreResult) -> str:
    """What the histogram's samples are: the family's ``FamilySpec.sample_is``, or, when every
    sample is the same (a deterministic family, settings that draw nothing at random, T = 1),
    that instead of how to read a spread."""
    T = len(res.probs)  # noqa: N806
    spec = FAMILIES.get(res.family)
    what = spec.sample_is if spec else "Each sample is one forward pass of the model."
    if T == 1:
        return f"{what} Here T = 1: one sample, so there is no spread to see (raise T)."
    if not identical(res.probs):
        return (
            f"{what} A narrow spike means the samples agree; a wide spread means the model "
            "is unsure."
        )
    if spec is not None and not spec.can_vary:
        return f"{what} The histogram is one spike: the model's one answer."
    if not res.stochastic:
        return (
            f"With these settings every sample is the same: nothing is drawn at random (a "
            f"noise scale of 0, BAM's mean mode or no dropout), so all {T} samples are "
            f"identical and the histogram is one spike. Otherwise: {what}"
        )
    return f"{what} Here all {T} samples came out the same, so the histogram is one spike."


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
                lambda: F.prediction_histogram.spec(res.probs, names, s.target, gold),
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
                lambda: F.running_mean_figure.spec(*running_mean(res.probs[:, s.target]), target),
            ),
            "running_mean",
        )
        st.caption(
            "Averaging samples gives the prediction; the band shrinks like 1/√T, "
            "so a few dozen samples usually settle the mean."
        )


@st.fragment
def attention(res: ExploreResult, n_layers: int, n_heads: int) -> None:
    """Layer/head pickers, a sample slider (only when the samples' maps differ) and the colour
    scale toggles, rerun on their own (a fragment)."""
    tokens = tokens_for_axes(res)
    kept = res.captured
    c1, c2, c3 = st.columns([1, 1, 3])
    layer = c1.selectbox("Layer", range(n_layers), index=n_layers - 1, key=K.ATT_LAYER)
    head = c2.selectbox("Head", range(n_heads), key=K.ATT_HEAD)
    lo, hi = token_window(len(tokens), K.ATT_WINDOW)
    # identical maps (a deterministic attention, noise off, T = 1): nothing to pick from
    same = identical(res.maps[layer].attention[:, head, lo:hi, lo:hi])
    t = 0 if same else c3.slider("Sample", 0, kept - 1, 0, key=K.ATT_SAMPLE)
    a1, a2 = st.columns(2)
    # off by default (issue 45): on, a near-uniform map (tau2 = 50) was drawn as a solid dark
    # square, its darkest colour the largest of nearly equal weights; the fixed [0, 1] scale
    # shows it pale, as flat as it is, and compares across settings
    auto = a1.toggle(
        "Auto-scale the colours",
        value=False,
        key=K.ATT_AUTO,
        help="On: darkest = the largest weight shown, so a flat map is readable. "
        "Off: white = 0 and darkest = 1, the same on every figure, so a uniform "
        "row looks pale.",
    )
    # off by default: a fixed [0, 0.5] spread scale, so more disagreement looks darker
    auto_spread = not same and a2.toggle(
        "Auto-scale the spread",
        value=False,
        key=K.ATT_AUTO_SPREAD,
        help=f"Off: the standard-deviation map runs from 0 to {F.STD_MAX:g}, the largest "
        "spread a weight between 0 and 1 can have, the same for every setting, so a paler "
        "map means the samples disagree less. On: darkest = the largest spread shown, to "
        "see where they disagree when they hardly do.",
    )
    specs, same = figure(
        res,
        "attention",
        (layer, head, t, lo, hi, auto, auto_spread),
        lambda: attention_spec(res, tokens, layer, head, t, lo, hi, auto, auto_spread),
    )
    view = {
        "layer": layer,
        "head": head,
        "sample": t,
        "tokens": f"{lo}-{hi - 1}",
        "auto_scale": auto,
        "auto_spread": auto_spread,
    }
    # one figure per panel in columns: side by side on a wide screen, stacked on a phone (a
    # faceted figure would squeeze three maps into a phone's width); bottoms aligned, so the
    # maps line up under the first one's title
    for i, (col, spec) in enumerate(
        zip(st.columns(len(specs), vertical_alignment="bottom"), specs, strict=True)
    ):
        with col:
            chart_spec(spec, ATTENTION_KEYS[i], view)
    spec = specs[-1]
    more = f" Maps are kept for the first {kept} samples." if kept < len(res.probs) else ""
    if same:
        spread = (
            f"{'Every one of the ' + str(kept) + ' samples' if kept > 1 else 'The one sample'}"
            " has this same map (a deterministic attention, or T = 1), so the mean is this "
            "map and the standard deviation is 0 everywhere: no std map is drawn."
        )
    elif auto_spread:
        top = spec["layout"]["coloraxis2"]["cmax"]
        spread = (
            "The standard-deviation map (orange) shows where the samples disagree, scaled "
            f"to its own largest value ({top:.3g}): compare where they disagree, not how "
            "much, across settings."
        )
    else:
        spread = (
            "The standard-deviation map (orange) shows where the samples disagree, on a "
            f"fixed scale from 0 to {F.STD_MAX:g} (the largest standard deviation a weight "
            "between 0 and 1 can have), the same for every setting: paler means the samples "
            "disagree less."
        )
    st.caption(
        "Row = the token that attends (query), column = the token it reads (key); each "
        "row sums to 1. " + spread + more
    )


ATTENTION_KEYS = ("attention", "attention_mean", "attention_std")  # the panels' figure names


def attention_spec(
    res: ExploreResult,
    tokens: list[str],
    layer: int,
    head: int,
    t: int,
    lo: int,
    hi: int,
    auto: bool,
    auto_spread: bool = False,
) -> tuple[list[dict], bool]:
    """The attention figures' plotly JSON, one per panel (sample ``t``, the mean and the
    standard deviation of the captured samples, tokens ``lo:hi``; the first carries the title),
    and whether every sample has the same map (then only that map is drawn). ``auto``: the
    weights' scale, shared by the sample and the mean, runs up to the largest weight shown
    (else to 1); ``auto_spread``: the standard deviation's scale runs up to its largest value
    (else to :data:`viz.figures.STD_MAX`, the same for every setting)."""
    kept = res.captured
    maps = res.maps[layer].attention[:, head, lo:hi, lo:hi].astype(np.float32)  # [Tc,W,W]
    same = identical(maps)  # deterministic, or T = 1: a std map would be a blank square
    maps = hide_future(maps, res.causal)  # a decoder's later keys: empty, not zero
    panels = (
        {"every sample" if kept > 1 else "sample 0": maps[0]}
        if same
        else {
            f"sample {t}": maps[t],
            f"mean of {kept}": maps.mean(0),
            f"std of {kept}": maps.std(0),
        }
    )
    spread = f"std of {kept}"
    weights = [m for name, m in panels.items() if name != spread]
    top = 1.0 if not auto else float(max(np.nanmax(m) for m in weights) or 1.0)
    title = f"Attention, layer {layer}, head {head}"
    if hi - lo < len(tokens):
        title += f", tokens {lo}-{hi - 1} of {len(tokens)}"
    specs = [
        F.attention_panels.spec(
            {name: m},
            tokens[lo:hi],
            title if i == 0 else "",
            zmax=top,
            own_scale=(spread,),
            own_zmax=None if auto_spread else F.STD_MAX,
        )
        for i, (name, m) in enumerate(panels.items())
    ]
    return specs, same


WINDOW = 64  # tokens shown at once in the token x token maps (a 512-token map is unreadable)


def token_window(n: int, key: str) -> tuple[int, int]:
    """``(lo, hi)`` of the tokens shown: all of them up to WINDOW, else a window the user moves
    (the rows keep summing to 1 over all keys; the window only crops the picture)."""
    if n <= WINDOW:
        return 0, n
    start = st.slider(
        f"First token shown (a window of {WINDOW} of the {n} tokens)",
        0,
        n - WINDOW,
        0,
        step=8,
        key=key,
    )
    return start, start + WINDOW


@st.fragment
def centroids(res: ExploreResult, n_layers: int, names: tuple[str, ...]) -> None:
    tokens = tokens_for_axes(res)
    c1, c2, c3 = st.columns([1, 1, 3])
    layer = c1.selectbox("Layer", range(n_layers), index=n_layers - 1, key=K.CEN_LAYER)
    kept, n_heads = res.maps[layer].centroids.shape[:2]  # [Tc, H, L, c]
    head = c2.selectbox("Head", range(n_heads), key=K.CEN_HEAD)
    same = identical(res.maps[layer].centroids[:, head])  # no noise, or T = 1: nothing to pick
    t = 0 if same else c3.slider("Sample", 0, kept - 1, 0, key=K.CEN_SAMPLE)
    lo, hi = token_window(len(tokens), K.CEN_WINDOW)

    def assignments():
        p = res.maps[layer].centroids[:, head].astype(np.float32)  # [Tc, L, c]
        hits = np.eye(p.shape[-1])[p.argmax(-1)].mean(0)  # [L, c] share of samples
        return F.centroid_panels.spec(p[t, lo:hi], hits[lo:hi], tokens[lo:hi], t)

    def usage():
        p = res.maps[layer].centroids[:, head].astype(np.float32)  # [Tc, L, c]
        weights = p.mean((0, 1))  # [c]
        return F.bar_figure.spec(
            weights,
            [f"centroid {j}" for j in range(weights.size)],
            "Centroid usage (mean weight over tokens and samples)",
            "mean weight",
        )

    where = {"layer": layer, "head": head}
    chart_spec(
        figure(res, "centroids", (layer, head, t, lo, hi), assignments),
        "centroids",
        {**where, "sample": t, "keys": f"{lo}-{hi - 1}"},
    )
    st.caption(
        f"Left, P of sample {t}: the centroid assignment probabilities of each key (a "
        "row per key token, a column per centroid; each row sums to 1). Right: the share "
        "of the samples in which each key's largest probability falls on each centroid."
    )
    chart_spec(figure(res, "centroid_usage", (layer, head), usage), "centroid_usage", where)
    st.caption(
        "H-STO-TRANS replaces each key by a mix of a few learned centroids, drawn with "
        "Gumbel noise at temperature tau1. Tokens that switch centroid between samples "
        "are where the keys, and so the attention, are uncertain."
    )


@st.fragment
def bam(res: ExploreResult, n_layers: int, names: tuple[str, ...]) -> None:
    tokens = tokens_for_axes(res)
    c1, c2, c3 = st.columns([1, 1, 3])
    layer = c1.selectbox("Layer", range(n_layers), index=n_layers - 1, key=K.BAM_LAYER)
    m = res.maps[layer]
    head = c2.selectbox("Head", range(m.attention.shape[1]), key=K.BAM_HEAD)
    query = c3.selectbox(
        "Query token", range(len(tokens)), format_func=lambda i: tokens[i], key=K.BAM_QUERY
    )
    lo, hi = token_window(len(tokens), K.BAM_WINDOW)  # the keys shown

    def prior_post():
        prior = m.prior[0, head, lo:hi].astype(np.float32)  # [W] (from the keys only)
        mean = m.posterior_mean[0, head, query, lo:hi].astype(np.float32)  # [W]
        samples = m.attention[:5, head, query, lo:hi].astype(np.float32)  # [<=5, W]
        return F.prior_posterior_figure.spec(prior, mean, samples, tokens[lo:hi], tokens[query])

    chart_spec(
        figure(res, "prior_post", (layer, head, query, lo, hi), prior_post),
        "prior_post",
        {"layer": layer, "head": head, "query": tokens[query], "keys": f"{lo}-{hi - 1}"},
    )
    uniform_note(res, m.prior[0])
    if m.kl_per_head is not None:

        def kl_bars():
            n = len(tokens)
            rows = 1 if layer == n_layers - 1 else n  # the last layer's KL covers the [CLS] row
            kl = m.kl_per_head[0] / (rows * n)  # [H] mean over the attended (query, key) pairs
            return F.bar_figure.spec(
                kl,
                [f"head {h}" for h in range(kl.size)],
                f"Mean KL(posterior ‖ prior) per token pair, layer {layer}",
                "nats per (query, key) pair",
            )

        chart_spec(figure(res, "kl", (layer, n_layers), kl_bars), "kl", {"layer": layer})
    st.caption(
        "Bayesian attention: the prior (from the keys alone) says which tokens matter "
        "before looking at the query; the posterior updates it for this query, and "
        "samples scatter around the posterior mean. The KL bar is the KL divergence of "
        "each head's posterior attention weights from the prior, averaged over the token "
        "pairs it covers (every query row in earlier layers; the [CLS] row in the last "
        "layer, the one the prediction reads): how far, per weight, the query moved the "
        "attention away from what the keys alone suggest."
    )


LEARNED_PRIOR = LINKS["prior"].ckpt  # the BAM whose prior is farthest from uniform on dev data


def uniform_note(res: ExploreResult, prior: np.ndarray) -> None:
    """Say so when a layer's BAM prior ``prior [H, n]`` is (nearly) uniform
    (:func:`ui.logic.compute.uniform_prior`): its KL then only measures how peaked the posterior
    is. Points at :data:`LEARNED_PRIOR` (a link on the same text) when it is available."""
    if not uniform_prior(prior):
        return
    n = prior.shape[-1]
    fixed = float(np.ptp(prior.astype(np.float32))) < 1e-6  # the same weight on every key
    why = (
        "this model has no learned prior, its prior is fixed (a BAM with a fixed prior, or a "
        "pretrained model made stochastic without training)"
        if fixed
        else "every key gets about the same share (within 20 %)"
    )
    text = (
        f"This layer's prior is (nearly) uniform, about 1/{n} on each of the {n} keys: {why}. "
        "The samples still scatter around the posterior, but the KL bar only measures how "
        "peaked the posterior is (how far it is from uniform), not how far the query moved "
        "the attention from what the keys suggest, so it says little about the heads."
    )
    if LEARNED_PRIOR in {i.name for i in cached.infos()}:
        link = explorer_url(
            ViewState(ckpt=LEARNED_PRIOR, text=res.text, T=len(res.probs), seed=res.seed)
        )
        text += f" For a prior that is learned, open [{LEARNED_PRIOR}]({link})."
    st.info(text, icon=":material/info:")


@st.fragment
def probtrans(res: ExploreResult, n_layers: int, names: tuple[str, ...]) -> None:
    tokens = tokens_for_axes(res)
    c1, c2, _ = st.columns([1, 1, 3])
    layer = c1.selectbox("Layer", range(n_layers), index=n_layers - 1, key=K.EM_LAYER)
    m = res.maps[layer]
    head = c2.selectbox("Head", range(m.attention.shape[1]), key=K.EM_HEAD)
    if m.attention_before_em is None:
        st.info("EM iterations are 0: the keys are not adapted. Raise them in the sidebar.")
        return
    lo, hi = token_window(len(tokens), K.EM_WINDOW)

    def em():
        before = m.attention_before_em[0, head, lo:hi, lo:hi].astype(np.float32)
        after = m.attention[0, head, lo:hi, lo:hi].astype(np.float32)
        return F.attention_panels.spec(
            {
                "trained keys (prior)": before,
                "after EM (posterior)": after,
                "difference": np.abs(after - before),
            },
            tokens[lo:hi],
            f"Attention before and after EM, layer {layer}, head {head}",
            own_scale=("difference",),
        )

    chart_spec(
        figure(res, "em", (layer, head, lo, hi), em),
        "em",
        {"layer": layer, "head": head, "tokens": f"{lo}-{hi - 1}"},
    )
    if res.probs_before_em is not None:
        cols = st.columns(len(names))
        for c, name in enumerate(names):
            before_p, after_p = float(res.probs_before_em[c]), float(res.probs[0, c])
            cols[c].metric(
                f"p({plain(name)}) after EM",
                f"{after_p:.3f}",
                delta=f"{after_p - before_p:+.3f} vs trained keys",
            )
    st.caption(
        "A Probabilistic Transformer treats keys as Gaussian means and adapts them to "
        "this input's queries by EM before attending: keys move toward the queries "
        "that claim them, pulled back by their prior precision."
    )


def settings_record(res: ExploreResult, name: str, family: str) -> dict[str, object]:
    """What an export was made with: checkpoint, T, seed, and the values of the knobs the
    family reads (after the sidebar's overrides), plus the text."""
    spec = get_family(family)
    knobs = {k: getattr(res.settings, k) for k in spec.knobs if hasattr(res.settings, k)}
    if res.settings.dropout_on:
        knobs["dropout"] = res.settings.dropout
    if res.read_len > res.trained_len > 0:  # a longer reading than trained: recorded
        knobs["read_len"] = res.read_len
    return {"checkpoint": name, "T": len(res.probs), "seed": res.seed, **knobs, "text": res.text}


TEXT_KEYS = ("text", "edited_text")  # free text: inside the files, never in their names


def export_stem(record: dict[str, object]) -> str:
    """A file name stem that tells exports of other settings apart, e.g.
    ``cola-hsto-T50-seed1-tau1_1-tau2_40`` (every entry but the texts, :data:`TEXT_KEYS`)."""
    parts = [str(record["checkpoint"]), f"T{record['T']}", f"seed{record['seed']}"]
    for key, value in record.items():
        if key not in ("checkpoint", "T", "seed", *TEXT_KEYS):
            shown = f"{value:g}" if isinstance(value, float) else str(value)
            parts.append(f"{key}_{shown}")
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", "-".join(parts))


def export(res: ExploreResult, names: tuple[str, ...], name: str, family: str) -> None:
    """CSV of per-sample probabilities, NPZ of every array, and the figures as SVG/PNG, each
    recording its settings (in the file name and inside). The files are built when a button
    is pressed (deferred download data), not on every render."""
    record = settings_record(res, name, family)
    stem = export_stem(record)
    c1, c2, c3 = st.columns(3)
    download(
        c1, "Samples (CSV)", lambda: samples_csv(res, names, record), f"{stem}.csv", "text/csv"
    )
    download(
        c2,
        "All arrays (NPZ)",
        lambda: arrays_npz(res, record),
        f"{stem}.npz",
        "application/octet-stream",
    )
    with c3.popover("Figures (SVG / PNG)"):
        figures_export(stem, record)


def samples_csv(res: ExploreResult, names: tuple[str, ...], record: dict) -> str:
    """The settings as ``# key: value`` lines, then one row per sample: its class
    probabilities, then the settings again (the same on each row)."""
    frame = pd.DataFrame(res.probs, columns=[f"p_{n}" for n in names])
    frame.insert(0, "sample", np.arange(len(frame)))
    for key, value in record.items():
        frame[key] = value
    return csv_text(frame, record)


def arrays_npz(res: ExploreResult, record: dict) -> bytes:
    """Every array of the result (probabilities, tokens, each layer's maps) and the settings
    (``settings``: a JSON string), compressed."""
    arrays = {
        "probs": res.probs,
        "tokens": np.array(res.tokens),
        "settings": np.array(json.dumps(record)),
    }
    for layer, maps in res.maps.items():
        for name, value in maps.items():  # LayerMaps: the fields that are set
            arrays[f"layer{layer}_{name}"] = value
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def figure_record(record: dict[str, object], view: dict[str, object]) -> dict[str, object]:
    """The settings of one figure's file: the sidebar's ``record`` (:func:`settings_record`),
    then its ``view``'s own (:func:`chart`'s ``settings``), the texts last."""
    texts = {k: v for k, v in {**record, **view}.items() if k in TEXT_KEYS}
    rest = {k: v for k, v in {**record, **view}.items() if k not in TEXT_KEYS}
    return {**rest, **texts}


def figures_export(stem: str, record: dict) -> None:
    """The export panel: pick one of this run's figures and a format, then download it with
    its settings inside and in its file name (the view's own ones too, :func:`figure_record`;
    ``stem``: :func:`export_stem` of ``record``)."""
    figs = st.session_state.get(K.FIGURES, {})
    if not figs:
        st.write("No figures yet.")
        return
    key = st.selectbox("Figure", list(figs), key=K.EXPORT_FIG)
    fmt = st.radio("Format", ("svg", "png"), horizontal=True, key=K.EXPORT_FMT)
    view = st.session_state.get(K.FIGURE_SETTINGS, {}).get(key, {})
    if view:
        record = figure_record(record, view)
        stem = export_stem(record)
    if st.button("Render", key=K.EXPORT_RENDER):
        try:
            data = figure_file(figs[key], fmt, record)  # the settings inside the file too
        except Exception as exc:  # noqa: BLE001 - kaleido needs a Chrome/Chromium on the server
            st.error(
                f"Static export needs Chromium on the server ({type(exc).__name__}). "
                "Use the camera icon on any chart to save a PNG from the browser."
            )
            return
        download(
            st,
            f"Download {key}.{fmt}",
            data,
            f"{stem}-{key}.{fmt}",
            f"image/{'svg+xml' if fmt == 'svg' else 'png'}",
        )


# The family's own maps (FamilySpec.maps), each with its view: the page shows, in this order,
# those the checkpoint's family produces. A new kind of map = one view + one entry here.
MAP_VIEWS = {
    "centroids": ("Centroid assignments", centroids),
    "prior": ("Prior versus posterior attention", bam),
    "attention_before_em": ("Before and after EM key adaptation", probtrans),
}
