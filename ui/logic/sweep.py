"""The numbers behind the Temperature sweep page (no Streamlit here): which checkpoints and
temperatures can be swept, and accuracy and uncertainty per domain at each value."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from uqcore.families import get_family
from uqcore.registry import CheckpointInfo
from uqlab.workbench import dataset

GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 20.0, 40.0, 100.0)
DEFAULT_GRID = (0.3, 1.0, 3.0, 10.0, 40.0)
SWEPT = ("tau2", "tau1")  # in the order the page offers them


def knobs(info: CheckpointInfo) -> tuple[str, ...]:
    """The temperatures of ``info``'s family that a sweep can vary (none: not sweepable)."""
    spec = get_family(info.family)
    return tuple(k for k in SWEPT if spec.reads(k))


def sweepable(infos: list[CheckpointInfo]) -> list[CheckpointInfo]:
    """The checkpoints whose family has a temperature to sweep."""
    return [i for i in infos if knobs(i)]


def trained(info: CheckpointInfo, knob: str) -> float:
    """The checkpoint's trained value of ``knob`` (1.0 when its config does not set it)."""
    return float(info.config.get("inference", {}).get(knob, 1.0))


def records(
    rows: list,
    probs_grid: Callable[[tuple[str, ...], list[float]], list[list]],
    grid: list[float],
    progress: Callable[[float, float], None] | None = None,
) -> pd.DataFrame:
    """Accuracy, mean MI and mean entropy per domain at every value of ``grid``.
    ``probs_grid(texts, values)`` gives, for each value of the swept knob, the samples of
    ``texts`` (``[probs [T, C] or message]``): every value of a chunk of texts in one call, so
    the sampler can draw the noise once for the whole sweep (``ui.cached.grid_sampler``);
    ``progress(fraction, value)`` is told how far the tables are."""
    values = [float(v) for v in sorted(grid)]
    got: dict[tuple[str, ...], list[list]] = {}  # chunk of texts -> its samples per value

    def at(n: int) -> Callable[[tuple[str, ...]], list]:
        def probs(texts: tuple[str, ...]) -> list:
            if texts not in got:
                got[texts] = probs_grid(texts, values)
            return got[texts][n]

        return probs

    out = []
    for n, value in enumerate(values):
        step = (
            None if progress is None else (lambda f, n=n, v=value: progress((n + f) / len(grid), v))
        )
        frame, _ = dataset.frame(rows, at(n), step)
        for domain, part in frame.groupby("domain"):
            out.append(
                {
                    "tau": value,
                    "domain": domain,
                    "accuracy": float((part["pred"] == part["gold"]).mean()),
                    "mi": float(part["mi"].mean()),
                    "entropy": float(part["entropy"].mean()),
                    "n": len(part),
                }
            )
    return pd.DataFrame(out)
