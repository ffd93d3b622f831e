"""Figure titles that fit a phone: long titles wrap at word boundaries instead of being cut."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import plotly.graph_objects as go

from uqlab.workbench.inert import inert, inert_spec

FigureSpec = dict  # a figure written as its plotly JSON: {"data": [...], "layout": {...}}

TITLE_CHARS = 32  # what a 250 px wide chart shows of a line at the 15 px title font: the
# explorer's two chart columns at 1024x768 beside the sidebar, a 390 px phone with its margins
TITLE_FONT = 15
PANEL_TITLE_CHARS = 14  # the title of one of two side-by-side panels (half that width, 14 px)
PANEL_NAME_CHARS = 42  # the names of side-by-side panels together, at 12 px: a phone's plot
# (about 270 px beside the token labels) holds four names of 10 characters
TITLE_PAD = 12  # px from the figure's top to a title anchored there (:func:`top_title`)
_LINE_PX = 20  # height of one title line, for the top margin
_NAME_LINE_PX = 16  # height of one line of a 12 px panel name


def wrap_title(text: str, width: int = TITLE_CHARS) -> str:
    """``text`` broken into lines of at most ``width`` characters at spaces (a longer word
    keeps its own line), joined with plotly's ``<br>``."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


def wrap_name(text: str, width: int) -> str:
    """A panel's name broken into lines of at most ``width`` characters at spaces and after
    hyphens (``cola-minilm-mcdropout`` at 10: ``cola-<br>minilm-<br>mcdropout``), joined with
    plotly's ``<br>``; a longer piece keeps its own line, a name already broken is kept."""
    if "<br>" in text:
        return text
    lines: list[str] = []
    for word in text.split():
        for i, piece in enumerate(re.findall(r"[^-]+-*|-+", word)):  # "a-b" -> "a-", "b"
            joiner = "" if i else " "
            if lines and len(lines[-1]) + len(joiner) + len(piece) <= width:
                lines[-1] += joiner + piece
            else:
                lines.append(piece)
    return "<br>".join(lines)


def top_title(text: str, names: int = 1) -> tuple[dict, int]:
    """A figure's title anchored :data:`TITLE_PAD` px below the figure's top, and the top margin
    that holds its lines as :func:`phone_titles` wraps them plus ``names`` lines of panel names
    under it. Plotly centres a title in the top margin by default, so a title that wraps grows
    down into the panel names (or column titles) that sit at the top of the plot."""
    lines = wrap_title(text).count("<br>") + 1
    title = {"text": text, "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": TITLE_PAD}}
    return title, TITLE_PAD + _LINE_PX * lines + 8 + _NAME_LINE_PX * names


def phone_titles(build: Callable[..., go.Figure]) -> Callable[..., go.Figure]:
    """Decorate a figure builder: its title wraps (:func:`wrap_title`) at the title font, and
    the top margin grows with the number of lines so the title never overlaps the plot; and
    every text in it is shown as typed, never a link (:func:`uqlab.workbench.inert.inert`)."""

    @functools.wraps(build)
    def wrapped(*args, **kwargs) -> go.Figure:
        fig = inert(build(*args, **kwargs))
        text = fig.layout.title.text
        if text and "<br>" not in text:
            text = wrap_title(text)
            top = max(fig.layout.margin.t or 0, 36 + _LINE_PX * (text.count("<br>") + 1))
            fig.update_layout(title={"text": text, "font": {"size": TITLE_FONT}}, margin={"t": top})
        return fig

    return wrapped


def titled_spec(spec: FigureSpec) -> FigureSpec:
    """:func:`phone_titles`'s title and margin, on a figure's plotly JSON (changed in place)."""
    layout = spec.setdefault("layout", {})
    title = layout.get("title")
    title = dict(title) if isinstance(title, dict) else {"text": title} if title else {}
    text = title.get("text")
    if text and "<br>" not in text:
        text = wrap_title(text)
        margin = dict(layout.get("margin") or {})
        top = max(margin.get("t") or 0, 36 + _LINE_PX * (text.count("<br>") + 1))
        layout["title"] = {
            **title,
            "text": text,
            "font": {**title.get("font", {}), "size": TITLE_FONT},
        }
        layout["margin"] = {**margin, "t": top}
    return spec


def as_figure(spec: FigureSpec) -> go.Figure:
    """A figure of its plotly JSON without plotly's validation (the JSON is the builders' own,
    checked against the validated builders by tests/uqlab/workbench/test_figures.py): about 1 ms
    where validating costs 10 to 40 ms. ``spec`` is copied, never shared with the figure."""
    return go.Figure(spec, _validate=False)


def phone_specs(build: Callable[..., FigureSpec]) -> Callable[..., go.Figure]:
    """:func:`phone_titles` for a builder that writes its figure's plotly JSON itself (plain
    dicts and numpy arrays: no plotly object is built, so nothing is validated): the decorated
    builder returns the figure (:func:`as_figure`), and its ``spec`` attribute the plotly JSON,
    inert and titled, for a cache to keep."""

    @functools.wraps(build)
    def spec(*args, **kwargs) -> FigureSpec:
        return titled_spec(inert_spec(build(*args, **kwargs)))

    @functools.wraps(build)
    def wrapped(*args, **kwargs) -> go.Figure:
        return as_figure(spec(*args, **kwargs))

    wrapped.spec = spec
    return wrapped
