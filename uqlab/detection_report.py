"""What each checkpoint's uncertainty catches, read from its metrics.json: its own errors (error
detection), out-of-domain texts overall and at equal length, and a note wherever an AUROC is
below 0.5 (the score ranks backwards). The Results page and docs/results.md show the same rows
(:func:`detection_rows`, :func:`backwards_notes`, :func:`markdown`).

A checkpoint evaluated before these figures existed (no ``error_detection`` in its
metrics.json) is left out until it is evaluated again.
"""

from __future__ import annotations

from collections.abc import Iterable

from uqcore.detection import backwards

SCORES = {
    "mutual_information": "MI",
    "max_prob": "1−p",
}  # MI; 1 − max p  # the two a reader compares
Entry = tuple[str, dict | None]  # (checkpoint name, its metrics.json or None)


def _auroc(value: float | None, constant: bool) -> str:
    if constant:
        return "— (no spread)"
    return "—" if value is None else f"{value:.3f}"


def _no_spread(m: dict) -> bool:
    """Whether the samples never differ (a deterministic model: MI is 0 for every text)."""
    return float(m.get("id", {}).get("mean_mutual_information", 0.0)) == 0.0


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
        ood = m.get("ood_detection")
        if ood:
            row["OOD AUROC MI"] = _auroc(ood["mutual_information"]["auroc"], flat)
            row["OOD AUROC MI at equal length"] = "—" if flat else equal_length(m)
        rows.append(row)
    return rows


def backwards_notes(entries: Iterable[Entry]) -> list[str]:
    """A line for every AUROC below 0.5 of MI or 1 − max p (errors or out-of-domain texts)."""
    notes = []
    for name, m in entries:
        if not m or "error_detection" not in m:
            continue
        flat = _no_spread(m)
        for key, short in SCORES.items():
            if flat and key != "max_prob":
                continue
            found = (
                ("errors", m["error_detection"]["id"][key]["auroc"]),
                ("out-of-domain texts", (m.get("ood_detection") or {}).get(key, {}).get("auroc")),
            )
            for what, auroc in found:
                line = backwards(auroc, what)
                if line:
                    notes.append(f"{name}, {short} on the {what}: {line}")
    return notes


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
    return out
