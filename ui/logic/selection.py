"""A selection of a dataset page's examples that a link carries, from an aggregate figure to the
rows behind it (issue 49, item 1). No Streamlit here.

A selection names rows by what the figure showed, not by row numbers, so a shared link reopens the
same rows wherever the page computes the same frame (same checkpoint, examples, T and seed):

- ``bin``: the examples of one bin of the reliability diagram, binned exactly as
  :func:`uqcore.stats.reliability_diagram` bins them (confidence = max of the mean prediction,
  :data:`N_BINS` equal-width bins, 1.0 in the last), in-domain rows only, as the diagram;
- ``top``: the ``k`` most confident in-domain examples, a point of the risk-coverage curve, in
  the order :func:`uqcore.stats.risk_coverage` keeps them (ties in row order);
- ``slice``: the examples of one slice of :func:`uqlab.workbench.slices.groups` (length, gold label,
  prediction or domain; never a pattern: a link never brings a regular expression to run);
- ``range``: the examples of one domain whose uncertainty score (a key of
  :data:`uqlab.workbench.dataset.SCORES`) lies in ``[lo, hi)``, a bar of a histogram by domain;
- ``flag``: the examples of every domain whose score is at least ``lo``, the texts a point of
  the out-of-domain ROC curve flags (its threshold, as :func:`uqcore.stats.ood_detection`
  draws the curve);
- ``cell``: the in-domain examples of gold label ``gold`` predicted ``pred`` (the class of the
  mean prediction), a cell of the confusion matrix (:func:`uqlab.workbench.dataset.confusion`).

It also carries the page's ``T`` and examples per domain (``per``, 0 = all), so Error analysis
samples the same rows, and whether the rows were a visitor's file (``mine``: a link cannot carry
the file itself, so a fresh visit says so instead of selecting bundled rows). :func:`parse`
reads the link's text strictly: anything else is refused with a sentence that says why.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ui.logic.format import plain
from uqlab.workbench import slices
from uqlab.workbench.dataset import SCORES, in_domain, mean_probs

N_BINS = 15  # the reliability diagram's bins
KINDS = ("bin", "top", "slice", "range", "flag", "cell")
MAX_CLASS = 49  # the largest label id a link may name (a file has at most 50 labels)
LINK_BY = ("length", "gold label", "prediction", "domain")  # slices a link may name
MAX_GROUP = 80  # characters of a slice's name in a link
MAX_T, MAX_PER, MAX_TOP = 1000, 100_000, 1_000_000
_SEP = "|"
_NUMBER = re.compile(r"\d{1,7}")
_FLOAT = re.compile(r"-?\d{1,12}(\.\d{1,20})?(e-?\d{1,3})?")
MAX_DOMAIN = 60


@dataclass(frozen=True)
class Selection:
    """Which rows (``kind`` with ``bin``, ``top`` or ``by`` / ``group``) of the frame sampled at
    ``T`` with ``per`` examples per domain."""

    kind: str
    T: int
    per: int
    bin: int = -1
    top: int = 0
    by: str = ""
    group: str = ""
    mine: bool = False
    score: str = ""
    lo: float = 0.0
    hi: float = 0.0
    domain: str = ""
    gold: int = -1
    pred: int = -1

    def encode(self) -> str:
        """The link's text: ``bin|12|T10|n60``, ``top|30|T10|n60``, ``slice|length|1-10
        words|T10|n60``; ``|f`` at the end for a visitor's file."""
        head = {
            "bin": [str(self.bin)],
            "top": [str(self.top)],
            "slice": [self.by, self.group],
            "range": [self.score, repr(self.lo), repr(self.hi), self.domain],
            "flag": [f"{self.score}:{self.lo!r}"],
            "cell": [str(self.gold), str(self.pred)],
        }
        tail = ["f"] if self.mine else []
        return _SEP.join([self.kind, *head[self.kind], f"T{self.T}", f"n{self.per}", *tail])

    def mask(self, df: pd.DataFrame, names: tuple[str, ...]) -> np.ndarray:
        """``[len(df)]`` bool: the rows of ``df`` (a frame of :func:`uqlab.workbench.dataset.frame`)
        this selection names."""
        out = np.zeros(len(df), dtype=bool)
        if self.kind == "slice":
            return (slices.groups(df, self.by, names) == self.group).to_numpy()
        if self.kind == "range":
            v = df[SCORES[self.score][0]].to_numpy(dtype=float)  # [N]
            return (df["domain"] == self.domain).to_numpy() & (v >= self.lo) & (v < self.hi)
        if self.kind == "flag":
            return df[SCORES[self.score][0]].to_numpy(dtype=float) >= self.lo
        part = in_domain(df)
        where = df.index.get_indexer(part.index)  # positions of the in-domain rows
        if self.kind == "cell":
            hit = (part["gold"] == self.gold).to_numpy() & (part["pred"] == self.pred).to_numpy()
            out[where[hit]] = True
            return out
        conf = mean_probs(part).max(axis=1)  # [n]
        if self.kind == "bin":
            idx = np.minimum((conf * N_BINS).astype(np.int64), N_BINS - 1)  # as the library
            out[where[idx == self.bin]] = True
        else:  # "top": most confident first, ties in row order (as risk_coverage)
            order = np.argsort(-conf, kind="stable")
            out[where[order[: self.top]]] = True
        return out

    def what(self, names: tuple[str, ...] = ()) -> str:
        """What the rows are, in words (no counts), as markdown: a slice's or a domain's name
        (from a link, or a visitor's file's labels) is escaped, never live markup; ``names``:
        the label names a confusion cell is said with (else its ids)."""
        if self.kind == "cell":
            gold, pred = (
                plain(names[i]) if i < len(names) else f"label {i}" for i in (self.gold, self.pred)
            )
            return f"gold {gold}, predicted {pred} (a cell of the confusion matrix)"
        if self.kind == "bin":
            lo, hi = self.bin / N_BINS, (self.bin + 1) / N_BINS
            close = "]" if self.bin == N_BINS - 1 else ")"
            where = f"reliability bin {self.bin + 1} of {N_BINS}"
            return f"confidence in [{lo:.2f}, {hi:.2f}{close} ({where})"
        if self.kind == "top":
            return f"the {self.top:,} most confident (a point of the risk-coverage curve)"
        if self.kind == "range":
            label = SCORES[self.score][1]
            return f"{label} in [{self.lo:.3g}, {self.hi:.3g}), {plain(self.domain)}"
        if self.kind == "flag":
            label = SCORES[self.score][1]
            return f"flagged by {label} ≥ {self.lo:.3g} (a point of the ROC curve)"
        return f"slice {self.by} = {plain(self.group)}"  # a link's or a file's words: inert

    def words(self, picked: pd.DataFrame, names: tuple[str, ...] = ()) -> str:
        """``"confidence in [0.80, 0.87) (...): 23 texts, 6 wrong"`` for the rows picked."""
        wrong = int((picked["pred"] != picked["gold"]).sum()) if len(picked) else 0
        return f"{self.what(names)}: {len(picked):,} texts, {wrong:,} wrong"


def parse(raw: str | None) -> tuple[Selection | None, str | None]:
    """A link's selection text -> ``(Selection, None)``, or ``(None, why)`` when it is not one
    (``(None, None)`` when there is none)."""
    if raw is None or raw == "":
        return None, None
    if len(raw) > 200:
        return None, "The selection in the link is too long; it was ignored."
    parts = raw.split(_SEP)
    mine = parts[-1] == "f"
    if mine:
        parts = parts[:-1]
    kind = parts[0]
    if kind not in KINDS:
        return None, "The selection in the link is not one this app makes; it was ignored."
    want = {"slice": 5, "cell": 5, "range": 7}.get(kind, 4)
    if len(parts) != want:
        return None, "The selection in the link is incomplete; it was ignored."
    t_raw, n_raw = parts[-2], parts[-1]
    if not (t_raw[:1] == "T" and n_raw[:1] == "n"):
        return None, "The selection in the link has no T or examples count; it was ignored."
    T, per = _count(t_raw[1:], 1, MAX_T), _count(n_raw[1:], 0, MAX_PER)
    if T is None or per is None:
        return None, "The selection's T or examples count is out of range; it was ignored."
    if kind == "slice":
        by, group = parts[1], parts[2]
        if by not in LINK_BY or not group or len(group) > MAX_GROUP:
            return None, f"A link selects a slice by {', '.join(LINK_BY)} only; ignored."
        return Selection("slice", T, per, by=by, group=group, mine=mine), None
    if kind == "range":
        return _range(parts[1:5], T, per, mine)
    if kind == "flag":
        return _flag(parts[1], T, per, mine)
    if kind == "cell":
        gold, pred = _count(parts[1], 0, MAX_CLASS), _count(parts[2], 0, MAX_CLASS)
        if gold is None or pred is None:
            return None, "The selection's labels are out of range; it was ignored."
        return Selection("cell", T, per, mine=mine, gold=gold, pred=pred), None
    value = _count(parts[1], 0 if kind == "bin" else 1, N_BINS - 1 if kind == "bin" else MAX_TOP)
    if value is None:
        return None, "The selection's bin or count is out of range; it was ignored."
    if kind == "bin":
        return Selection("bin", T, per, bin=value, mine=mine), None
    return Selection("top", T, per, top=value, mine=mine), None


def _range(parts: list[str], T: int, per: int, mine: bool) -> tuple[Selection | None, str | None]:
    """A ``range`` selection's score, ends and domain, read strictly."""
    score, lo_raw, hi_raw, domain = parts
    lo, hi = _float(lo_raw), _float(hi_raw)
    if score not in SCORES or lo is None or hi is None or not lo < hi:
        return None, "The selection's score or range is not one this app makes; it was ignored."
    if not domain or len(domain) > MAX_DOMAIN:
        return None, "The selection's domain is missing or too long; it was ignored."
    return Selection("range", T, per, mine=mine, score=score, lo=lo, hi=hi, domain=domain), None


def _flag(raw: str, T: int, per: int, mine: bool) -> tuple[Selection | None, str | None]:
    """A ``flag`` selection's score and threshold (``score:threshold``), read strictly."""
    score, _, lo_raw = raw.partition(":")
    lo = _float(lo_raw)
    if score not in SCORES or lo is None:
        return None, "The selection's score or threshold is not one this app makes; it was ignored."
    return Selection("flag", T, per, mine=mine, score=score, lo=lo), None


def _float(raw: str) -> float | None:
    if not _FLOAT.fullmatch(raw):
        return None
    value = float(raw)
    return value if math.isfinite(value) else None


def _count(raw: str, low: int, high: int) -> int | None:
    if not _NUMBER.fullmatch(raw):
        return None
    value = int(raw)
    return value if low <= value <= high else None


def coverage_top(point_index: int, n: int) -> int:
    """The ``k`` of a risk-coverage curve's point ``point_index`` (coverage ``k / n``)."""
    return max(1, min(n, int(point_index) + 1))


def _points(event: object) -> list[dict]:
    """The selected points of a ``st.plotly_chart`` selection event (none when absent)."""
    got = event.get("selection", {}) if isinstance(event, dict) else None
    points = got.get("points", []) if isinstance(got, dict) else []
    return [p for p in points if isinstance(p, dict)]


def picked_bin(event: object, traces: list[str]) -> tuple[str, int] | None:
    """``(trace name, bin)`` of the first selected marker of the reliability diagram
    (``traces``: its curves' names in drawing order, after the diagonal; each marker's
    ``customdata`` is ``[examples, bin]``), or None."""
    for p in _points(event):
        curve, data = p.get("curve_number"), _listed(p.get("customdata"))
        if isinstance(curve, int) and 1 <= curve <= len(traces) and len(data) == 2:
            if isinstance(data[1], int | float) and 0 <= int(data[1]) < N_BINS:
                return traces[curve - 1], int(data[1])
    return None


def _listed(data: object) -> list:
    """A point's ``customdata`` as a list: Streamlit sends an array row as ``{"0": .., "1":
    ..}``; a list stays a list; anything else is empty."""
    if isinstance(data, dict):
        return [data.get(str(i)) for i in range(len(data))]
    return list(data) if isinstance(data, list | tuple) else []


def picked_top(event: object, traces: list[str], sizes: dict[str, int]) -> tuple[str, int] | None:
    """``(checkpoint, k)`` of the first selected point of a risk-coverage curve (``traces``:
    the checkpoints' curves in drawing order; the oracle and random lines after them are not
    selections; ``sizes``: each one's in-domain rows), or None."""
    for p in _points(event):
        curve, index = p.get("curve_number"), p.get("point_index", p.get("point_number"))
        if isinstance(curve, int) and 0 <= curve < len(traces) and isinstance(index, int):
            name = traces[curve]
            return name, coverage_top(index, sizes[name])
    return None


def picked_range(event: object, domains: list[str], bins: dict) -> tuple[str, float, float] | None:
    """``(domain, lo, hi)`` of the first selected bar of a histogram by domain (``domains``: its
    traces in drawing order; ``bins``: its ``start`` and ``size``, as
    :func:`uqlab.workbench.figures.histogram_bins` gives them), or None."""
    for p in _points(event):
        curve, x = p.get("curve_number"), p.get("x")
        if isinstance(curve, int) and 0 <= curve < len(domains) and isinstance(x, int | float):
            start, size = float(bins["start"]), float(bins["size"])
            k = max(0, math.floor((float(x) - start) / size + 1e-9))  # the bar under the click
            return domains[curve], start + k * size, start + (k + 1) * size
    return None


def picked_flag(event: object, curves: dict[str, dict]) -> tuple[str, float] | None:
    """``(checkpoint, threshold)`` of the first selected point of the ROC figure (``curves``:
    checkpoint -> :func:`uqlab.workbench.dataset.roc`, drawn in that order after the chance line),
    or None (the chance line, or the curve's first point, which flags nothing)."""
    names = list(curves)
    for p in _points(event):
        curve, index = p.get("curve_number"), p.get("point_index", p.get("point_number"))
        if isinstance(curve, int) and 1 <= curve <= len(names) and isinstance(index, int):
            thresholds = curves[names[curve - 1]].get("thresholds")
            if thresholds is not None and 0 <= index < len(thresholds):
                value = float(thresholds[index])
                return (names[curve - 1], value) if math.isfinite(value) else None
    return None


def picked_cell(event: object) -> tuple[int, int] | None:
    """``(gold, pred)`` of the first selected cell of a confusion figure (its clickable cells'
    ``customdata`` is ``[gold, pred, count]``: :func:`uqlab.workbench.figures.confusion_figure`),
    or None."""
    for p in _points(event):
        data = _listed(p.get("customdata"))
        if len(data) == 3 and all(isinstance(v, int | float) for v in data[:2]):
            if all(0 <= v <= MAX_CLASS for v in data[:2]):
                return int(data[0]), int(data[1])
    return None
