"""From a figure of the Results page to the rows behind it in Error analysis (issue 49, item 1):
one button per selection, which opens Error analysis on that checkpoint with the selection in
the view (and so in the link: :mod:`ui.logic.selection`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import sidebar
from ui.logic import keys as K
from ui.logic import state as view_state
from ui.logic.selection import Selection

ERRORS_PAGE = "app_pages/errors.py"


def offer(picked: Selection, name: str, frame: pd.DataFrame, names: tuple, key: str) -> None:
    """A button "Open in Error analysis: <what, how many, how many wrong>" for the rows of
    ``frame`` (checkpoint ``name``'s) that ``picked`` names; pressed, it selects ``name`` in
    the sidebar with the checkpoint's own settings (as Results sampled it) and opens Error
    analysis on exactly those rows."""
    rows = frame[picked.mask(frame, names)]
    label = f"Open in Error analysis: {name}, {picked.words(rows, names)}"
    if st.button(label, key=key, icon=":material/troubleshoot:", disabled=rows.empty):
        st.session_state[K.SELECT_CKPT] = name  # the sidebar resets the knobs to its own
        view = sidebar.set_view(ckpt=name, sel=picked.encode())
        st.switch_page(ERRORS_PAGE, query_params=view_state.to_params(view))
