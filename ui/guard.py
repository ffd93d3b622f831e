"""Checkpoints that cannot load say so: a missing base package, a corrupt or truncated weights
file, a folder gone since the listing. The checkpoint picker lists every checkpoint whose config
reads (``ui.cached.infos``); what is wrong with its weights or its base is only found when it is
loaded, so every page loads the checkpoints it uses through :func:`problem` first and shows one
clear line per failing checkpoint (what is wrong, what to do) instead of Streamlit's error box.
Messages name no folder of the server."""

from __future__ import annotations

import re
import threading

import streamlit as st

from ui import cached
from uqcore.exceptions import UQError

# An absolute path ("/srv/app/assets/checkpoints/cola-x/model.safetensors"): a slash not
# preceded by a word character, a dot, a colon or a slash (so no "3/10", "a.b/c", "https://").
_PATH = re.compile(r"(?<![\w.:/])/(?:[^\s/'\"`,;()]+/)*[^\s/'\"`,;()]+")
_GOOD_MAX = 1024  # (name, folder, files' version) known to load: re-checked once they change


def clean(message: str) -> str:
    """``message`` with every absolute path cut to its last two parts
    (``"…/cola-x/model.safetensors"``): what is wrong stays, where the server keeps it goes."""

    def cut(match: re.Match) -> str:
        parts = match.group(0).strip("/").split("/")
        return "/".join(parts[-2:]) if len(parts) > 1 else parts[0]

    return _PATH.sub(cut, message)


@st.cache_resource
def _known_good() -> tuple[set, threading.Lock]:
    """Checkpoint versions that loaded once on this server (a failure is always retried: the
    base package may be installed, the file replaced)."""
    return set(), threading.Lock()


def problem(name: str) -> str | None:
    """Why checkpoint ``name`` cannot be loaded (a clean message), or None when it loads. Loads
    it through :func:`ui.cached.checkpoint` (kept there for the page) the first time each
    version of its files is asked about; afterwards a set lookup."""
    folder = cached.where(name)
    key = (name, folder, cached.stamp(name, folder))
    good, lock = _known_good()
    if key in good:
        return None
    try:
        with st.spinner(f"Loading {name}…"):
            cached.checkpoint(name, folder)
    except (UQError, OSError) as exc:
        return clean(str(exc)) or type(exc).__name__
    with lock:
        if len(good) >= _GOOD_MAX:
            good.clear()
        good.add(key)
    return None


def line(name: str, why: str) -> str:
    """The one line a page shows for a checkpoint that cannot be loaded."""
    return f"**{name}** cannot be loaded: {why}"


def usable(names: list[str], where=st) -> list[str]:
    """The checkpoints of ``names`` that load; one error line (drawn on ``where``) for each of
    the others."""
    kept = []
    for name in names:
        why = problem(name)
        if why is None:
            kept.append(name)
        else:
            where.error(line(name, why), icon="✋")
    return kept
