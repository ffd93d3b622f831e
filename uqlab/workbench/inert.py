"""Text in a figure is shown as typed: plotly reads a few HTML tags in every string of a figure
(titles, axis and tick labels, legend names, hover texts), among them ``<a href=...>``, a live
link. Tokens of a visitor's sentence, an uploaded file's rows and label names a file gave reach
those strings, so every figure builder passes its figure through :func:`inert`: each ``<`` that
does not open one of the tags the app's own figures use (:data:`KEPT`) becomes ``&lt;``, which
plotly shows as ``<``. The app's own line breaks, bold and ``<extra>`` stay."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import plotly.graph_objects as go

KEPT = ("br", "b", "i", "sup", "sub", "extra")  # tags the app's figures write themselves
_OPEN = re.compile(r"<(?!/?(?:" + "|".join(KEPT) + r")\s*/?>)", re.IGNORECASE)


def inert_text(text: str) -> str:
    """``text`` with every ``<`` that opens another tag than :data:`KEPT` written ``&lt;``."""
    return _OPEN.sub("&lt;", text)


def _clean(value: Any) -> tuple[Any, bool]:
    """``(value with inert strings, whether anything changed)``; numbers are left alone."""
    if isinstance(value, str):
        out = inert_text(value) if "<" in value else value
        return out, out is not value
    if isinstance(value, dict):
        pairs = {k: _clean(v) for k, v in value.items()}
        changed = any(c for _, c in pairs.values())
        return ({k: v for k, (v, _) in pairs.items()} if changed else value), changed
    if isinstance(value, list | tuple):
        items = [_clean(v) for v in value]
        changed = any(c for _, c in items)
        return ([v for v, _ in items] if changed else value), changed
    if isinstance(value, np.ndarray) and value.dtype.kind in "OUS":
        items = [_clean(v) for v in value.ravel().tolist()]
        changed = any(c for _, c in items)
        if changed:
            return np.array([v for v, _ in items], dtype=object).reshape(value.shape), True
    return value, False


def inert(fig: go.Figure) -> go.Figure:
    """``fig`` with no string that plotly would read as a link or another tag than
    :data:`KEPT` (the same object when nothing needed it)."""
    doc = fig.to_plotly_json()
    cleaned, changed = _clean(doc)
    return go.Figure(cleaned) if changed else fig


def inert_spec(spec: dict) -> dict:
    """:func:`inert` for a figure written as its plotly JSON (a dict): ``spec`` with no such
    string (the same dict when nothing needed it)."""
    return _clean(spec)[0]
