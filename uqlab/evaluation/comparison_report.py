"""Which uncertainty is worth having, per task: every family beside the plain transformer of its
backbone, read from the ``comparison`` blocks of the checkpoints' metrics.json
(:mod:`uqlab.evaluation.comparison`). The Results page and docs/results.md show the same rows
(:func:`comparison_rows`) and the same plain sentences (:func:`verdict_lines`).

A checkpoint evaluated before the block existed is left out until ``python -m uqlab.evaluate
--ckpt NAME --comparison-only`` (or a full evaluation) writes it. A metrics.json may be an
upload's: every value is checked before it is shown, and a cell it cannot fill shows "—".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from uqlab.evaluation.comparison import SHORT, deterministic
from uqlab.evaluation.detection_report import ends, number, versus
from uqlab.evaluation.file_comparison import HALF

Entry = tuple[str, dict | None]  # (checkpoint name, its metrics.json or None)
CAPTION = (
    "One row per checkpoint, on its task's in-domain test texts. Accuracy, NLL, Brier and ECE "
    "of the mean prediction with 95 % bootstrap intervals (1,000 resamples of the texts; "
    "ECE's interval often sits above its value: a resample holds fewer distinct texts, and "
    "ECE, a sum of absolute gaps, tends to grow with the noise that adds); ECE scaled: after "
    "temperature "
    "scaling fitted on dev. Uncertainty (dev): the score that finds "
    "the checkpoint's own dev errors best (MI, entropy, 1−p or var), chosen on dev, never on "
    "test. Error AUROC / AURC: that score on the test errors (interval: resamples within each "
    "class). OOD AUROC: that score on every out-of-domain text; lengths matched: both domains "
    "drawn to one histogram of tokens read (CR: its IMDB reviews cut into sentences). Beats "
    "plain 1−p?: that score's AUROC minus the AUROC of 1 − max p of the plain transformer of "
    "the same task and backbone (its own row says the baseline), for each model's own errors "
    "or for the same matched out-of-domain texts, paired on the same texts with a bootstrap "
    "95 % interval: better, tie or worse. Read it beside accuracy: a model that errs more "
    "has other errors to rank, so a higher error AUROC at a lower accuracy is not a better "
    "model. A checkpoint without the figures is left out until "
    "`python -m uqlab.evaluate --ckpt NAME --comparison-only` writes them."
)
BASELINE = "the baseline"  # the verdict cells of the plain transformer's own row


def _with_interval(d: object, digits: int = 3) -> str:
    """``{"value": v, "interval": [lo, hi]}`` as ``"0.893 [0.866, 0.918]"``; "—" otherwise."""
    value, interval = number(d, "value"), ends(d)
    if value is None or interval is None:
        return "—"
    low, high = interval
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _block(m: dict | None) -> dict | None:
    got = m.get("comparison") if isinstance(m, dict) else None
    return got if isinstance(got, dict) else None


def comparison_rows(entries: Iterable[Entry]) -> list[dict]:
    """One row per checkpoint with a comparison block: the mean prediction's accuracy, NLL,
    Brier and ECE on the in-domain test with 95 % bootstrap intervals (ECE after temperature
    scaling beside it), the uncertainty chosen on dev, its AUROC and AURC for the model's own
    errors, its OOD AUROC overall and with lengths matched, and whether it beats the plain
    transformer's 1 − max p on the same texts (paired; "the baseline" on that model's row)."""
    rows = []
    for name, m in entries:
        block = _block(m)
        if block is None:
            continue
        score = block.get("score") if block.get("score") in SHORT else None
        iv = block.get("intervals") if isinstance(block.get("intervals"), dict) else {}
        scaled = number(m, "id", "scaled", "ece")
        matched = block.get("ood_matched") if isinstance(block.get("ood_matched"), dict) else {}
        own = block.get("baseline") is None and deterministic(m.get("family"))
        row = {
            "checkpoint": name,
            "accuracy": _with_interval(iv.get("accuracy")),
            "NLL": _with_interval(iv.get("nll")),
            "Brier": _with_interval(iv.get("brier")),
            "ECE": _with_interval(iv.get("ece")),
            "ECE scaled": "—" if scaled is None else f"{scaled:.3f}",
            "uncertainty (dev)": SHORT.get(score, "—") + _elsewhere(block),
            "error AUROC": _with_interval(iv.get("error_auroc")),
            "error AURC": _aurc(m, score),
            "OOD AUROC": _ood(m, score),
            "OOD AUROC, lengths matched": _matched(matched),
            "errors: beats plain 1−p?": BASELINE if own else versus(block.get("errors")),
            "OOD matched: beats plain 1−p?": BASELINE
            if own
            else versus(matched.get("versus_baseline")),
        }
        rows.append(row)
    return rows


def _elsewhere(block: dict) -> str:
    """`` (half of your file)`` where the score was not chosen on the checkpoint's dev split."""
    return f" ({HALF})" if block.get("chosen_on") == HALF else ""


def _aurc(m: dict, score: str | None) -> str:
    got = number(m, "error_detection", "id", score, "aurc") if score else None
    return "—" if got is None else f"{got:.3f}"


def _ood(m: dict, score: str | None) -> str:
    got = number(m, "ood_detection", score, "auroc") if score else None
    return "—" if got is None else f"{got:.3f}"


def _matched(matched: dict) -> str:
    n = matched.get("n_per_side")
    if not isinstance(n, int) or isinstance(n, bool):
        return "—"
    if "auroc" not in matched:
        return f"none: lengths hardly overlap ({n} a side)"
    return f"{_with_interval(matched.get('auroc'))} ({n} a side)"


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")  # a checkpoint's folder name


def plain_name(name: object) -> str | None:
    """``name`` when it reads as a checkpoint's folder name, else None: a metrics.json may be an
    upload's, and the page renders these sentences as markdown (no links, no markup)."""
    return name if isinstance(name, str) and _NAME.fullmatch(name) else None


def verdict_lines(entries: Iterable[Entry]) -> list[str]:
    """Per plain baseline: which families beat its 1 − max p with an interval that excludes a
    tie, for the errors and for OOD at matched length ("none" said plainly), and the lowest
    ECE of the families beside the baseline's (is it half?)."""
    entries = list(entries)
    groups: dict[str, list[tuple[str, dict]]] = {}
    for name, m in entries:
        block = _block(m)
        base = plain_name(block.get("baseline")) if block is not None else None
        if base is not None:
            groups.setdefault(base, []).append((name, block))
    lines = []
    for base, members in sorted(groups.items()):
        said = []
        sides = [("errors", "its errors")]
        if any(isinstance(b.get("ood_matched"), dict) for _, b in members):  # (a file may not)
            sides.append(("ood", "out-of-domain texts at matched length"))
        for key, what in sides:
            won = [
                f"{name} ({SHORT.get(b.get('score'), '?')} {_difference(d)})"
                for name, b in members
                for d in [b.get("errors") if key == "errors" else _matched_diff(b)]
                if isinstance(d, dict) and d.get("verdict") == "better"
            ]
            said.append(f"for {what}: {', '.join(won) if won else 'none'}")
        lines.append(
            f"Beats {base}'s 1 − max p, " + "; ".join(said) + "." + _ece(base, members, entries)
        )
    return lines


def _difference(d: dict) -> str:
    return versus(d).rsplit(" ", 1)[0]  # without the verdict word


def _matched_diff(block: dict) -> dict | None:
    got = block.get("ood_matched")
    return got.get("versus_baseline") if isinstance(got, dict) else None


def _ece(base: str, members: list[tuple[str, dict]], entries: list[Entry]) -> str:
    """`` Lowest ECE beside it: NAME 0.051 against 0.086 (-41 %; half would be 0.043).``"""
    theirs = next((m for n, m in entries if n == base), None)
    base_ece = number(_block(theirs), "intervals", "ece", "value")
    eces = [(name, number(b, "intervals", "ece", "value")) for name, b in members]
    eces = [(name, e) for name, e in eces if e is not None]
    if base_ece is None or not eces or base_ece <= 0:
        return ""
    name, best = min(eces, key=lambda x: x[1])
    change = f"{(best - base_ece) / base_ece * 100:+.0f} %".replace("-", "−")
    half = "at most half" if best <= base_ece / 2 else f"half would be {base_ece / 2:.3f}"
    return f" Lowest ECE beside it: {name} {best:.3f} against {base_ece:.3f} ({change}; {half})."


def left_out(entries: Iterable[Entry]) -> str:
    """The sentence naming the checkpoints left out of the table (no comparison block yet) with
    the command that writes it; "" when none is (or none could be named)."""
    names = [plain_name(n) for n, m in entries if _block(m) is None]
    names = [n for n in names if n is not None]
    if not names:
        return ""
    return (
        f"Not in the table yet (no comparison block): {', '.join(names)}; "
        "`python -m uqlab.evaluate --ckpt NAME --comparison-only` writes it."
    )


def markdown(entries: list[Entry]) -> list[str]:
    """The section of docs/results.md: the table, the verdicts and who is left out (nothing
    without rows)."""
    rows = comparison_rows(entries)
    if not rows:
        return []
    head = list(rows[0])
    out = [
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---" if k == "checkpoint" else "---:" for k in head) + "|",
    ]
    out += ["| " + " | ".join(str(r.get(k, "")) for k in head) + " |" for r in rows]
    lines = verdict_lines(entries)
    missing = left_out(entries)
    lines += [missing] if missing else []
    return out + ([""] + [f"- {line}" for line in lines] if lines else [])
