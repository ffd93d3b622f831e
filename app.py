"""Stochastic Attention Explorer: the router and the sidebar every page shares.

``streamlit run app.py``. The pages live in ``app_pages/``; the shared state (checkpoint, T, seed,
temperatures, ...) is read from the URL once per session and written back on every run, so the
address bar is always a link to the current view (``ui.sidebar``, ``ui.logic.state``).
"""

from __future__ import annotations

import os

# Idle OpenMP threads sleep instead of spinning. Measured with `python -m tools.loadtest`: the
# explorer's sampling (cola-hsto, T = 50) took 0.04 s per request with this and 0.33 s without
# it, in the server (each script run's thread brings its own OpenMP pool, and spinning pools
# outnumber the cores). Set before torch is first imported; tools.bench sets the same.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui import cached, routes, sidebar
from ui.logic import keys as K
from ui.logic import runlog

# Key numbers are never cut ("0.198 ± 0.…" on a projector): metric values shrink with the window
# and wrap instead of ending in an ellipsis; long chart titles wrap too. Less room above the
# title and a smaller one, so the explorer's first result fits a 1024 x 768 screen. The
# explorer's in-page knobs (ui.sidebar.knob_row) show only where Streamlit closes the sidebar
# by default (768 px and narrower): a wider screen has the sidebar's own. Compare's maps fill
# a grid of columns at least 270 px wide: one a row on a phone, two at 1024 px, three at 1400.
# On a phone (640 px and narrower) plotly's toolbar is hidden: it covered the charts' titles
# (Compare's), and the explorer's Export offers every figure as PNG / SVG.
# The landing on a phone keeps its three stories side by side (Streamlit stacks columns under
# 640 px: each story's caption then took a screen's third) with smaller text, so the story's
# first result (its numbers) shows on the first screen of a 390 x 844 phone.
STYLE = """<style>
[data-testid="stMetricValue"] { font-size: clamp(1.05rem, 2.1vw, 2rem); }
[data-testid="stMetricValue"] > div { white-space: normal; overflow: visible;
  text-overflow: clip; overflow-wrap: anywhere; }
[data-testid="stMetricLabel"] p { white-space: normal; }
[data-testid="stMainBlockContainer"] { padding-top: 3rem; }
[data-testid="stMain"] h1 { font-size: clamp(1.6rem, 3vw, 2.2rem); padding-top: 0.5rem; }
@media (max-width: 640px) { .js-plotly-plot .modebar-container { display: none !important; } }
</style>"""
STYLE += f"""<style>
@media (max-width: 640px) {{
  .st-key-{K.LANDING_TALES} [data-testid="stHorizontalBlock"] {{ flex-wrap: nowrap; gap: 0.4rem; }}
  .st-key-{K.LANDING_TALES} [data-testid="stColumn"] {{ min-width: 0 !important;
    width: auto !important; flex: 1 1 0 !important; }}
  .st-key-{K.LANDING_BOX} p {{ font-size: 0.9rem; line-height: 1.4; }}
  .st-key-{K.LANDING_BOX} [data-testid="stCaptionContainer"] p {{ font-size: 0.78rem; }}
  .st-key-{K.LANDING_TALES} button {{ padding: 0.25rem 0.3rem; }}
  .st-key-{K.LANDING_BOX} button p {{ font-size: 0.85rem; white-space: normal; }}
  .st-key-{K.LANDING_RESULT} h3 {{ font-size: 1.2rem; padding: 0.25rem 0; }}
  .st-key-{K.LANDING_RESULT} [data-testid="stCaptionContainer"] p {{ display: -webkit-box;
    -webkit-line-clamp: 2; -webkit-box-orient: vertical; overflow: hidden; }}
}}
</style>"""
STYLE += f"""<style>
@media (min-width: 769px) {{ [data-testid="stLayoutWrapper"]:has(> .st-key-{K.MAIN_ROW}),
  .st-key-{K.MAIN_ROW} {{ display: none; }} }}
[class*="st-key-{K.CMP_MAPS}"] {{ display: grid !important;
  grid-template-columns: repeat(auto-fill, minmax(min(270px, 100%), 1fr)); }}
</style>"""


RECONNECT_RUN_EVERY = "1h"  # see _rebuild_after_reconnect: an hourly no-op, never sooner


@st.fragment(run_every=RECONNECT_RUN_EVERY)
def _rebuild_after_reconnect() -> None:
    """Nothing to draw: its presence makes a page rebuild itself after its server went away.
    Streamlit's frontend, on reconnecting, asks for a run only while the page holds an
    auto-rerunning fragment (its ``run_every``); otherwise a finished page stays as it was. Behind
    ``tools.serve`` a killed backend comes back as a fresh process with no session: without
    this, its visitors saw an idle page until they reloaded. With it the reconnect runs the
    script, the fresh session reads the link (``ui.sidebar.init_session``) and the page is the
    link's view again; a reconnect to a session that survived reruns from its caches."""


def main() -> None:
    st.set_page_config(page_title="Stochastic Attention Explorer", page_icon="🎲", layout="wide")
    st.html(STYLE)
    _rebuild_after_reconnect()
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
    with cached.gate().page():  # released on st.stop and on a rerun too (both are exceptions)
        nav.run()


def run() -> None:
    """``main`` timed into ``$UQ_RUN_LOG``. The run context stays a local: a module global would
    keep this session's state alive after the session ends (its upload folder with it)."""
    ctx = get_script_run_ctx()
    with runlog.timed(ctx.session_id if ctx else "local", st.context.url or ""):
        main()


run()
