"""The numbers behind the Temperature sweep page (no Streamlit here): which checkpoints and
temperatures can be swept, and accuracy and uncertainty per domain at each value."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from uqcore.families import get_family
from uqcore.registry import CheckpointInfo
from uqcore.stats import mutual_information, predictive_entropy
from uqlab.workbench import dataset

GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 20.0, 40.0, 100.0)
DEFAULT_GRID = (0.3, 1.0, 3.0, 10.0, 40.0)
SWEPT = ("tau2", "tau1")  # in the order the page offers them
COLUMNS = ("tau", "domain", "accuracy", "mi", "entropy", "n")  # of the table, per value and domain


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
    """Accuracy, mean MI and mean entropy per domain at every value of ``grid`` (sorted), one
    row per value and domain; texts that cannot be sampled are left out of ``n``.
    ``probs_grid(texts, values)`` gives, for each value of the swept knob, the samples of
    ``texts`` (``[probs [T, C] or message]``): every value of a chunk of texts
    (:func:`uqlab.workbench.dataset.chunks`) in one call, so the sampler can draw the noise once
    for the whole sweep (``ui.cached.grid_sampler``); ``progress(fraction, value)`` is told how
    far the tables are after each chunk. The statistics are those of the dataset pages' frames
    (:func:`uqlab.workbench.dataset.frame`), computed on arrays: a sweep needs three of their
    columns, at every value."""
    values = [float(v) for v in sorted(grid)]
    kept: list[list[int]] = []  # per chunk: the indices of its readable rows
    stats: list[list[np.ndarray]] = [[] for _ in values]  # per value, per chunk: [3, N]
    for lo, part in dataset.chunks(rows):
        got = probs_grid(tuple(rows[i][0] for i in part), values)
        keep = [j for j, p in enumerate(got[0]) if not isinstance(p, str)]  # str: why not
        kept.append([part[j] for j in keep])
        for n, sampled in enumerate(got):
            stats[n].append(_stats([rows[part[j]][1] for j in keep], [sampled[j] for j in keep]))
        if progress is not None:
            progress(min(1.0, (lo + dataset.CHUNK) / max(1, len(rows))), values[-1])
    order = np.array([i for part in kept for i in part], dtype=np.int64)  # row of each column
    back = np.argsort(order, kind="stable")  # columns back in the order of ``rows``
    domain = np.array([rows[i][2] for i in order[back]], dtype=object)
    out = []
    for value, per_chunk in zip(values, stats, strict=True):
        correct, mi, entropy = np.concatenate(per_chunk, axis=1)[:, back]  # [N] each
        for name in sorted(set(domain)):
            where = domain == name
            out.append(
                {
                    "tau": value,
                    "domain": name,
                    "accuracy": float(correct[where].mean()),
                    "mi": float(mi[where].mean()),
                    "entropy": float(entropy[where].mean()),
                    "n": int(where.sum()),
                }
            )
    return pd.DataFrame(out, columns=COLUMNS)


def _stats(gold: list[int], sampled: list) -> np.ndarray:
    """``[3, N]``: whether the mean prediction is the gold label, the mutual information and
    the predictive entropy of each readable text's samples (``Sampled``, the same T)."""
    if not sampled:
        return np.zeros((3, 0))
    probs = np.stack([s.probs for s in sampled], axis=1)  # [T, N, C]
    correct = probs.mean(0).argmax(1) == np.asarray(gold)  # [N]
    return np.stack([correct, mutual_information(probs), predictive_entropy(probs)])
