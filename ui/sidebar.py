"""The sidebar every page shares: checkpoint picker with its model card, temperatures, noise,
T, seed and the family's own controls. The state starts from the URL (``ui.logic.state.parse``) once
per session and is written back to the URL on every run, so the address bar is always a link
to the current view."""

from __future__ import annotations

import math

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui import guard
from ui.logic import keys as K
from ui.logic import state as view_state
from ui.logic.catalog import (
    base_line,
    headline,
    picker_labels,
    reading,
    sort_key,
    storage_line,
)
from ui.logic.format import plain
from uqcore.config import ModelConfig
from uqcore.families import FamilySpec, disabled_reason, get_family
from uqcore.families import title as family_title
from uqcore.knobs import KNOBS
from uqcore.registry import CheckpointInfo
from uqcore.settings import resolve
from uqlab.catalog.tasks import DEFAULT_CHECKPOINT, PAPER_CHECKPOINT, label_names, task_title
from uqlab.evaluation.detection_report import temperature_notes
from uqlab.models.intake import UPLOAD_PREFIX
from uqlab.workbench.dataset import fitted_temperature

PAPERS_SETUP = (
    "The paper's word-level set-up: a small transformer trained from scratch on "
    "the task's words (Pei et al., AAAI 2022)."
)
ALWAYS = tuple(k for k in K.KNOBS if KNOBS[k].always)  # drawn for every checkpoint
WHY_HARD = (
    "Disabled: this checkpoint samples *hard* (one-hot) attention, where the temperature only "
    "changes training gradients, never a sample."
)


def _trained(info: CheckpointInfo) -> dict:
    """The checkpoint's own inference values (what ``None`` overrides mean), by knob name."""
    fs = resolve(ModelConfig.from_dict(info.config))
    return {knob: getattr(fs, knob) for knob in (*K.KNOBS, "hard")}


def _enabled(spec: FamilySpec, own: dict, knob: str) -> tuple[bool, str]:
    """Whether the control of ``knob`` is live for this checkpoint, and its help text (the
    reason when it is not)."""
    if not spec.reads(knob):
        return False, disabled_reason(spec, knob)
    if KNOBS[knob].grid and own["hard"]:  # a temperature: moot for hard samples
        return False, WHY_HARD
    return True, KNOBS[knob].help


def init_session(infos: list[CheckpointInfo], params) -> list[str]:
    """Widget values from the URL: once per browser session, and again when the visitor
    pressed Back or Forward (each change of view is a history entry) to an address holding
    another view than the one this app last wrote. Any other run keeps the widgets' values,
    the one source of truth: a run started by a key press carries the address the browser
    showed at that moment, which lags behind the app's last write when presses come faster
    than runs (taking it for Back lost presses and left the link and the numbers apart).
    Returns notes about replaced values (to show once)."""
    current = {k: params.get(k) for k in params}
    written = st.session_state.get(K.LAST_PARAMS)
    # moving to another page drops the query (no "ckpt"): that is not a view to go back to
    back = (
        _history_navigation() and written is not None and "ckpt" in current and current != written
    )
    if st.session_state.get(K.UI_READY) and not back:
        return []
    names = [i.name for i in infos]
    state, notes = view_state.parse(params, names, _default(names, params.get("ckpt")))
    if st.session_state.get(K.UI_READY):  # Back / Forward: the explorer's boxes follow too
        st.session_state[K.TEXT_BOX] = state.text or ""
        st.session_state.pop(K.LABEL_BOX, None)
    else:
        st.session_state[K.FIRST_VISIT] = not params.get("text")  # a bare link: the landing
    st.session_state[K.UI_READY] = True
    st.session_state[K.VIEW] = state
    info = next((i for i in infos if i.name == state.ckpt), None)
    _reset_widgets(state, info)
    return notes


def _history_navigation() -> bool:
    """Whether this run was started by the browser's Back or Forward (Streamlit's run context
    says so; outside a server run, as in AppTest, it is never one)."""
    ctx = get_script_run_ctx()
    return bool(ctx is not None and getattr(ctx, "is_history_navigation", False))


def _default(names: list[str], linked: str | None) -> str | None:
    """The checkpoint a link without a (known) ``ckpt`` opens: the first-screen model
    (``DEFAULT_CHECKPOINT``), else the paper's model when the first cannot be loaded here, else
    the first one."""
    if linked in names:
        return linked  # the link decides; nothing to load for the default
    for name in (DEFAULT_CHECKPOINT, PAPER_CHECKPOINT):
        if name in names and guard.problem(name) is None:
            return name
    return names[0] if names else None


def _reset_widgets(
    state: view_state.ViewState, info: CheckpointInfo | None, ckpt: bool = True
) -> None:
    """Put ``state`` (overrides filled with the checkpoint's values) into the widget keys
    (``ckpt=False`` once the checkpoint picker exists in this run: it owns its key)."""
    if ckpt:
        st.session_state[K.CKPT] = state.ckpt
    st.session_state[K.T] = state.T
    st.session_state[K.SEED] = state.seed
    st.session_state[K.SCALED] = state.scaled
    if info is None:
        return
    own = _trained(info)
    for key in K.KNOBS:
        value = getattr(state, key)
        st.session_state[key] = own[key] if value is None else value


def _on_checkpoint_change() -> None:
    """A new checkpoint starts from its own trained settings (T and seed stay)."""
    st.session_state[K.NEW_CKPT] = True


def _grid_options(grid: tuple[float, ...], *values: float) -> list[float]:
    return sorted({*grid, *(float(v) for v in values)})


def _control(sb, knob: str, spec: FamilySpec, own: dict, key: str | None = None, **extra) -> bool:
    """Draw the sidebar control of ``knob`` (labelled with the trained value, disabled with the
    reason where the family does not read it); return whether it is live. ``key`` and ``extra``
    (width, on_change...) draw a copy elsewhere, labelled by the knob's short name
    (:func:`knob_row`)."""
    enabled, why = _enabled(spec, own, knob)
    info = KNOBS[knob]
    label = info.label if key is None else info.label.split(":")[0]
    key = key or knob
    if info.grid:  # a temperature: the trained value is in the options and the label
        options = _grid_options(info.grid, own[knob], st.session_state[knob])
        label = f"{label} (trained {own[knob]:g})"
        sb.select_slider(label, options, key=key, disabled=not enabled, help=why, **extra)
    elif info.choices:
        sb.radio(label, info.choices, key=key, horizontal=True, help=why, **extra)
    else:
        lo, hi = _reach(info.reach, own[knob], st.session_state.get(key))
        sb.slider(label, lo, hi, key=key, step=info.step, disabled=not enabled, help=why, **extra)
    return enabled


def _reach(bounds: tuple, *values) -> tuple:
    """A slider's ``bounds`` widened to hold ``values`` (the checkpoint's own setting, the
    current one): a checkpoint made at λ = 16 (cr-smollm2-words-sto) crashed the page on a
    slider that ended at 5. Values that are not finite numbers are left out."""
    lo, hi = bounds
    for v in values:
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
            lo, hi = min(lo, type(lo)(v)), max(hi, type(hi)(v))
    return lo, hi


def unreadable_note(broken: list[tuple[str, str]]) -> None:
    """Say which checkpoint folders were left out of the picker, and why (never silently)."""
    if not broken:
        return
    with st.sidebar.expander(f"⚠️ {len(broken)} checkpoint folder(s) could not be read"):
        for name, why in broken:
            st.markdown(f"**{plain(name)}**: {plain(why)}")
        st.caption(
            "They are left out of the picker. For whoever runs this server: retrain one "
            "with `bash scripts/retrain.sh NAME`, or remove its folder."
        )


def render(infos: list[CheckpointInfo]) -> tuple[view_state.ViewState, CheckpointInfo | None]:
    """Draw the sidebar; return the current state and the chosen checkpoint's info."""
    sb = st.sidebar
    if not infos:
        sb.warning(
            "No checkpoints found. For whoever runs this server: train one with "
            "`python -m uqlab.train`."
        )
        st.session_state[K.INFO] = None
        return st.session_state.get(K.VIEW, view_state.ViewState()), None
    info = _picker(sb, infos)
    own = _trained(info)
    # Streamlit drops a widget's key when a run ends before drawing it (a rerun cut it short,
    # as on a fresh server's deep link): refill every widget from the view, never the defaults
    lost = any(k not in st.session_state for k in (K.T, K.SEED, *ALWAYS))
    if st.session_state.pop(K.NEW_CKPT, False) or lost:
        view = st.session_state.get(K.VIEW, view_state.ViewState())
        _reset_widgets(
            view_state.ViewState(ckpt=info.name, T=view.T, seed=view.seed), info, ckpt=False
        )
    _model_card(sb, info)

    live, t = _sampling(sb, info, own)

    def override(key: str):
        value = st.session_state.get(key)
        return None if not live.get(key) or value == own[key] else value

    view = st.session_state.get(K.VIEW, view_state.ViewState())
    view = view.replace(
        ckpt=info.name,
        T=int(st.session_state[K.T]),
        seed=int(st.session_state[K.SEED]),
        scaled=bool(st.session_state.get(K.SCALED)) and t is not None,
        **{knob: override(knob) for knob in K.KNOBS},
    )
    view = _label_kept(view, info)
    st.session_state[K.VIEW] = view
    st.session_state[K.INFO] = info
    return view, info


def _picker(sb, infos: list[CheckpointInfo]) -> CheckpointInfo:
    """The checkpoint picker (a checkpoint just uploaded is selected); the chosen one's info."""
    infos = sorted(infos, key=sort_key)
    by_name = {i.name: i for i in infos}
    chosen = st.session_state.pop(K.SELECT_CKPT, None)  # e.g. a checkpoint just uploaded
    if chosen in by_name:
        st.session_state[K.CKPT] = chosen
        st.session_state[K.NEW_CKPT] = True
    if st.session_state.get(K.CKPT) not in by_name:
        st.session_state[K.CKPT] = infos[0].name
    sb.selectbox(
        "Checkpoint",
        list(by_name),
        key=K.CKPT,
        format_func=picker_labels(infos).__getitem__,
        on_change=_on_checkpoint_change,
        help="Trained models, grouped by task, backbone (word-level from scratch: the paper's "
        "word-level models, listed first; or a pretrained MiniLM encoder) and family. The "
        "model card below names the checkpoint and "
        "its family in full. Each is a folder of safetensors weights + JSON under "
        "assets/checkpoints/.",
    )
    return by_name[st.session_state[K.CKPT]]


def _sampling(sb, info: CheckpointInfo, own: dict) -> tuple[dict[str, bool], float | None]:
    """The "Sampling" section: T, seed, the family's knobs and temperature scaling. Returns
    which knobs are live and the checkpoint's fitted temperature (None: none)."""
    spec = get_family(info.family)
    sb.subheader("Sampling")
    sb.number_input(
        "Samples T",
        1,
        view_state.MAX_T,
        key=K.T,
        step=10,
        help="Stochastic forward passes of the input, drawn in one batched call.",
    )
    sb.number_input(
        "Seed",
        0,
        view_state.MAX_SEED,
        key=K.SEED,
        step=1,
        help="Same seed, same samples: every number here is reproducible.",
    )
    live = {knob: _control(sb, knob, spec, own) for knob in spec.controls()}
    t = temperature_of(info)
    sb.toggle(
        "Temperature scaling" + ("" if t is None else f" (t = {t:.2f})"),
        key=K.SCALED,
        disabled=t is None,
        help="Divide every sample's logits by the temperature fitted on the dev split, "
        "then average: calibrated probabilities, same predicted classes."
        + "".join(f" {n}" for n in temperature_notes(info.metrics or {}))  # when it is not so
        if t is not None
        else "This checkpoint has no temperature: none was fitted on a dev split for it "
        "(an upload or an import is not evaluated).",
    )
    return live, t


def _label_kept(view: view_state.ViewState, info: CheckpointInfo) -> view_state.ViewState:
    """``view`` without its gold label where ``info`` cannot hold it: another task than the
    checkpoint before (dropped quietly), or a class this one lacks (a link's: said once)."""
    before = st.session_state.get(K.INFO)
    moved = before is not None and before.task != info.task  # a gold label belongs to its task
    classes = len(label_names(info))
    if view.label is not None and (moved or view.label >= classes):
        if not moved:  # a link's label this checkpoint does not have: said, not dropped silently
            st.session_state.setdefault(K.URL_NOTES, []).append(
                f"Label {view.label} in the link is not a class of {info.name} (0 to "
                f"{classes - 1}); ignored."
            )
        view = view.replace(label=None)
    return view


def current() -> tuple[view_state.ViewState, CheckpointInfo | None]:
    """The state and checkpoint the sidebar settled on in this run (for the pages)."""
    return st.session_state.get(K.VIEW, view_state.ViewState()), st.session_state.get(K.INFO)


def set_view(**changes) -> view_state.ViewState:
    """Change the shared state from a page (e.g. the submitted text) and update the URL."""
    view = st.session_state.get(K.VIEW, view_state.ViewState()).replace(**changes)
    st.session_state[K.VIEW] = view
    sync_url(view)
    return view


def _model_card(sb, info: CheckpointInfo) -> None:
    with sb.expander("Model card", expanded=False):
        cfg, task = info.config, plain(task_title(info.task))  # an upload's title: as text
        st.markdown(
            f"`{info.name}`: **{family_title(info.family)}** on **{task}** · "
            f"{cfg.get('n_layers')} layer(s), {cfg.get('n_heads')} heads, width "
            f"{cfg.get('d_model')}, vocabulary {cfg.get('vocab_size'):,}; reads a text at "
            f"{reading(info)}."
        )
        splits = info.training.get("splits")
        if splits:
            st.caption("Data: " + ", ".join(f"{k} {v:,}" for k, v in splits.items()))
        st.caption(headline(info))
        based = base_line(info) or (None if info.name.startswith(UPLOAD_PREFIX) else PAPERS_SETUP)
        if based:
            st.caption(based)
        stored = storage_line(info)
        if stored:
            st.caption(stored)
        if info.card:
            card = info.card.split("\n", 2)[-1]
            if info.name.startswith(UPLOAD_PREFIX):  # a visitor's text: shown, never rendered
                st.text(card[:2000])
            else:
                st.markdown(card)


def sync_url(view: view_state.ViewState) -> None:
    """Write the view into the address bar (only when it changed, to avoid churn)."""
    params = view_state.to_params(view)
    current = {k: st.query_params.get(k) for k in st.query_params}
    if current != params:
        st.query_params.from_dict(params)
    st.session_state[K.LAST_PARAMS] = params


def page(
    title: str, *, needs_checkpoint: bool = True, selection: bool = False
) -> tuple[view_state.ViewState, CheckpointInfo]:
    """Start a page, the same way on every page: title, the sidebar's state.
    With ``needs_checkpoint`` and no checkpoint at all, the page stops with a hint; without it
    the page runs on (``info`` may then be None: Learn, uploads, pages with their own picker).
    A page that does not read a selection of rows (``selection``, :mod:`ui.logic.selection`)
    drops it from the view and the address bar."""
    st.title(title)
    view, info = current()
    if view.sel is not None and not selection:
        view = set_view(sel=None)
    if info is None and needs_checkpoint:
        st.info(
            "No checkpoint available. For whoever runs this server: train one "
            "(`python -m uqlab.train`, or `bash scripts/retrain.sh all`) and reload; "
            "a visitor can add their own on the upload page."
        )
        st.stop()
    why = guard.problem(info.name) if info is not None else None
    if why:  # a missing base package, a corrupt file: said here, on every page
        st.error(guard.line(info.name, why) + " Pick another checkpoint in the sidebar.", icon="✋")
        if needs_checkpoint:
            st.stop()
    return view, info


def multiselect(
    where,
    label: str,
    options: list[str],
    default: list[str],
    key: str,
    follow: str | None = None,
    **kwargs,
):
    """``where.multiselect`` whose choice survives a change of its options (another task): the
    names still offered stay chosen, and when none is left the default is chosen again instead of
    an empty list (a user may still clear it by hand). ``follow`` (the sidebar's checkpoint) is
    chosen first by default and added whenever it changes, so the page starts from it. The
    choice is kept while the box is not drawn (``persist_state``: a page that stops early, as
    Results does until a visitor's file is ready); ``keep`` alone left it in the server's state
    but sent the box back to the browser empty."""
    keep(key)  # a page that stopped before drawing it (a file not ready yet) loses nothing
    before = st.session_state.get(f"_{key}_options")
    st.session_state[f"_{key}_options"] = tuple(options)
    if follow in options:
        default = [follow, *(n for n in default if n != follow)]
    if key not in st.session_state or before != tuple(options):  # first run, or new options
        kept = [n for n in st.session_state.get(key, []) if n in options]
        st.session_state[key] = kept or [n for n in default if n in options]
    if follow in options and st.session_state.get(f"_{key}_follow") != follow:
        if follow not in st.session_state[key]:  # the sidebar moved to another checkpoint
            st.session_state[key] = [follow, *st.session_state[key]]
    st.session_state[f"_{key}_follow"] = follow
    return where.multiselect(label, options, key=key, persist_state="session", **kwargs)


def keep(*keys: str) -> None:
    """Give widgets ``keys`` back the value they last had. Streamlit forgets a widget's value
    when a run ends before drawing it (a page that stops until Compute is pressed), and the
    browser may keep showing the old choice: the page and the widget then disagree. Call before
    drawing the widgets; their values are copied to keys of their own on every call."""
    for key in keys:
        shadow = f"_{key}_kept"
        if key not in st.session_state and shadow in st.session_state:
            st.session_state[key] = st.session_state[shadow]
        if key in st.session_state:
            st.session_state[shadow] = st.session_state[key]


def temperature_of(info: CheckpointInfo) -> float | None:
    """The temperature the checkpoint's evaluation fitted on dev, or None."""
    return fitted_temperature(info.metrics)


_UNSET = object()  # a copy whose widget state Streamlit dropped (a run that never drew it)
KNOB_PX = 165  # an in-page knob's width: two side by side on a 390 px phone, a row on a laptop


def _copy_back(knob: str, key: str) -> None:
    """An in-page knob was moved: move the sidebar's (the one the view and the link read)."""
    st.session_state[knob] = st.session_state[key]


def _copy_of(knob: str) -> tuple[str, dict]:
    """The key of ``knob``'s in-page copy and the arguments that start it at the sidebar's
    value. The copy is the visitor's own widget: the app never writes into it. While it holds
    the sidebar's value (the copy drove, or nothing moved) it keeps its key, so a phone's
    focused thumb stays mounted and every arrow press reaches the server, each one copied to
    the sidebar by its callback. When the sidebar's value moved on its own (its control, a new
    checkpoint, Back) a fresh copy is drawn under a new key instead of writing into the drawn
    one: a browser that still shows an older copy sends a value of a widget that is gone, which
    fires no callback and never moves the sidebar back. (A key named by the value, redrawn at
    every value, unmounted the focused thumb after each press: 1 press of 4 counted.)"""
    value = st.session_state[knob]
    copies = st.session_state.setdefault(K.MAIN_KEYS, {})
    key = copies.get(knob)
    if key is None or st.session_state.get(key, _UNSET) != value:
        serial = st.session_state.get(K.MAIN_SERIAL, 0) + 1
        st.session_state[K.MAIN_SERIAL] = serial
        key = copies[knob] = f"{K.MAIN_KNOB}{knob}={serial}"
    choices = KNOBS[knob].choices if knob in KNOBS else ()
    start = {"index": choices.index(value)} if choices else {"value": value}
    return key, {**start, "on_change": _copy_back, "args": (knob, key), "width": KNOB_PX}


def knob_row(info: CheckpointInfo) -> None:
    """T and the checkpoint's live knobs again, in the page, in a row that wraps (two a line on
    a phone): where the sidebar is closed (a phone's, by default) a visitor moves one and
    watches the figure change. Each is a copy of the sidebar's control, not a second source:
    it starts at the sidebar's value and copies a move back to it, so the sidebar, the view and
    the link always agree. ``app.py``'s style shows the row only on a narrow screen."""
    spec, own = get_family(info.family), _trained(info)
    live = [knob for knob in spec.controls() if _enabled(spec, own, knob)[0]]
    with st.container(horizontal=True, key=K.MAIN_ROW, vertical_alignment="bottom"):
        key, extra = _copy_of(K.T)
        st.number_input("Samples T", 1, view_state.MAX_T, key=key, step=10, **extra)
        for knob in live:
            key, extra = _copy_of(knob)
            _control(st, knob, spec, own, key, **extra)
