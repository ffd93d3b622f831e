"""The view state shared by every page, and its round trip through the URL query string.

A shared link must reopen the same view with the same numbers, so every setting that changes a
number lives in :class:`ViewState`, and :func:`parse` reads it back from query parameters
(strings, possibly absent, malformed or out of range). Nothing here imports Streamlit: the
functions are plain and tested on their own.

``None`` in an override field means "the checkpoint's own value" (its training temperatures,
dropout rate, EM iterations, BAM mode), so a link without them follows the checkpoint.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from urllib.parse import quote, quote_plus

from ui.logic.format import plain
from ui.logic.selection import parse as parse_selection
from uqcore.knobs import CONTROLLED, KNOBS, Knob
from uqcore.settings import SamplingSettings
from uqlab.workbench.compute import EXPLORE_T

MAX_T = 1000  # samples per request in the app (the library allows more)
MAX_SEED = 2**31 - 1
MAX_TEXT_CHARS = 20_000  # longer texts are cut (a model reads at most max_len tokens anyway)
MAX_LINK_TEXT_BYTES = 4_000  # a text longer than this (URL-encoded) is left out of the link
DEFAULT_T = EXPLORE_T  # the explorer's (uqlab.workbench.compute: the notebook's too)


class _View:
    def overrides(self) -> SamplingSettings:
        """The inference overrides this view asks for (None = the checkpoint's own value), as
        the library's :class:`uqcore.settings.SamplingSettings`: one name per knob, widget to
        kernel."""
        return SamplingSettings(**{name: getattr(self, name) for name in CONTROLLED})

    def replace(self, **changes) -> ViewState:
        return dataclasses.replace(self, **changes)


ViewState = dataclasses.make_dataclass(
    "ViewState",
    [
        ("ckpt", str | None, dataclasses.field(default=None)),
        ("text", str | None, dataclasses.field(default=None)),
        ("label", int | None, dataclasses.field(default=None)),
        ("T", int, dataclasses.field(default=DEFAULT_T)),
        ("seed", int, dataclasses.field(default=0)),
        *((n, KNOBS[n].kind | None, dataclasses.field(default=None)) for n in CONTROLLED),
        ("scaled", bool, dataclasses.field(default=False)),
        ("whole", bool, dataclasses.field(default=False)),
        ("sel", str | None, dataclasses.field(default=None)),
    ],
    bases=(_View,),
    namespace={
        "__module__": __name__,  # as if written here (pickle, repr, docs)
        "__doc__": "Everything a link carries. ``label``: the gold label, or None if unknown; "
        "then T, the seed and one field per knob with a control (:data:`uqcore.knobs."
        "CONTROLLED`: None = the checkpoint's value); ``scaled``: temperature scaling (fitted "
        "on dev) applied to every sample's logits; ``whole``: read past the training length, "
        "up to the position table (explorer); ``sel``: the rows of a dataset page a figure "
        "selected (:mod:`ui.logic.selection`, read by Error analysis).",
    },
    frozen=True,
)


def _one(params: Mapping, key: str) -> str | None:
    """A query value as one string (Streamlit gives str; lists keep their last value)."""
    value = params.get(key)
    if isinstance(value, list | tuple):
        value = value[-1] if value else None
    return None if value is None else str(value)


def _number(raw: str, kind: type) -> float | int | None:
    try:
        value = kind(raw.strip()) if kind is int else float(raw.strip())
    except (TypeError, ValueError):
        return None
    if kind is float and not math.isfinite(value):
        return None
    return value


def _ranged(params, key, kind, low, high, default, notes, label):
    raw = _one(params, key)
    if raw is None or raw == "":
        return default
    value = _number(raw, kind)
    instead = "the checkpoint's trained value" if default is None else default
    if value is None:
        notes.append(f"{label} '{plain(raw[:40])}' in the link is not a number; using {instead}.")
        return default
    if not low <= value <= high:
        clamped = min(max(value, low), high)
        notes.append(f"{label} {value} in the link is outside [{low}, {high}]; using {clamped}.")
        return clamped
    return value


def _alias(params: Mapping, name: str, old: str) -> Mapping:
    """``params`` with ``name`` taken from ``old`` when only the old key is there (links made
    before the knobs took the library's names: ``noise``, ``bam``, ``em``)."""
    if _one(params, name) is None and _one(params, old) is not None:
        return {name: _one(params, old)}
    return params


def _knob(params: Mapping, knob: Knob, notes: list[str]):
    """Knob ``knob``'s value in a link (its older key ``alias`` too), None when absent; a value
    it cannot take is replaced (a number out of ``link`` clamped, a bad one dropped) and said."""
    if knob.choices:
        raw = _one(params, knob.name) or (knob.alias and _one(params, knob.alias))
        if raw is not None and raw not in knob.choices:
            allowed = " or ".join(f"'{c}'" for c in knob.choices)
            notes.append(f"{knob.note} '{plain(raw[:20])}' in the link is not {allowed}; ignored.")
            return None
        return raw
    if knob.alias:
        params = _alias(params, knob.name, knob.alias)
    return _ranged(params, knob.name, knob.kind, *knob.link, None, notes, knob.note)


def parse(
    params: Mapping, checkpoints: list[str], default_ckpt: str | None
) -> tuple[ViewState, list[str]]:
    """Read a :class:`ViewState` from query ``params``; return it and one plain-language note
    per value that had to be replaced (shown to the user, never raised)."""
    notes: list[str] = []
    ckpt = _one(params, "ckpt")
    if ckpt is not None and ckpt not in checkpoints:
        notes.append(
            f"Checkpoint '{plain(ckpt[:60])}' in the link is not available here; "
            f"showing {default_ckpt or 'none'}."
        )
        ckpt = None
    text = _one(params, "text")
    if text is not None and len(text) > MAX_TEXT_CHARS:
        notes.append(
            f"The text in the link has {len(text):,} characters; "
            f"the first {MAX_TEXT_CHARS:,} are kept."
        )
        text = text[:MAX_TEXT_CHARS]
    label_raw = _one(params, "label")
    label = None
    if label_raw not in (None, ""):
        label = _number(label_raw, int)
        if label is None or label < 0:
            shown = plain(label_raw[:20])
            notes.append(f"Label '{shown}' in the link is not a class number; ignored.")
            label = None
    state = ViewState(
        ckpt=ckpt or default_ckpt,
        text=text,
        label=label,
        T=_ranged(params, "T", int, 1, MAX_T, DEFAULT_T, notes, "T"),
        seed=_ranged(params, "seed", int, 0, MAX_SEED, 0, notes, "Seed"),
        **{name: _knob(params, KNOBS[name], notes) for name in CONTROLLED},
        scaled=_one(params, "scaled") in ("1", "true", "True"),
        whole=_one(params, "whole") in ("1", "true", "True"),
        sel=_selection(params, notes),
    )
    return state, notes


def _selection(params: Mapping, notes: list[str]) -> str | None:
    """A link's ``sel`` in its canonical form, or None (an unreadable one is said, not run)."""
    picked, why = parse_selection(_one(params, "sel"))
    if why:
        notes.append(why)
    return None if picked is None else picked.encode()


def link_holds(text: str | None) -> bool:
    """Whether ``text`` fits a link: servers and browsers refuse request lines of tens of
    kilobytes, so a long review never goes into the address bar (the page says so)."""
    if text is None:
        return True
    # quoting never shortens a text: a long one fails without being quoted
    return len(text) <= MAX_LINK_TEXT_BYTES and _quoted_length(text) <= MAX_LINK_TEXT_BYTES


@functools.lru_cache(maxsize=4096)  # a table's links are built again at every rerun
def _quoted_length(text: str) -> int:
    return len(quote(text))


@functools.lru_cache(maxsize=4096)  # texts of at most MAX_LINK_TEXT_BYTES: <= 16 MB in all
def _query_value(value: str) -> str:
    return quote_plus(value)


def to_params(state: ViewState) -> dict[str, str]:
    """The query parameters of ``state``: every set field, as short strings; the text only when
    it fits a link (:func:`link_holds`)."""
    out: dict[str, str] = {}
    for f in dataclasses.fields(state):
        value = getattr(state, f.name)
        if value is None or value is False or (f.name == "text" and not link_holds(value)):
            continue
        if value is True:
            out[f.name] = "1"
            continue
        out[f.name] = repr(value) if isinstance(value, float) else str(value)  # exact
    return out


def explorer_url(state: ViewState) -> str:
    """The link that opens the explorer (the app's default page) on ``state``: every page that
    links to a view builds it here."""
    params = to_params(state).items()  # as urlencode writes them, the values' quoting kept
    return "/?" + "&".join(f"{quote_plus(k)}={_query_value(v)}" for k, v in params)
