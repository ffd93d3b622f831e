"""The app's pages, in menu order: app.py hands them to ``st.navigation``.

The scripts live in ``app_pages/``, not ``pages/``: Streamlit runs a ``pages/*.py`` file by
itself (its legacy multipage mode) when a fresh server's first request is a deep link, before
app.py has called ``st.navigation``. Outside that folder every request goes through app.py."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
PAGES = (  # (script, title, material icon, url path)
    ("app_pages/explore.py", "Explore a sentence", "search", ""),
    ("app_pages/table3.py", "Table 3", "table", "table3"),
    ("app_pages/results.py", "Results", "monitoring", "results"),
    ("app_pages/errors.py", "Error analysis", "troubleshoot", "errors"),
    ("app_pages/compare.py", "Compare methods", "compare", "compare"),
    ("app_pages/sweep.py", "Temperature sweep", "thermostat", "sweep"),
    ("app_pages/learn.py", "Learn", "school", "learn"),
    ("app_pages/upload.py", "Your checkpoint", "upload", "upload"),
)


def pages() -> list:
    """``st.Page`` objects of every page; the first is the default (the explorer)."""
    out = []
    for script, title, icon, path in PAGES:
        extra = {"default": True} if not path else {"url_path": path}
        out.append(st.Page(str(ROOT / script), title=title, icon=f":material/{icon}:", **extra))
    return out
