"""The landing's story sentences on the explorer: read at once where the checkpoint's stored
samples hold them; for any other checkpoint (an upload, an import) found on request from a
small sample, as a fair computation (:mod:`ui.work`) with progress and Cancel, so a visitor's
first view never waits for a pass over the bundled examples."""

from __future__ import annotations

import streamlit as st

from ui import cached, work
from ui.logic import keys as K
from ui.logic import landing
from ui.logic.progress import Rows
from uqcore.registry import CheckpointInfo
from uqlab.workbench import dataset


def landing_stories(info: CheckpointInfo) -> list | None:
    """The stories of ``info`` if they cost nothing now (kept, or read from stored samples);
    None when they must be sampled (:func:`find_stories` offers that)."""
    if not dataset.subsets(info.task):
        return []  # a task without bundled examples: nothing to pick from
    return cached.stories(info.name, cached.where(info.name), info.task)


def find_stories(info: CheckpointInfo) -> None:
    """Offer to sample :data:`ui.logic.landing.STORY_LIVE_PER_DOMAIN` examples per domain to pick
    the stories from; on the press, sample them (then the page runs again and shows them)."""
    per = landing.STORY_LIVE_PER_DOMAIN
    total = per * len(dataset.subsets(info.task))
    job = ("stories", info.name, cached.where(info.name))
    pressed = st.button(
        "Find three sentences that tell its story",
        key=K.LANDING_FIND,
        help=f"Samples {total} bundled examples ({per} per domain) at "
        f"T = {landing.STORY_T} with this model and picks the sentence it is "
        "surest of, the one its samples disagree on most and the most "
        "uncertain one from outside its training data.",
    )
    if not (pressed or work.cancelled(job)):
        st.caption(
            f"This model has no stored samples to pick them from: the button samples "
            f"{total} bundled examples with it (seconds for a small model, a minute or "
            "more for a large one on this server)."
        )
        return
    folder = cached.where(info.name)
    work.run(
        "Picking three story sentences",
        lambda progress: cached.stories(
            info.name, folder, info.task, live=True, on_rows=Rows(total, progress)
        ),
        job,
    )
    st.rerun()
