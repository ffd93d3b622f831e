"""Two checkpoints on the same labelled rows, with a verdict (issue 49, item 4).

:func:`two_models` answers "is B better than A on this file, and on what?": for accuracy, ECE,
NLL and Brier of the mean prediction, the difference B - A with a paired percentile bootstrap
interval (:func:`uqcore.stats.paired_bootstrap`: every resample scores both models on the same
rows), and for the AUROC with which one uncertainty ``score`` finds each model's own errors,
the same difference with rows resampled within the four cells of (A wrong, B wrong)
(:func:`uqcore.inference.detection.paired_models_difference`). A metric's ``better`` names the
model the interval favours ("a" or "b"), or is None when the interval holds 0: no difference
at that level. :func:`sentence` says it in one line.

The block (plain JSON) records ``n``, ``score``, ``level``, ``resamples`` and ``seed``; the
Results page shows it, and a report or a notebook can keep it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from uqcore.inference.detection import VERDICT_LEVEL, VERDICT_RESAMPLES, paired_models_difference
from uqcore.stats import OOD_SCORES, accuracy, brier, ece, nll, paired_bootstrap
from uqlab.evaluation.comparison import SHORT, Scored

# metric -> (function of the mean prediction and labels, whether higher is better)
PAIRED: dict[str, tuple[Callable[[Any, Any], float], bool]] = {
    "accuracy": (accuracy, True),
    "ECE": (ece, False),
    "NLL": (nll, False),
    "Brier": (brier, False),
}
ERRORS = "AUROC for errors"  # the metric key of the uncertainty's error detection


def _favours(low: float, high: float, higher_is_better: bool) -> str | None:
    """ "b" when the interval of B - A lies on B's good side of 0, "a" on A's, else None."""
    if low > 0:
        return "b" if higher_is_better else "a"
    if high < 0:
        return "a" if higher_is_better else "b"
    return None


def _entry(a: float, b: float, low: float, high: float, higher: bool) -> dict:
    return {
        "a": a,
        "b": b,
        "difference": b - a,
        "interval": [low, high],
        "better": _favours(low, high, higher),
    }


def two_models(
    a: Scored,
    b: Scored,
    labels: Any,
    names: tuple[str, str],
    *,
    score: str = "max_prob",
    seed: int = 0,
    resamples: int = VERDICT_RESAMPLES,
) -> dict:
    """The paired verdict of checkpoint ``names[1]`` (``b``) against ``names[0]`` (``a``), both
    scored on the same rows in the same order, with gold ``labels``; ``score`` (one of
    :data:`uqcore.stats.OOD_SCORES`) is the uncertainty whose AUROC for each model's own
    errors is compared (None there when a model has no error or no right answer)."""
    if score not in OOD_SCORES:
        raise ValueError(f"score must be one of {', '.join(OOD_SCORES)}, got {score!r}.")
    y = np.asarray(labels)
    if a.mean.shape != b.mean.shape or len(y) != len(a.mean):
        raise ValueError("both models must be scored on the same rows as the labels.")
    metrics: dict[str, dict | None] = {}
    for key, (metric, higher) in PAIRED.items():
        got = paired_bootstrap(
            metric, a.mean, b.mean, y, level=VERDICT_LEVEL, resamples=resamples, seed=seed
        )
        metrics[key] = _entry(got.a, got.b, got.low, got.high, higher)
    d = paired_models_difference(
        b.wrong(y), b.scores[score], a.wrong(y), a.scores[score], resamples=resamples, seed=seed
    )  # B's AUROC minus A's
    metrics[ERRORS] = None if d is None else _entry(d.baseline, d.score, d.low, d.high, True)
    return {
        "a": names[0],
        "b": names[1],
        "n": int(len(y)),
        "score": score,
        "level": VERDICT_LEVEL,
        "resamples": resamples,
        "seed": seed,
        "metrics": metrics,
    }


def _label(block: dict, key: str) -> str:
    return f"{key} ({SHORT.get(block['score'], block['score'])})" if key == ERRORS else key


def _said(entry: dict) -> str:
    low, high = entry["interval"]
    return f"{entry['difference']:+.3f} [{low:+.3f}, {high:+.3f}]".replace("-", "−")


def rows(block: dict) -> list[dict]:
    """One row per metric: A's value, B's, B − A with its interval, and which is better."""
    out = []
    for key, entry in block["metrics"].items():
        label = _label(block, key)
        if entry is None:
            out.append({"metric": label, "A": None, "B": None, "B − A [95 %]": "—", "better": "—"})
            continue
        better = entry["better"]
        out.append(
            {
                "metric": label,
                "A": entry["a"],
                "B": entry["b"],
                "B − A [95 %]": _said(entry),
                "better": "no difference" if better is None else block[better],
            }
        )
    return out


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def sentence(block: dict) -> str:
    """``"B is better on ECE: −0.021 [−0.030, −0.012]; no difference in accuracy, NLL, Brier
    and AUROC for errors (1−p)."``, with the checkpoints' names, at the block's level."""
    parts = []
    for side in ("b", "a"):
        won = [
            f"{_label(block, k)}: {_said(e)}"
            for k, e in block["metrics"].items()
            if e is not None and e["better"] == side
        ]
        if won:
            parts.append(f"{block[side]} is better on {_join(won)}")
    same = [_label(block, k) for k, e in block["metrics"].items() if e and e["better"] is None]
    if same:
        parts.append(f"no difference in {_join(same)}")
    missing = [_label(block, k) for k, e in block["metrics"].items() if e is None]
    if missing:
        parts.append(f"no {_join(missing)} (a model with no error or no right answer)")
    level = round(100 * block["level"])
    return (
        "; ".join(parts)
        + f" (B − A = {block['b']} − {block['a']}, {level} % paired bootstrap intervals"
        + f" over {block['n']:,} rows)."
    )
