"""The sidebar every page shares: checkpoint picker with its model card, temperatures, noise,
T, seed and the family's own controls. The state starts from the URL (``ui.state.parse``) once
per session and is written back to the URL on every run, so the address bar is always a link
to the current view."""

from __future__ import annotations

import streamlit as st

from ui import state as S
from ui.catalog import display_name, headline, label_names, sort_key, storage_line
from uqcore.config import FAMILY_TITLES
from uqcore.registry import CheckpointInfo
from uqcore.settings import NOISE_FAMILIES, TAU1_FAMILIES, TAU2_FAMILIES

TAU_GRID = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 40.0, 60.0, 100.0, 300.0, 1000.0)
KEYS = ("ckpt", "T", "seed", "tau1", "tau2", "noise", "bam", "em", "dropout")


def _trained(info: CheckpointInfo) -> dict:
    """The checkpoint's own inference values (what ``None`` overrides mean)."""
    a = info.config.get("attention", {})
    return {
        "tau1": float(a.get("tau1", 1.0)), "tau2": float(a.get("tau2", 1.0)),
        "noise": float(a.get("noise_scale", 1.0)), "bam": a.get("bam_inference", "sample"),
        "em": int(a.get("em_iterations", 0)), "dropout": float(info.config.get("dropout", 0.1)),
        "hard": bool(a.get("hard", False)),
    }  # fmt: skip


def init_session(infos: list[CheckpointInfo], params) -> list[str]:
    """Once per browser session: widget values from the URL. Returns notes about replaced
    values (to show once)."""
    if st.session_state.get("_ui_ready"):
        return []
    names = [i.name for i in infos]
    default = "cola-hsto" if "cola-hsto" in names else (names[0] if names else None)
    state, notes = S.parse(params, names, default)
    st.session_state["_ui_ready"] = True
    st.session_state["view"] = state
    info = next((i for i in infos if i.name == state.ckpt), None)
    _reset_widgets(state, info)
    return notes


def _reset_widgets(state: S.ViewState, info: CheckpointInfo | None, ckpt: bool = True) -> None:
    """Put ``state`` (overrides filled with the checkpoint's values) into the widget keys
    (``ckpt=False`` once the checkpoint picker exists in this run: it owns its key)."""
    if ckpt:
        st.session_state["ckpt"] = state.ckpt
    st.session_state["T"] = state.T
    st.session_state["seed"] = state.seed
    if info is None:
        return
    own = _trained(info)
    for key in ("tau1", "tau2", "noise", "bam", "em", "dropout"):
        value = getattr(state, key)
        st.session_state[key] = own[key] if value is None else value


def _on_checkpoint_change() -> None:
    """A new checkpoint starts from its own trained settings (T and seed stay)."""
    st.session_state["_new_ckpt"] = True


def _tau_options(*values: float) -> list[float]:
    return sorted({*TAU_GRID, *(float(v) for v in values)})


def _tau_slider(
    sb, key: str, what: str, own: dict, enabled: bool, help_on: str, no_such: str | None
) -> None:
    """A temperature select-slider labelled with the trained value; disabled with the reason
    (``no_such``: the family has no such temperature; else hard samples make it a no-op)."""
    why_hard = (
        "Disabled: this checkpoint samples *hard* (one-hot) attention, where the "
        "temperature only changes training gradients, never a sample."
    )
    sb.select_slider(
        f"{key}: {what} (trained {own[key]:g})", _tau_options(own[key], st.session_state[key]),
        key=key, disabled=not enabled,
        help=help_on if enabled else (no_such or why_hard),
    )  # fmt: skip


def unreadable_note(broken: list[tuple[str, str]]) -> None:
    """Say which checkpoint folders were left out of the picker, and why (never silently)."""
    if not broken:
        return
    with st.sidebar.expander(f"⚠️ {len(broken)} checkpoint folder(s) could not be read"):
        for name, why in broken:
            st.markdown(f"**{name}**: {why}")
        st.caption(
            "They are left out of the picker. Retrain one with "
            "`bash scripts/retrain.sh NAME`, or remove its folder."
        )


def render(infos: list[CheckpointInfo]) -> tuple[S.ViewState, CheckpointInfo | None]:
    """Draw the sidebar; return the current state and the chosen checkpoint's info."""
    sb = st.sidebar
    if not infos:
        sb.warning("No checkpoints found: train one with `python -m uqlab.train`.")
        st.session_state["_info"] = None
        return st.session_state.get("view", S.ViewState()), None
    infos = sorted(infos, key=sort_key)
    by_name = {i.name: i for i in infos}
    chosen = st.session_state.pop("_select_ckpt", None)  # e.g. a checkpoint just uploaded
    if chosen in by_name:
        st.session_state["ckpt"] = chosen
        st.session_state["_new_ckpt"] = True
    if st.session_state.get("ckpt") not in by_name:
        st.session_state["ckpt"] = infos[0].name
    sb.selectbox(
        "Checkpoint", list(by_name), key="ckpt", format_func=lambda n: display_name(by_name[n]),
        on_change=_on_checkpoint_change,
        help="Trained models, grouped by task and family. Each is a folder of safetensors "
        "weights + JSON under assets/checkpoints/.",
    )  # fmt: skip
    info = by_name[st.session_state["ckpt"]]
    own = _trained(info)
    # Streamlit drops a widget's key when a run ends before drawing it (a rerun cut it short,
    # as on a fresh server's deep link): refill every widget from the view, never the defaults
    lost = any(k not in st.session_state for k in ("T", "seed", "tau1", "tau2", "noise"))
    if st.session_state.pop("_new_ckpt", False) or lost:
        view = st.session_state.get("view", S.ViewState())
        _reset_widgets(S.ViewState(ckpt=info.name, T=view.T, seed=view.seed), info, ckpt=False)
    _model_card(sb, info)

    family, title = info.family, FAMILY_TITLES.get(info.family, info.family)
    sb.subheader("Sampling")
    sb.number_input(
        "Samples T",
        1,
        S.MAX_T,
        key="T",
        step=10,
        help="Stochastic forward passes of the input, drawn in one batched call.",
    )
    sb.number_input(
        "Seed",
        0,
        S.MAX_SEED,
        key="seed",
        step=1,
        help="Same seed, same samples: every number here is reproducible.",
    )
    hard = own["hard"]
    tau1_ok, tau2_ok = family in TAU1_FAMILIES and not hard, family in TAU2_FAMILIES and not hard
    _tau_slider(sb, "tau1", "keys → centroids", own, tau1_ok,
                "Temperature of the Gumbel-softmax that assigns each key to the learnable "
                "centroids: low = one centroid per key, high = a blend.",
                None if family in TAU1_FAMILIES else
                f"Disabled: {title} has no centroids; only H-STO-TRANS uses tau1.")  # fmt: skip
    _tau_slider(sb, "tau2", "attention over values", own, tau2_ok,
                "Temperature of softmax((QKᵀ + λ·g) / tau2): low = each token attends to one "
                "token, high = attention spreads evenly.",
                None if family in TAU2_FAMILIES else
                f"Disabled: {title} has no Gumbel-softmax attention; only STO-TRANS and "
                "H-STO-TRANS use tau2.")  # fmt: skip
    noise_ok = family in NOISE_FAMILIES
    sb.slider("Noise scale λ", *S.NOISE_RANGE, key="noise", step=0.05, disabled=not noise_ok,
              help="Multiplies the attention noise: 1 = as trained, 0 = the noise-free model."
              if noise_ok else f"Disabled: {title} has no attention noise.")  # fmt: skip
    if family == "bam":
        sb.radio("BAM attention", ("sample", "mean"), key="bam", horizontal=True,
                 help="'sample' draws Weibull attention weights; 'mean' uses their mean "
                 "(deterministic).")  # fmt: skip
    if family == "probtrans":
        sb.slider("EM iterations", 0, S.MAX_EM, key="em",
                  help="Key adaptation steps at inference (0 = the trained keys).")  # fmt: skip
    if family in ("mcdropout", "bayesformer"):
        sb.slider("Dropout rate (kept on)", *S.DROPOUT_RANGE, key="dropout", step=0.05,
                  help="The rate of the masks drawn at inference.")  # fmt: skip

    def override(key: str, enabled: bool):
        value = st.session_state[key]
        return None if not enabled or value == own[key] else value

    view = st.session_state.get("view", S.ViewState())
    view = view.replace(
        ckpt=info.name, T=int(st.session_state["T"]), seed=int(st.session_state["seed"]),
        tau1=override("tau1", tau1_ok), tau2=override("tau2", tau2_ok),
        noise=override("noise", noise_ok), bam=override("bam", family == "bam"),
        em=override("em", family == "probtrans"),
        dropout=override("dropout", family in ("mcdropout", "bayesformer")),
    )  # fmt: skip
    if view.label is not None and view.label >= len(label_names(info)):
        view = view.replace(label=None)
    st.session_state["view"] = view
    st.session_state["_info"] = info
    return view, info


def current() -> tuple[S.ViewState, CheckpointInfo | None]:
    """The state and checkpoint the sidebar settled on in this run (for the pages)."""
    return st.session_state.get("view", S.ViewState()), st.session_state.get("_info")


def set_view(**changes) -> S.ViewState:
    """Change the shared state from a page (e.g. the submitted text) and update the URL."""
    view = st.session_state.get("view", S.ViewState()).replace(**changes)
    st.session_state["view"] = view
    sync_url(view)
    return view


def _model_card(sb, info: CheckpointInfo) -> None:
    with sb.expander("Model card", expanded=False):
        cfg = info.config
        st.markdown(
            f"**{FAMILY_TITLES.get(info.family, info.family)}** on **{info.task}** · "
            f"{cfg.get('n_layers')} layer(s), {cfg.get('n_heads')} heads, width "
            f"{cfg.get('d_model')}, vocabulary {cfg.get('vocab_size'):,}, up to "
            f"{cfg.get('max_len')} tokens."
        )
        splits = info.training.get("splits")
        if splits:
            st.caption("Data: " + ", ".join(f"{k} {v:,}" for k, v in splits.items()))
        st.caption(headline(info))
        stored = storage_line(info)
        if stored:
            st.caption(stored)
        if info.card:
            st.markdown(info.card.split("\n", 2)[-1])


def sync_url(view: S.ViewState) -> None:
    """Write the view into the address bar (only when it changed, to avoid churn)."""
    params = S.to_params(view)
    current = {k: st.query_params.get(k) for k in st.query_params}
    if current != params:
        st.query_params.from_dict(params)


def ensure_router() -> None:
    """Call first in every page. Streamlit runs a ``pages/*.py`` file by itself (its legacy
    multipage mode) when a fresh server's first request is a deep link such as ``/results``;
    then app.py, with the sidebar and the URL state, has not run. ``st.navigation`` (public API)
    switches that mode off for the server, and the rerun goes through app.py to this page."""
    if st.session_state.get("_ui_ready"):
        return
    from ui.routes import pages

    try:
        st.navigation(pages(), position="hidden")  # the same pages, so the deep link resolves
    except st.errors.StreamlitAPIException:
        pass  # already called in this run: the mode is off all the same
    st.rerun()


def page(title: str) -> tuple[S.ViewState, CheckpointInfo]:
    """Start a page that needs a checkpoint: route check, title, the sidebar's state; without
    any checkpoint the page stops with a hint."""
    ensure_router()
    st.title(title)
    view, info = current()
    if info is None:
        st.info("No checkpoint available: train one (`python -m uqlab.train`, or "
                "`bash scripts/retrain.sh all`) and reload.")  # fmt: skip
        st.stop()
    return view, info
