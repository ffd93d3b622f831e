"""Explore a sentence: T samples of one checkpoint on one text, view by view."""

from __future__ import annotations

import streamlit as st

from ui import cached, explore_views, export_views, map_views, sidebar, why_views, work
from ui.logic import intro
from ui.logic import keys as K
from ui.logic.catalog import presets
from ui.logic.format import plain
from ui.logic.state import MAX_TEXT_CHARS, link_holds
from ui.stories import find_stories, landing_stories
from uqcore.checkpoint import read_length
from uqcore.exceptions import UQError
from uqcore.families import get_family
from uqlab.catalog.tasks import DEFAULT_CHECKPOINT, PAPER_CHECKPOINT, label_names

QUOTE_CHARS = 160  # the landing's result names its text in at most two lines at 1024 x 768

view, info = sidebar.page("Explore a sentence")
names = label_names(info)
examples = presets(info.task)


def _use_preset() -> None:
    choice = st.session_state.get(K.PRESET)
    if choice is None:
        return
    example = examples[choice]
    st.session_state[K.TEXT_BOX] = example.text
    st.session_state[K.LABEL_BOX] = names[example.label]
    sidebar.set_view(text=example.text, label=example.label)


if view.text is None and examples:  # first visit: start from the first example, no click
    view = sidebar.set_view(text=examples[0].text, label=examples[0].label)


def _short(text: str) -> str:
    """``text`` cut to :data:`QUOTE_CHARS` characters (a review would fill the screen)."""
    return text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS].rstrip() + "…"


def _use_story(story) -> None:
    """Open a story's sentence at the T and seed it was picked at (its caption's "7 of 10" is
    then the view's 7 / 10, not 44 / 50 of other samples); the landing stays, so the other
    stories remain one click away."""
    st.session_state[K.TEXT_BOX] = story.text
    st.session_state[K.LABEL_BOX] = names[story.label]
    st.session_state[K.T], st.session_state[K.SEED] = story.T, story.seed  # the sidebar's
    sidebar.set_view(text=story.text, label=story.label, T=story.T, seed=story.seed)


if st.session_state.get(K.FIRST_VISIT):
    with st.container(border=True, key=K.LANDING_BOX):
        tales = landing_stories(info)
        start = (
            f"Try its {len(tales)} stories:" if tales else "Type a sentence below and press Sample."
        )
        st.markdown(f"**What you are looking at.** {intro.what_you_see(info)} {start}")
        if tales is None:
            find_stories(info)
            tales = []
        other = PAPER_CHECKPOINT if info.name != PAPER_CHECKPOINT else DEFAULT_CHECKPOINT
        with st.container(key=K.LANDING_TALES):  # side by side on a phone too (app.py)
            cols = st.columns(max(1, len(tales)))
        for i, (col, tale) in enumerate(zip(cols, tales, strict=False)):
            col.button(
                tale.title,
                key=f"{K.LANDING_STORY}{i}",
                on_click=_use_story,
                args=(tale,),
                help=f"{_short(tale.text)} ({tale.why})",
                type="primary" if view.text == tale.text else "secondary",
                width="stretch",
            )
            col.caption(tale.why)
        with st.container(horizontal=True, vertical_alignment="center"):
            if other in {i.name for i in cached.infos()}:  # the paper's model, one click away
                st.button(
                    f"The paper's model ({other})"
                    if other == PAPER_CHECKPOINT
                    else f"Back to the first model ({other})",
                    key=K.LANDING_OTHER,
                    on_click=lambda: st.session_state.update({K.SELECT_CKPT: other}),
                    help="The paper's H-STO-TRANS on CoLA, the model of its Table 3."
                    if other == PAPER_CHECKPOINT
                    else "The model this page opens on.",
                )
            st.button(
                "Hide this introduction",
                key=K.LANDING_CLOSE,
                type="tertiary",
                on_click=lambda: st.session_state.update({K.FIRST_VISIT: False}),
            )
# On the landing the story's result comes first, right under the stories (above the fold at
# 1024 x 768), and the visitor's own sentence below it; later the form leads, as a tool's does.
top = st.container(key=K.LANDING_RESULT) if st.session_state.get(K.FIRST_VISIT) else None
if top is not None:
    st.subheader("Your own sentence")
st.session_state.setdefault(K.TEXT_BOX, view.text or "")
st.session_state.setdefault(K.LABEL_BOX, "unknown" if view.label is None else names[view.label])
st.selectbox(
    "Examples",
    range(len(examples)),
    index=None,
    key=K.PRESET,
    on_change=_use_preset,
    format_func=lambda i: examples[i].title,
    placeholder="Pick an example sentence…",
    help="In-domain and out-of-domain sentences of the checkpoint's task.",
)
with st.form("sentence"):
    st.text_area(
        "Text", key=K.TEXT_BOX, height=68, help="Runs when you press Sample, not while you type."
    )
    st.radio(
        "Gold label",
        ("unknown", *names),
        key=K.LABEL_BOX,
        horizontal=True,
        format_func=plain,  # label names a file gave: shown as text
        help="With a gold label the statistics score p(gold), as in the paper's Table 3.",
    )
    if st.form_submit_button("Sample", type="primary"):
        typed = st.session_state[K.TEXT_BOX]
        if len(typed) > MAX_TEXT_CHARS:
            st.warning(
                f"Your text has {len(typed):,} characters; the first {MAX_TEXT_CHARS:,} "
                "are used (the box keeps all of it)."
            )
        choice = st.session_state[K.LABEL_BOX]
        label = None if choice == "unknown" else names.index(choice)
        view = sidebar.set_view(text=typed[:MAX_TEXT_CHARS], label=label)

positions = int(info.config.get("max_len") or 0)
trained = read_length(positions, info.training)
whole = view.whole and trained < positions  # only where the positions reach further

try:
    with st.spinner(f"Drawing {view.T} samples…"):
        t = sidebar.temperature_of(info) if view.scaled else None
        res = work.run(
            f"Drawing {view.T} samples",
            lambda _: cached.explore(
                info.name,
                cached.where(info.name),
                view.text or "",
                view.T,
                view.seed,
                view.overrides(),
                view.label,
                t,
                whole,
            ),
            ("explore", view),
        )
except UQError as exc:
    st.error(str(exc), icon="✋")
    st.stop()

cfg, spec = info.config, get_family(info.family)
st.session_state[K.FIGURES] = {}  # the export panel offers this run's figures only
with top if top is not None else st.container():
    st.subheader(f"{spec.title} · T = {view.T} · seed {view.seed}")
    if top is not None:  # the story's text, cut short: the form below holds all of it
        st.caption(f"“{plain(_short(res.text))}”")
    explore_views.notices(res)
    if trained < positions and (res.n_dropped or whole):  # a cut text: offer the rest
        st.session_state[K.WHOLE] = whole
        st.toggle(
            f"Read past {trained} tokens (up to {positions}, longer than it was trained)",
            key=K.WHOLE,
            on_change=lambda: sidebar.set_view(whole=bool(st.session_state[K.WHOLE])),
            help=f"The checkpoint was trained on texts cut at {trained} tokens, and every "
            "number elsewhere reads them so. Switched on, the text is read up to the "
            "position table: a reading it never saw in training, labelled as such.",
        )
    if res.temperature is not None:
        st.caption(
            f"Temperature scaling is on: every sample's logits are divided by t = "
            f"{res.temperature:.2f} (fitted on the dev split) before the softmax."
        )
    if not link_holds(view.text):
        st.info(
            "This text is too long to travel in a link, so the address bar carries everything "
            "but the text: to share this view, share the text with it."
        )
    sidebar.knob_row(info)  # a phone's sidebar is closed: its knobs, right above the numbers
    explore_views.predictions(res, names, gold=view.label is not None, one=top is not None)
    explore_views.conformal(res, names, info.metrics)
st.header("Attention, sample by sample")
map_views.attention(res, cfg["n_layers"], cfg["n_heads"])
for name in spec.maps:  # the family's own maps, each with its view
    if name in map_views.MAP_VIEWS:
        heading, show = map_views.MAP_VIEWS[name]
        st.header(heading)
        show(res, cfg["n_layers"], names)
st.header("Why is it unsure?")
if whole:  # the why views read at the training length: they would explain another reading
    st.info(
        f"The why views read a text at the {trained} tokens it was trained at; switch the "
        "longer reading off (above the results) to explain this prediction."
    )
if whole or not why_views.switch():
    st.header("Export")
    export_views.export(res, names, info.name, info.family)
    st.caption(f"Computed in {res.seconds:.2f} s on the server (cached for repeat views).")
    st.stop()
st.subheader("Which words? Salience over the samples")
why_views.salience(res, names, info.name, info.family, view.overrides())
st.subheader("Word by word: remove each word")
why_views.occlusion(
    res,
    names,
    info.name,
    info.family,
    cached.sampler(info.name, view.T, view.seed, view.overrides()),
)
st.subheader("Edit the sentence and compare")
why_views.edit(
    res,
    names,
    lambda typed: cached.explore(
        info.name,
        cached.where(info.name),
        typed[:MAX_TEXT_CHARS],
        view.T,
        view.seed,
        view.overrides(),
        view.label,
        t,
    ),
    cfg["n_layers"],
    cfg["n_heads"],
)
st.subheader("Every head at once")
why_views.head_grid(res, cfg["n_layers"], cfg["n_heads"])
st.header("Export")
export_views.export(res, names, info.name, info.family)
st.caption(f"Computed in {res.seconds:.2f} s on the server (cached for repeat views).")
