"""The explorer's figures and captions that need no Streamlit: the tokens on the axes, what the
histogram's samples are, and the attention panels' plotly JSON (drawn by :mod:`ui.map_views`)."""

from __future__ import annotations

import numpy as np

from uqcore.families import FAMILIES
from uqlab.workbench import figures
from uqlab.workbench.compute import ExploreResult, hide_future, identical

WINDOW = 64  # tokens shown at once in the token x token maps (a 512-token map is unreadable)


def window(n: int, start: int = 0) -> tuple[int, int]:
    """``(lo, hi)`` of the tokens a map shows: all ``n`` up to :data:`WINDOW`, else the window of
    :data:`WINDOW` tokens from ``start`` (the rows keep summing to 1 over all keys; the window
    only crops the picture)."""
    if n <= WINDOW:
        return 0, n
    start = min(max(0, start), n - WINDOW)
    return start, start + WINDOW


def tokens_for_axes(res: ExploreResult) -> list[str]:
    return [f"{t}⟨unk⟩" if u else t for t, u in zip(res.tokens, res.unknown, strict=True)]


def sample_caption(res: ExploreResult) -> str:
    """What the histogram's samples are: the family's ``FamilySpec.sample_is``, or, when every
    sample is the same (a deterministic family, settings that draw nothing at random, T = 1),
    that instead of how to read a spread."""
    T = len(res.probs)
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
    (else to :data:`uqlab.workbench.figures.STD_MAX`, the same for every setting)."""
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
        figures.attention_panels.spec(
            {name: m},
            tokens[lo:hi],
            title if i == 0 else "",
            zmax=top,
            own_scale=(spread,),
            own_zmax=None if auto_spread else figures.STD_MAX,
        )
        for i, (name, m) in enumerate(panels.items())
    ]
    return specs, same


def attention_caption(spec: dict, same: bool, auto_spread: bool, kept: int, total: int) -> str:
    """How to read the attention panels: rows and columns, then the spread (none when every
    sample has the same map; the std panel ``spec``'s own top with ``auto_spread``; else the
    fixed :data:`uqlab.workbench.figures.STD_MAX`), and how many of the ``total`` samples kept
    maps."""
    more = f" Maps are kept for the first {kept} samples." if kept < total else ""
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
            f"fixed scale from 0 to {figures.STD_MAX:g} (the largest standard deviation a weight "
            "between 0 and 1 can have), the same for every setting: paler means the samples "
            "disagree less."
        )
    return (
        "Row = the token that attends (query), column = the token it reads (key); each "
        "row sums to 1. " + spread + more
    )
