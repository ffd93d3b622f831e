"""The app's pages, in menu order (used by app.py and by ``sidebar.ensure_router``)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
PAGES = (  # (script, title, material icon, url path)
    ("pages/explore.py", "Explore a sentence", "search", ""),
    ("pages/table3.py", "Table 3", "table", "table3"),
    ("pages/results.py", "Results", "monitoring", "results"),
    ("pages/errors.py", "Error analysis", "troubleshoot", "errors"),
    ("pages/compare.py", "Compare methods", "compare", "compare"),
    ("pages/sweep.py", "Temperature sweep", "thermostat", "sweep"),
    ("pages/learn.py", "Learn", "school", "learn"),
    ("pages/upload.py", "Your checkpoint", "upload", "upload"),
)


def pages() -> list:
    """``st.Page`` objects of every page; the first is the default (the explorer)."""
    out = []
    for script, title, icon, path in PAGES:
        extra = {"default": True} if not path else {"url_path": path}
        out.append(st.Page(str(ROOT / script), title=title, icon=f":material/{icon}:", **extra))
    return out
