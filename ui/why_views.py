"""The explorer's "Why is it unsure?" views, one function each: salience over the samples,
occlusion, an edit beside its original, and every head at once. They render what
:mod:`ui.logic.why` and :mod:`ui.cached` compute; each says what it shows in plain words."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import streamlit as st

from ui import cached, sidebar, work
from ui.explore_views import chart
from ui.logic import estimate, why
from ui.logic import keys as K
from ui.logic.exports import csv_text, download, export_stem, settings_record
from ui.logic.format import mean_pm_var, plain, sig
from ui.map_views import token_window
from uqcore.exceptions import UQError
from uqcore.settings import SamplingSettings
from uqcore.stats import mutual_information
from uqlab.workbench.compute import ExploreResult, hide_future
from uqlab.workbench.explore_figures import tokens_for_axes
from uqlab.workbench.figures import STD_MAX
from viz import why as W

SALIENCE_T = 200  # samples explained at most (the first ones of the explorer's T)
GRID_TOKENS = 24  # tokens per cell of the head grid (a window of a longer text)
AUTO_ROWS = 4_000  # samples x tokens explained without a click (gradient x input)
AUTO_OCCLUDED = 60_000  # removed words x samples x tokens sampled without a click


def switch() -> bool:
    """The switch that turns the views on for this session: off at first on a CPU server (they
    cost a backward pass, a sampling call per word and a large figure per sentence, which a
    class of thirty on different links would pay on every view), on at first on a GPU."""
    sidebar.keep(K.WHY_ON)  # on stays on across pages and sentences
    if K.WHY_ON not in st.session_state:
        st.session_state[K.WHY_ON] = cached.on_gpu()
    on = st.toggle(
        "Explain this prediction: salience over the samples, word-by-word edits, "
        "every head at once",
        key=K.WHY_ON,
        help="Stays on for this session, for every sentence you explore.",
    )
    if not on:
        st.caption(
            "Which words move each sample's probability, and which make the samples "
            "disagree; what removing or editing a word does; every layer and head of the "
            "attention at once."
        )
    return on


def _record(res: ExploreResult, name: str, family: str, **more) -> dict:
    return {**settings_record(res, name, family), **more}


def _highlighted(tokens: list[str], mean: np.ndarray, std: np.ndarray) -> str:
    """The text as coloured tokens: red raises the explained probability, blue lowers it,
    the stronger the colour the larger the mean; a dotted underline where the samples'
    spread is larger than the mean's size (they disagree on the token)."""
    top = float(np.abs(mean).max()) or 1.0
    out = []
    for tok, m, s in zip(tokens, mean, std, strict=True):
        a = min(1.0, abs(m) / top)
        rgb = "209,73,91" if m >= 0 else "31,95,191"
        line = "text-decoration: underline dotted 2px;" if s > abs(m) else ""
        out.append(
            f'<span title="{m:+.4f} ± {s:.4f}" style="background: rgba({rgb},{a:.2f});'
            f'padding: 1px 3px; margin: 1px; border-radius: 3px; {line}">'
            f"{html.escape(tok)}</span>"
        )
    return '<div style="line-height: 2.1; font-size: 1.05rem">' + " ".join(out) + "</div>"


def salience(
    res: ExploreResult, names: tuple[str, ...], name: str, family: str, settings: SamplingSettings
) -> None:
    """Which tokens move each sample's probability and the samples' disagreement
    (``settings``: the sidebar's overrides)."""
    s = res.summary
    c1, c2, c3 = st.columns([1, 1.4, 1])
    target = c1.selectbox(
        "Explain the class",
        range(len(names)),
        index=s.target,
        format_func=lambda i: names[i],
        key=K.WHY_CLASS,
    )
    method = c2.radio(
        "Method",
        list(why.METHOD_TITLES),
        format_func=why.METHOD_TITLES.get,
        horizontal=True,
        key=K.WHY_METHOD,
        help="Gradient × input: one backward pass, first order. Integrated "
        "gradients: the gradient averaged along a straight path from a baseline "
        "(every word replaced by padding) to the text; the attributions then add "
        "up to the change of p (completeness).",
    )
    ig = method == "integrated_gradients"
    steps = (
        int(
            c3.number_input(
                "Steps",
                4,
                128,
                32,
                step=4,
                key=K.WHY_STEPS,
                disabled=not ig,
                help="Points on the path (integrated gradients).",
            )
        )
        if ig
        else 1
    )
    T = min(len(res.probs), SALIENCE_T)
    key = cached.salience_key(
        name, res.text, T, res.seed, settings, int(target), method, steps, res.temperature
    )
    got = cached.salience_cached(key)
    auto = not ig and T * len(res.tokens) <= AUTO_ROWS
    if got is None and not auto and st.session_state.get(K.WHY_ASKED) != key:
        if not _asked(_salience_prompt(res, name, method, T, steps), ig):
            return
        st.session_state[K.WHY_ASKED] = key
    if got is None:
        try:
            got = work.run(
                f"{why.METHOD_TITLES[method]} of {T} samples",
                lambda progress: cached.salience(key, progress),
                key,
                what="Salience",
            )
        except UQError as exc:
            st.error(str(exc), icon="✋")
            return
    _show_salience(got, res, names, name, family)


def _salience_prompt(
    res: ExploreResult,
    name: str,
    method: str,
    T: int,
    steps: int,
) -> str:
    """What a salience run that waits for its button costs, with the time this server's recent
    runs of the same kind predict (:mod:`ui.logic.estimate`)."""
    members = None if res.members is None else res.members[:T]
    size = why.salience_size(T, steps, method, len(res.tokens), res.stochastic, members)
    kind = why.salience_kind(name, method)
    seconds, runs = estimate.RECENT.guess(kind, size)
    when = estimate.wording(seconds, runs, f"{why.METHOD_TITLES[method]} on {plain(name)}")
    if method == "integrated_gradients":
        return (
            f"Integrated gradients run {steps} forward and backward passes of all {T} "
            f"samples. {when}"
        )
    return (
        f"A long text: one forward and backward pass of {T} samples x {len(res.tokens)} "
        f"tokens waits for the button. {when}"
    )


def _asked(prompt: str, ig: bool) -> bool:
    """The prompt and its button in a placeholder: False until the button is pressed; once it
    is, the placeholder is cleared before the work starts, so only the result shows."""
    box = st.empty()
    with box.container():
        st.info(prompt)
        label = "Compute integrated gradients" if ig else "Compute the salience"
        pressed = st.button(label, key=K.WHY_GO, type="primary")
    if pressed:
        box.empty()
    return pressed


def _show_salience(a: why.Attribution, res, names, name: str, family: str) -> None:
    cls = names[a.target]
    said = plain(cls)  # in captions (markdown); charts take the name itself
    title = why.METHOD_TITLES[a.method] + (f", {a.steps} steps" if a.steps > 1 else "")
    if a.straight_through:
        st.warning(
            "These samples are hard (one-hot attention): its gradient is 0 almost "
            "everywhere, so the attributions are the straight-through surrogate's (the "
            "soft sample's gradient). The completeness gap below says how far they are "
            "from the real change.",
            icon="⚠️",
        )
    if len(res.probs) > a.T:
        st.caption(
            f"Salience explains the first {a.T} of the {len(res.probs)} samples (each "
            "one is a forward and a backward pass of its own)."
        )
    if a.members is not None:
        st.info(
            f"A deep ensemble: each of its {int(a.members.max()) + 1} members is explained "
            "once; sample t is member t mod M, so the spread is between members."
        )
    elif not a.stochastic:
        st.info(
            "With these settings every sample is the same, so the spread of the salience is "
            "0 and the mutual information has nothing to attribute."
        )
    lo, hi = token_window(len(a.tokens), K.WHY_WINDOW)
    tokens = tokens_for_axes(res)[lo:hi]
    view = {
        "explained": cls,
        "method": a.method,
        "steps": a.steps,
        "samples_explained": a.T,
        "tokens": f"{lo}-{hi - 1}",
    }
    chart(
        W.salience_strip(
            a.prob[:, lo:hi],
            tokens,
            f"Salience of p({cls}), {title}, T = {a.T}",
            f"attribution to p({cls})",
        ),
        "salience",
        view,
    )
    table = a.table()
    st.markdown(
        _highlighted(a.tokens[lo:hi], a.prob[:, lo:hi].mean(0), a.prob[:, lo:hi].std(0)),
        unsafe_allow_html=True,
    )
    st.caption(
        f"Bars: the mean over the {a.T} samples of each token's attribution to p({said}) "
        "(red raises it, blue lowers it), whiskers ± one standard deviation over the "
        "samples, grey dots the samples themselves, each with its own noise held fixed. "
        "In the text, a dotted underline marks tokens whose spread is larger than their "
        "mean: the samples disagree on what the word does."
        + (
            f" Tokens {lo}-{hi - 1} of {len(a.tokens)} are shown."
            if hi - lo < len(a.tokens)
            else ""
        )
    )
    if a.prob_gap is not None:
        target_change = a.probs[:, a.target] - a.base_probs[:, a.target]
        st.caption(
            f"Completeness: each sample's attributions add up to p({said}) at the text "
            f"minus at the baseline ({target_change.mean():+.3f} on average) within "
            f"{np.abs(a.prob_gap).max():.2g} (largest gap over the samples, "
            f"{a.steps} steps)."
            + (
                f" Mutual information: {a.mi_value - a.mi_base:+.3g} "
                f"nats to explain, gap {abs(a.mi_gap):.2g}."
                if a.mi_gap is not None
                else ""
            )
        )
        if np.abs(a.prob_gap).max() > 0.05:
            st.caption(
                "A gap this large means the path bends sharply for some samples: more "
                "steps follow it more closely (the gap shrinks as they grow)."
            )
    if a.mi is not None:
        chart(
            W.token_bars(
                a.mi[lo:hi],
                tokens,
                f"Which tokens raise the samples' disagreement? "
                f"Attribution of the mutual information ({sig(a.mi_value)} nats)",
                "attribution to MI (nats)",
            ),
            "salience_mi",
            view,
        )
        st.caption(
            "Red tokens raise the mutual information (the samples disagree more because "
            "of them), blue ones lower it. It is one statistic of all samples together, "
            "so it has one value per token, not a spread."
        )
    shown = table.assign(
        mean=table["mean"].map(lambda v: f"{v:+.4f}"), std=table["std"].map(lambda v: f"{v:.4f}")
    )
    st.dataframe(shown, hide_index=True, width="stretch", height=240)
    record = _record(res, name, family, **{k: v for k, v in view.items() if k != "tokens"})
    download(
        st,
        "Salience per token (CSV)",
        lambda: csv_text(table, record),
        f"salience-{export_stem(record)}.csv",
        "text/csv",
        key=K.WHY_CSV,
    )
    st.caption(f"Computed in {a.seconds:.2f} s on the server (cached for repeat views).")


def occlusion(res: ExploreResult, names: tuple[str, ...], name: str, family: str, sampler) -> None:
    """Each word removed in turn: how mean p(class) and the mutual information move."""
    words = res.text.split()
    cls = names[res.summary.target]
    if len(words) < 2:
        st.info("The text has a single word: there is nothing to remove (try the edit view).")
        return
    start = 0
    if len(words) > why.MAX_OCCLUDED:
        start = st.slider(
            f"First word removed (a window of {why.MAX_OCCLUDED} of the {len(words)} words)",
            0,
            len(words) - why.MAX_OCCLUDED,
            0,
            step=5,
            key=K.OCC_START,
        )
    lo, hi = why.occlusion_window(len(words), start)
    asked = (name, res.text, len(res.probs), res.seed, str(res.settings), lo, hi)
    big = (hi - lo) * len(res.probs) * len(res.tokens) > AUTO_OCCLUDED
    if big and st.session_state.get(K.OCC_ASKED) != asked:
        box = st.empty()
        with box.container():
            pressed = st.button(f"Remove each of these {hi - lo} words in turn", key=K.OCC_GO)
            if not pressed:
                st.caption(
                    f"A long text: each removal samples the whole text again ({hi - lo} texts"
                    f" x {len(res.probs)} samples), so it waits for the button."
                )
                return
        box.empty()  # pressed: only the result shows
        st.session_state[K.OCC_ASKED] = asked
    with st.spinner(f"Sampling {hi - lo} texts, {len(res.probs)} samples each…"):
        table = why.occlusion(res.text, res.probs, sampler, res.summary.target, lo, hi)
    ok = table.dropna(subset=["shift of p"])
    if ok.empty:
        st.info("No word could be removed (each removal left nothing the model reads).")
        return
    labels = [f"{w}" for w in ok["word"]]
    view = {"explained": cls, "occlusion": "remove one word", "words": f"{lo}-{hi - 1}"}
    chart(
        W.token_bars(
            ok["shift of p"].to_numpy(),
            labels,
            f"Mean p({cls}) after removing each word, minus the text's",
            f"shift of p({cls})",
            ok["se"].to_numpy() * 2,
        ),
        "occlusion",
        view,
    )
    chart(
        W.token_bars(
            ok["shift of MI"].to_numpy(),
            labels,
            "Mutual information after removing each word, minus the text's",
            "shift of MI (nats)",
        ),
        "occlusion_mi",
        view,
    )
    st.caption(
        f"Each word of the window removed in turn; every shortened text is sampled "
        f"T = {len(res.probs)} times (one batched call), with the noise the explorer "
        "draws for that text. Whiskers: ± 2 Monte Carlo standard errors of the shift: a "
        "bar inside them may be sampling noise. Numbers are positions among the words "
        "shown."
    )
    st.dataframe(table, hide_index=True, width="stretch", height=240)
    record = _record(res, name, family, **view)
    download(
        st,
        "Occlusion table (CSV)",
        lambda: csv_text(table, record),
        f"occlusion-{export_stem(record)}.csv",
        "text/csv",
        key=K.OCC_CSV,
    )


def edit(
    res: ExploreResult, names: tuple[str, ...], explore_text, n_layers: int, n_heads: int
) -> None:
    """Edit the sentence and see the original and the edit side by side."""
    if st.session_state.get(K.EDIT_OF) != res.text:  # a new sentence: start from it
        st.session_state[K.EDIT_TEXT] = res.text
        st.session_state[K.EDIT_OF] = res.text
    with st.form("edit"):
        st.text_area("Your edited sentence", key=K.EDIT_TEXT, height=80)
        st.form_submit_button("Compare with the original")
    typed = st.session_state[K.EDIT_TEXT]
    if typed == res.text:
        st.caption(
            "Change a word above and press Compare: the original and your edit are then "
            "sampled with the same checkpoint, settings, T and seed."
        )
        return
    try:
        other = explore_text(typed)
    except UQError as exc:
        st.error(str(exc), icon="✋")
        return
    target = res.summary.target
    cls = names[target]
    view = {"explained": cls, "edited_text": other.text}  # what was sampled (cut if long)
    chart(
        W.two_histograms(res.probs[:, target], other.probs[:, target], ("original", "edit"), cls),
        "edit_histograms",
        view,
    )
    rows = []
    for label, r in (("original", res), ("edit", other)):
        p = r.probs[:, target]
        rows.append(
            {
                "text": label,
                f"p({cls}) mean ± var": mean_pm_var(p.mean(), p.var()),
                "samples predicting it": f"{int((r.probs.argmax(1) == target).sum())} / {len(p)}",
                "entropy": f"{r.summary.entropy:.3f}",
                "MI": sig(float(mutual_information(r.probs[:, None])[0])),
            }
        )
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    pairs = why.aligned(res.tokens, other.tokens)
    if not pairs or not res.maps or not other.maps:
        return
    c1, c2 = st.columns(2)
    layer = c1.selectbox("Layer", range(n_layers), index=n_layers - 1, key=K.EDIT_LAYER)
    head = c2.selectbox("Head", range(n_heads), key=K.EDIT_HEAD)
    mean_a = res.maps[layer].attention[:, head].astype(np.float32).mean(0)  # [La, La]
    mean_b = other.maps[layer].attention[:, head].astype(np.float32).mean(0)  # [Lb, Lb]
    diff = why.attention_difference(mean_a, mean_b, pairs)
    shown = pairs[: why.MAX_OCCLUDED * 2]
    toks = [res.tokens[i] for i, _ in shown]
    chart(
        W.difference_map(
            diff[: len(shown), : len(shown)],
            toks,
            f"Mean attention, edit minus original, layer {layer}, head {head}",
        ),
        "edit_attention",
        {"layer": layer, "head": head, "shared_tokens": len(shown), **view},
    )
    st.caption(
        f"On the {len(pairs)} tokens both texts share (matched in order), the edit's mean "
        "attention over its samples minus the original's: red where the edit attends "
        "more, blue less. Rows of each map sum to 1 over all of its own tokens, so a "
        "removed word's weight reappears on the others."
        + (f" The first {len(shown)} shared tokens are shown." if len(shown) < len(pairs) else "")
    )


def head_grid(res: ExploreResult, n_layers: int, n_heads: int) -> None:
    """Every layer x head at once: the mean (or std) over samples of its attention map."""
    stat = st.radio(
        "Show",
        ("mean", "std"),
        horizontal=True,
        key=K.GRID_STAT,
        format_func={"mean": "mean over samples", "std": "standard deviation over samples"}.get,
    )
    n = len(res.tokens)
    lo, hi = 0, n
    if n > GRID_TOKENS:
        lo = st.slider(
            f"First token (a window of {GRID_TOKENS} of the {n} tokens)",
            0,
            n - GRID_TOKENS,
            0,
            key=K.GRID_WINDOW,
        )
        hi = lo + GRID_TOKENS
    maps = np.stack(
        [
            res.maps[layer].attention[:, :, lo:hi, lo:hi].astype(np.float32)
            for layer in range(n_layers)
        ],
        1,
    )  # [Tc, n_layers, H, K, K]
    grid = hide_future(maps.mean(0) if stat == "mean" else maps.std(0), res.causal)
    # short (the detail is in the caption): a long title wrapped into the column titles
    what = "Mean" if stat == "mean" else "Std of the"
    title = f"{what} attention, every layer and head"
    if hi - lo < n:
        title += f" (tokens {lo}-{hi - 1})"
    view = {"stat": stat, "tokens": f"{lo}-{hi - 1}"}
    chart(W.head_grid(grid, tokens_for_axes(res)[lo:hi], title, stat), "head_grid", view)
    st.caption(
        f"The {'mean' if stat == 'mean' else 'standard deviation'} of each attention map "
        f"over the {res.captured} captured samples. "
        "Row = layer (L0 at the top), column = head; in each cell, rows are the tokens "
        "that attend and columns the tokens they read. Hover for the values. "
        + (
            "Orange cells are where the samples disagree, on a fixed scale from 0 to "
            f"{STD_MAX:g} (the largest standard deviation a weight can have): pale means "
            "they hardly do."
            if stat == "std"
            else "Colours run from 0 to 1 on every text. Switch to the standard deviation to "
            "see where the samples disagree."
        )
    )
    _open_cell(n_layers, n_heads)


def _open(choice: str) -> None:
    """The "Open it" button's callback: set the detailed view's layer and head (its widgets
    are drawn after this, on the rerun) and remember the cell for the toast."""
    layer, head = (int(x) for x in choice.split(","))
    st.session_state[K.ATT_LAYER], st.session_state[K.ATT_HEAD] = layer, head
    st.session_state[K.GRID_OPENED] = (layer, head)


def _open_cell(n_layers: int, n_heads: int) -> None:
    """Pick a cell of the grid and open it in "Attention, sample by sample" above; a toast
    says so once it is done, and a caption says which cell that view shows."""
    opened = st.session_state.pop(K.GRID_OPENED, None)
    if opened is not None:
        st.toast(
            f"Opened layer {opened[0]}, head {opened[1]} in 'Attention, sample by sample' above.",
            icon=":material/north:",
        )
    cells = [f"{layer},{head}" for layer in range(n_layers) for head in range(n_heads)]
    c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
    pick = c1.selectbox(
        "Open a cell in the detailed view above",
        cells,
        key=K.GRID_PICK,
        format_func=lambda c: "layer {}, head {}".format(*c.split(",")),
    )
    c2.button(
        "Open it",
        key=K.GRID_OPEN,
        on_click=_open,
        args=(pick,),
        width="stretch",
        help="Sets the layer and head of 'Attention, sample by sample'.",
    )
    shown = (st.session_state.get(K.ATT_LAYER), st.session_state.get(K.ATT_HEAD))
    if None not in shown:
        st.caption(
            f"'Attention, sample by sample' above shows layer {shown[0]}, head {shown[1]}"
            + (" (the cell just opened)." if opened is not None else ".")
        )
