"""Stochastic Attention Explorer: the router and the sidebar every page shares.

``streamlit run app.py``. The pages live in ``pages/``; the shared state (checkpoint, T, seed,
temperatures, ...) is read from the URL once per session and written back on every run, so the
address bar is always a link to the current view (``ui.sidebar``, ``ui.state``).
"""

from __future__ import annotations

# OpenMP keeps its default wait policy (spin briefly, then sleep). "PASSIVE" made sampling
# slower (its threads are woken for each of thousands of small ops; the error analysis'
# sampling took 5.0 s instead of 3.3 s here, as `OMP_WAIT_POLICY=PASSIVE python -m ui.bench
# --pages` shows against the plain run), and at most ui.cached.PAGE_SLOTS page scripts compute
# at once, so sessions do not starve each other.
import streamlit as st

from ui import cached, routes, sidebar
from ui import keys as K

# Key numbers are never cut ("0.198 ± 0.…" on a projector): metric values shrink with the window
# and wrap instead of ending in an ellipsis; long chart titles wrap too.
STYLE = """<style>
[data-testid="stMetricValue"] { font-size: clamp(1.05rem, 2.1vw, 2rem); }
[data-testid="stMetricValue"] > div { white-space: normal; overflow: visible;
  text-overflow: clip; overflow-wrap: anywhere; }
[data-testid="stMetricLabel"] p { white-space: normal; }
</style>"""

st.set_page_config(page_title="Stochastic Attention Explorer", page_icon="🎲", layout="wide")
st.html(STYLE)
cached.tune_once()

infos = cached.infos()
notes = sidebar.init_session(infos, st.query_params)
if notes:
    st.session_state[K.URL_NOTES] = notes

nav = st.navigation(routes.pages())
st.sidebar.title("Stochastic Attention Explorer")
view, info = sidebar.render(infos)
sidebar.unreadable_note(cached.unreadable(cached.root()))
sidebar.sync_url(view)
for note in st.session_state.pop(K.URL_NOTES, []):
    st.warning(note, icon=":material/link:")
with cached.page_slots():  # released on st.stop and on a rerun too (both are exceptions)
    nav.run()
