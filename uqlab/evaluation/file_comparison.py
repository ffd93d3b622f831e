"""Which uncertainty is worth having, on a visitor's labelled file (issue 47, item 3).

The same ``comparison`` block as a shipped checkpoint's metrics.json
(:func:`uqlab.evaluation.comparison.scored_comparison`), computed on the rows of a file the
visitor brought, so the Results page can show it with the same table and sentences
(:mod:`uqlab.evaluation.comparison_report`). What differs, and the block says so:

- **the uncertainty is still chosen on held-out texts, never on the rows it is scored on**: the
  score the checkpoint's own evaluation chose on its dev split when its metrics.json records one
  (``chosen_on`` "its dev split"); otherwise half of the file's rows, drawn with the seed, choose
  it and the other half is scored (``chosen_on`` "half of your file", ``n`` the scored half);
- **lengths are counted in words** (``length_unit``): the out-of-domain file, when given, is
  matched to the labelled one at equal word counts; a checkpoint's own evaluation counts tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from uqcore.inference.detection import matching_edges
from uqcore.stats import OOD_SCORES
from uqlab.evaluation.comparison import Scored, choose_score, scored_comparison

OWN_DEV, HALF = "its dev split", "half of your file"  # the values of ``chosen_on``


@dataclass(frozen=True)
class OnFile:
    """One checkpoint's numbers on the visitor's rows: ``id`` on the labelled file (in its row
    order, the same for every checkpoint), ``ood`` on the out-of-domain file or None, and the
    score its own evaluation chose on dev (``recorded``: None when it has none)."""

    id: Scored
    ood: Scored | None = None
    recorded: str | None = None


def recorded_score(metrics: object) -> str | None:
    """The uncertainty a checkpoint's metrics.json says was chosen on its dev split, or None
    (none recorded, or a value that is not one of :data:`OOD_SCORES`: an upload's file is
    untrusted)."""
    block = metrics.get("comparison") if isinstance(metrics, dict) else None
    if not isinstance(block, dict) or block.get("chosen_on") != "dev":
        return None
    score = block.get("score")
    return score if isinstance(score, str) and score in OOD_SCORES else None


def halves(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``0..n-1`` split at random by ``seed`` into (the half that chooses, the half that is
    scored), each sorted; the scored half has the extra row when ``n`` is odd."""
    order = np.random.default_rng(seed).permutation(n)
    return np.sort(order[: n // 2]), np.sort(order[n // 2 :])


def file_blocks(
    models: dict[str, OnFile],
    labels: Any,
    baselines: dict[str, str | None],
    lengths: dict[str, list[int]] | None = None,
    *,
    seed: int = 0,
) -> dict[str, dict]:
    """A ``comparison`` block per checkpoint of ``models`` whose numbers are given; ``labels``:
    the gold label of each labelled row; ``baselines[name]``: the plain checkpoint it is
    compared with (its numbers must be in ``models``) or None; ``lengths``: words per text,
    ``"id"`` and ``"ood"``, needed when an out-of-domain side is given. Every block scores the
    same rows: the whole file, or (when one checkpoint has no recorded choice) the same drawn
    half for all, so paired verdicts stay paired."""
    y = np.asarray(labels)
    any_unrecorded = any(m.recorded is None for m in models.values())
    choose, scored = halves(len(y), seed) if any_unrecorded else (None, np.arange(len(y)))
    out = {}
    for name, m in models.items():
        if m.recorded is not None:
            score, chosen_on = m.recorded, OWN_DEV
        else:
            score, chosen_on = choose_score(m.id.rows(choose), y[choose])[0], HALF
        base = baselines.get(name)
        theirs = models.get(base) if base else None
        ood = None
        if m.ood is not None and lengths is not None:
            side = {"id": np.asarray(lengths["id"])[scored], "ood": np.asarray(lengths["ood"])}
            edges = matching_edges(int(max(side["id"].max(), side["ood"].max(), 1)) + 1)
            ood = (m.ood, None if theirs is None else theirs.ood, side, edges)
        block = scored_comparison(
            m.id.rows(scored),
            y[scored],
            None if theirs is None else (base, theirs.id.rows(scored)),
            score,
            ood=ood,
            seed=seed,
        )
        block = {"chosen_on": chosen_on, "length_unit": "words"} | block
        out[name] = block
    return out
