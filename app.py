"""Stochastic Attention Explorer: the router and the sidebar every page shares.

``streamlit run app.py``. The pages live in ``pages/``; the shared state (checkpoint, T, seed,
temperatures, ...) is read from the URL once per session and written back on every run, so the
address bar is always a link to the current view (``ui.sidebar``, ``ui.state``).
"""

from __future__ import annotations

import streamlit as st

from ui import cached, sidebar

st.set_page_config(page_title="Stochastic Attention Explorer", page_icon="🎲", layout="wide")
cached.tune_once()

infos = cached.catalog(cached.root())
notes = sidebar.init_session(infos, st.query_params)
if notes:
    st.session_state["url_notes"] = notes

pages = [
    st.Page("pages/explore.py", title="Explore a sentence", icon=":material/search:", default=True),
    st.Page("pages/table3.py", title="Table 3", icon=":material/table:", url_path="table3"),
    st.Page("pages/results.py", title="Results", icon=":material/monitoring:", url_path="results"),
    st.Page(
        "pages/errors.py", title="Error analysis", icon=":material/troubleshoot:", url_path="errors"
    ),
    st.Page(
        "pages/compare.py", title="Compare methods", icon=":material/compare:", url_path="compare"
    ),
    st.Page(
        "pages/sweep.py", title="Temperature sweep", icon=":material/thermostat:", url_path="sweep"
    ),
    st.Page("pages/learn.py", title="Learn", icon=":material/school:", url_path="learn"),
]
nav = st.navigation(pages)
st.sidebar.title("Stochastic Attention Explorer")
view, info = sidebar.render(infos)
sidebar.sync_url(view)
for note in st.session_state.pop("url_notes", []):
    st.warning(note, icon=":material/link:")
nav.run()
