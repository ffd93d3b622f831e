"""What each checkpoint's uncertainty catches, read from its metrics.json: its own errors (error
detection), out-of-domain texts overall and at equal length, and a note wherever an AUROC is
below 0.5 (the score ranks backwards). The Results page and docs/results.md show the same rows
(:func:`detection_rows`, :func:`backwards_notes`, :func:`markdown`).

:func:`metric_notes` are the sentences a reader must see beside a metrics.json's figures, said
wherever they are shown (``uqlab.evaluate``'s output and its metrics.json ``notes``, Results,
docs/results.md): every score whose AUROC is below 0.5 (Mahalanobis and max p as well as MI),
OOD AUROCs that no length bin could check (:func:`length_note`), temperature scaling that
raises the ECE it was fitted to lower (:func:`temperature_notes`). They are computed from the
numbers each time, never read from the file: an uploaded metrics.json's text is not shown.

A checkpoint evaluated before these figures existed (no ``error_detection`` in its
metrics.json) is left out until it is evaluated again; one evaluated before the paired
differences from 1 − max p and the length-matched OOD AUROCs shows "—" in those columns
(:func:`versus`, :func:`matched`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

SCORES = {
    "mutual_information": "MI",
    "max_prob": "1−p",
}  # MI; 1 − max p  # the two a reader compares
OOD_LABELS = {
    **SCORES,
    "entropy": "entropy",
    "variance": "var",
    "max_logit": "max logit",
    "energy": "energy",
    "mahalanobis": "Mahalanobis",
}  # every OOD score uqlab.evaluate writes, as the tables name them
FLAT = ("mutual_information", "variance")  # 0 for every text of a model whose samples agree
Entry = tuple[str, dict | None]  # (checkpoint name, its metrics.json or None)


def number(d: object, *keys: str) -> float | None:
    """``d[k1][k2]...`` when it is a finite number, else None (a metrics.json may be an
    upload's: anything can be missing or of another type)."""
    for k in keys:
        d = d.get(k) if isinstance(d, dict) else None
    ok = isinstance(d, int | float) and not isinstance(d, bool) and math.isfinite(d)
    return float(d) if ok else None


def ends(d: object, key: str = "interval") -> tuple[float, float] | None:
    """``d[key]`` as ``(low, high)`` when it is a list of two finite numbers, else None."""
    got = d.get(key) if isinstance(d, dict) else None
    if not isinstance(got, list) or len(got) != 2:
        return None
    low, high = (number({"v": v}, "v") for v in got)
    return None if low is None or high is None else (low, high)


def _auroc(value: float | None, constant: bool) -> str:
    if constant:
        return "— (no spread)"
    return "—" if value is None else f"{value:.3f}"


def _no_spread(m: dict) -> bool:
    """Whether the samples never differ (a deterministic model: MI is 0 for every text)."""
    return (number(m, "id", "mean_mutual_information") or 0.0) == 0.0


def equal_length(m: dict, score: str = "mutual_information") -> str:
    """The OOD AUROC of ``score`` in each length bin that holds enough of both domains, as
    ``"16–31: 0.58 · 32–63: 0.61"``; the bin of texts cut at the read length is ``"64 (cut)"``."""
    by = m.get("ood_detection_by_length")
    if not by:
        return "—"
    read = m.get("read_len")
    cells = []
    for b in by[score]:
        lo, hi = b["tokens"]
        if b["auroc"] is None:
            continue
        where = f"{lo} (cut)" if lo == read else f"{lo}–{hi - 1}"
        cells.append(f"{where}: {b['auroc']:.3f}")
    return " · ".join(cells) or f"no bin holds {by['min_per_side']}+ of both domains"


def versus(d: object) -> str:
    """A paired difference from 1 − max p (:meth:`PairedDifference.as_dict`) as
    ``"−0.041 [−0.070, −0.012] worse"``; "—" when missing (evaluated before the figure)."""
    diff, interval = number(d, "difference"), ends(d)
    verdict = d.get("verdict") if isinstance(d, dict) else None
    if diff is None or interval is None or verdict not in ("better", "tie", "worse"):
        return "—"
    low, high = interval
    return f"{diff:+.3f} [{low:+.3f}, {high:+.3f}] {verdict}".replace("-", "−")


def matched(m: dict, score: str = "mutual_information") -> str:
    """The OOD AUROC of ``score`` with both domains drawn to one length histogram, with the
    texts a side: ``"0.512 (240 a side)"``, and the out-of-domain texts drawn when they are not
    the OOD set itself (``"0.61 (230 a side; IMDB review sentences)"``); why there is none where
    lengths do not overlap."""
    got = m.get("ood_detection_length_matched")
    if not isinstance(got, dict):
        return "—"
    n = got.get("n_per_side")
    auroc = number(got, "auroc", score)
    if auroc is None:
        return f"none: lengths hardly overlap ({n} a side)" if isinstance(n, int) else "—"
    drawn = drawn_set(m)
    return f"{auroc:.3f} ({n} a side{f'; {drawn}' if drawn else ''})"


_SET_NAME = re.compile(r"[A-Za-z0-9 ,.'()-]{1,40}")  # as a task file may name a set


def drawn_set(m: dict) -> str | None:
    """The name of the out-of-domain texts the length-matched figure drew when they are not the
    OOD set itself (``set``: a task's ``ood_matched``), or None. A metrics.json may be an
    upload's: a name of other characters or length is not shown (None)."""
    got = m.get("ood_detection_length_matched")
    name = got.get("set") if isinstance(got, dict) else None
    return name if isinstance(name, str) and _SET_NAME.fullmatch(name) else None


def detection_rows(entries: Iterable[Entry]) -> list[dict]:
    """One row per evaluated checkpoint with error detection: tokens read, error AUROC and
    AURC by MI and 1 − max p, OOD AUROC by MI overall and within length bins."""
    rows = []
    for name, m in entries:
        if not m or "error_detection" not in m:
            continue
        flat = _no_spread(m)
        errors = m["error_detection"]["id"]
        row = {"checkpoint": name, "tokens": m.get("read_len")}
        for key, short in SCORES.items():
            row[f"error AUROC {short}"] = _auroc(errors[key]["auroc"], flat and key != "max_prob")
        for key, short in SCORES.items():
            row[f"AURC {short}"] = f"{errors[key]['aurc']:.3f}"
        mi = (errors.get("versus_max_prob") or {}).get("mutual_information")
        row["errors: MI − 1−p, 95 % CI"] = "— (no spread)" if flat else versus(mi)
        ood = m.get("ood_detection")
        if ood:
            row["OOD AUROC MI"] = _auroc(ood["mutual_information"]["auroc"], flat)
            row["OOD AUROC MI at equal length"] = "—" if flat else equal_length(m)
            row["OOD AUROC MI, lengths matched"] = "— (no spread)" if flat else matched(m)
            row["OOD AUROC 1−p, lengths matched"] = matched(m, "max_prob")
        rows.append(row)
    return rows


def backwards_notes(entries: Iterable[Entry]) -> list[str]:
    """A line per checkpoint and kind of positive for the AUROCs below 0.5: of MI and 1 − max p
    on its own errors, of every score on the out-of-domain texts (Mahalanobis included)."""
    notes = []
    for name, m in entries:
        if m and "error_detection" in m:
            notes += [f"{name} {line}" for line in _backwards(m)]
    return notes


def _backwards(m: dict) -> list[str]:
    """``"on the errors: ..."`` / ``"on the out-of-domain texts: ..."``: the scores of ``m``
    whose AUROC is below 0.5 as shown (three decimals), MI and variance left out for a model
    whose samples agree."""
    flat = _no_spread(m)
    found = (
        ("errors", "error_detection", ("id",), SCORES),
        ("out-of-domain texts", "ood_detection", (), OOD_LABELS),
    )
    out = []
    for what, section, inner, labels in found:
        low = [
            f"{short} {auroc:.3f}"
            for key, short in labels.items()
            if not (flat and key in FLAT)
            for auroc in [number(m, section, *inner, key, "auroc")]
            if auroc is not None and round(auroc, 3) < 0.5
        ]
        if low:
            which = "this score ranks" if len(low) == 1 else "these scores rank"
            out.append(
                f"on the {what}: AUROC {', '.join(low)}, below 0.5: {which} backwards. "
                f"They score the {what} lower (less uncertain) than the rest, so flagging the "
                "highest finds them less often than chance would."
            )
    return out


def length_note(m: dict) -> str | None:
    """A sentence when ``m`` scored out-of-domain detection but no bin of tokens read holds
    enough texts of both domains: the OOD AUROCs may measure length as much as domain (the
    texts' usual lengths said); None otherwise."""
    by = m.get("ood_detection_by_length")
    bins = by.get("mutual_information") if isinstance(by, dict) else None
    if not isinstance(bins, list) or not bins or not all(isinstance(b, dict) for b in bins):
        return None
    if any(number(b, "auroc") is not None for b in bins):
        return None
    read = number(m, "read_len")

    def most(side: str) -> str:
        """The bin holding most of ``side``'s texts, as the equal-length cells name bins."""
        tokens = max(bins, key=lambda b: number(b, side) or 0).get("tokens")
        lo, hi = tokens if isinstance(tokens, list) and len(tokens) == 2 else (None, None)
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (lo, hi)):
            return "?"
        return f"{lo} (cut)" if read is not None and lo == read else f"{lo}–{hi - 1}"

    need = number(by, "min_per_side")
    matched_on = drawn_set(m)
    return (
        "Length could not be controlled: no bin of tokens read holds "
        f"{'enough' if need is None else f'{need:.0f}+'} texts of both domains (most "
        f"in-domain texts read {most('id')} tokens, most out-of-domain {most('ood')}), so "
        "every OOD AUROC here may measure text length as much as domain"
        + (f"; the length-matched figure draws {matched_on} instead." if matched_on else ".")
    )


def temperature_notes(m: dict) -> list[str]:
    """A sentence per domain where temperature scaling (fitted on dev) raises the ECE, as
    shown (three decimals)."""
    t = number(m, "temperature", "value")
    out = []
    for side, what in (("id", "in-domain test"), ("ood", "out-of-domain")):
        before, after = number(m, side, "ece"), number(m, side, "scaled", "ece")
        if before is None or after is None or round(after, 3) <= round(before, 3):
            continue
        fitted = "" if t is None else f" (t = {t:.2f}, fitted on dev)"
        out.append(
            f"Temperature scaling{fitted} raises the {what} ECE {before:.3f} → {after:.3f}: "
            "the scaled probabilities are less calibrated there than the model's own."
        )
    return out


def metric_notes(m: dict | None) -> list[str]:
    """Every sentence of the module docstring that ``m`` calls for, in that order ([] for
    none, or for a metrics.json without those figures)."""
    if not isinstance(m, dict):
        return []
    out = [line[0].upper() + line[1:] for line in _backwards(m)]  # "On the errors: ..."
    length = length_note(m)
    return out + ([length] if length else []) + temperature_notes(m)


def markdown(entries: list[Entry]) -> list[str]:
    """The section of docs/results.md: the table and the backwards notes."""
    rows = detection_rows(entries)
    if not rows:
        return []
    head = list(rows[0])
    for r in rows[1:]:
        head += [k for k in r if k not in head]
    out = [
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---" if k == "checkpoint" else "---:" for k in head) + "|",
    ]
    out += ["| " + " | ".join(str(r.get(k, "")) for k in head) + " |" for r in rows]
    notes = backwards_notes(entries)
    if notes:
        out += ["", "Ranking backwards (AUROC below 0.5):", ""] + [f"- {n}" for n in notes]
    lengths = length_notes(entries)
    if lengths:
        out += ["", "OOD AUROC at equal length, not measurable:", ""] + [f"- {n}" for n in lengths]
    return out


def length_notes(entries: Iterable[Entry]) -> list[str]:
    """``"name: <length_note>"`` for each checkpoint whose OOD AUROCs no length bin checks."""
    return [f"{name}: {note}" for name, m in entries if m for note in [length_note(m)] if note]


def temperature_lines(entries: Iterable[Entry]) -> list[str]:
    """``"name, by its evaluation: <temperature note>"`` for each scaling that raises ECE."""
    return [
        f"{name}, by its evaluation: {n}" for name, m in entries if m for n in temperature_notes(m)
    ]
