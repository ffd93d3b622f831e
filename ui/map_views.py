"""The explorer's map views, one function each (a fragment: its pickers rerun it alone): the
attention of a layer and head for every family, then the family's own maps (:data:`MAP_VIEWS`:
H-STO's centroids, BAM's prior and posterior, the Probabilistic Transformer's EM). Their figures
come from :mod:`uqlab.workbench.explore_figures` and :mod:`uqlab.workbench.figures`."""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui import cached
from ui.explore_views import chart_spec, figure
from ui.logic import keys as K
from ui.logic.format import plain
from ui.logic.lesson import LINKS
from ui.logic.state import ViewState, explorer_url
from uqlab.workbench import figures
from uqlab.workbench.compute import ExploreResult, identical, uniform_prior
from uqlab.workbench.explore_figures import (
    WINDOW,
    attention_caption,
    attention_spec,
    tokens_for_axes,
    window,
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
        help=f"Off: the standard-deviation map runs from 0 to {figures.STD_MAX:g}, the largest "
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
    st.caption(attention_caption(specs[-1], same, auto_spread, kept, len(res.probs)))


ATTENTION_KEYS = ("attention", "attention_mean", "attention_std")  # the panels' figure names


def token_window(n: int, key: str) -> tuple[int, int]:
    """``(lo, hi)`` of the tokens shown: all of them up to WINDOW, else a window the user moves
    (the rows keep summing to 1 over all keys; the window only crops the picture)."""
    if n <= WINDOW:
        return window(n)
    start = st.slider(
        f"First token shown (a window of {WINDOW} of the {n} tokens)",
        0,
        n - WINDOW,
        0,
        step=8,
        key=key,
    )
    return window(n, start)


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
        return figures.centroid_panels.spec(p[t, lo:hi], hits[lo:hi], tokens[lo:hi], t)

    def usage():
        p = res.maps[layer].centroids[:, head].astype(np.float32)  # [Tc, L, c]
        weights = p.mean((0, 1))  # [c]
        return figures.bar_figure.spec(
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
        return figures.prior_posterior_figure.spec(
            prior, mean, samples, tokens[lo:hi], tokens[query]
        )

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
            return figures.bar_figure.spec(
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
    (:func:`uqlab.workbench.compute.uniform_prior`): its KL then only measures how peaked the
    posterior is. Points at :data:`LEARNED_PRIOR` (a link on the same text) when it is available."""
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
        return figures.attention_panels.spec(
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


# The family's own maps (FamilySpec.maps), each with its view: the page shows, in this order,
# those the checkpoint's family produces. A new kind of map = one view + one entry here.
MAP_VIEWS = {
    "centroids": ("Centroid assignments", centroids),
    "prior": ("Prior versus posterior attention", bam),
    "attention_before_em": ("Before and after EM key adaptation", probtrans),
}
