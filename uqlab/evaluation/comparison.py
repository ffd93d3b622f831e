"""Does a family's uncertainty beat the deterministic model's 1 - max p? Both on the same texts.

A checkpoint's ``comparison`` block of metrics.json (written by ``uqlab.evaluate``, or alone by
``uqlab.evaluate --comparison-only``) answers it for the question issue 47 asked, "which
uncertainty is worth having on your model":

- ``baseline``: the deterministic checkpoint of the same task, backbone and pretrained base
  (:func:`find_baseline`: the plain transformer, :data:`uqcore.families.PLAIN`;
  ``cr-minilm-trans`` for every ``cr-minilm-*``), sampled once on the same texts
  (``baseline_samples``); None for that checkpoint itself, or when none is shipped.
- ``score``: the family's best uncertainty, chosen on dev (``chosen_on``): the score of
  :data:`uqcore.stats.OOD_SCORES` whose AUROC for the checkpoint's own dev errors is highest
  (``dev_error_auroc``; ties to the first in that order). Never chosen on test or OOD texts.
- ``intervals``: accuracy, NLL, Brier and ECE of the mean prediction on the in-domain test with
  percentile bootstrap intervals (:func:`uqcore.stats.bootstrap_interval`), and the chosen
  score's AUROC for the test errors (``error_auroc``, rows resampled within each class).
- ``errors``: the chosen score's AUROC for this model's test errors minus the baseline's
  1 - max p's AUROC for the baseline's errors, on the same texts, with a paired bootstrap
  interval and a verdict, better / tie / worse
  (:func:`uqcore.inference.detection.paired_models_difference`).
- ``ood_matched``: the same for out-of-domain detection with length held fixed: both domains
  drawn to one histogram of tokens read (:func:`uqcore.inference.detection.length_matched`, the
  task's ``ood_matched`` texts when it names them), ``n_per_side`` a side, both models scored
  on the same drawn rows; a ``note`` where the lengths do not overlap.

``resamples`` (1,000), ``level`` (0.95) and ``seed`` are recorded with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from uqcore.families import FAMILIES, PLAIN
from uqcore.inference.detection import (
    MIN_PER_SIDE,
    VERDICT_LEVEL,
    VERDICT_RESAMPLES,
    auroc_interval,
    length_matched,
    matching_edges,
    paired_models_difference,
)
from uqcore.registry import CheckpointInfo
from uqcore.stats import OOD_SCORES, accuracy, bootstrap_interval, brier, ece, nll, ood_scores
from uqlab.evaluation.detection_report import versus

METRICS = {"accuracy": accuracy, "nll": nll, "brier": brier, "ece": ece}  # of the mean prediction


def _key(info: CheckpointInfo) -> tuple:
    """What must agree for two checkpoints to be compared: task, backbone, pretrained base."""
    base = info.base or {}
    return info.task, info.config.get("backbone", "word"), base.get("distribution")


def deterministic(family: object) -> bool:
    """Whether ``family`` is the plain deterministic transformer (:data:`uqcore.families.PLAIN`),
    the baseline every other family is compared with: one forward pass, softmax attention.
    False for anything that names no family (a metrics.json may be an upload's)."""
    return isinstance(family, str) and FAMILIES.get(family) is PLAIN


def find_baseline(name: str, infos: list[CheckpointInfo]) -> str | None:
    """The deterministic checkpoint among ``infos`` that ``name`` is compared with: same task,
    backbone and pretrained base (the first by name when several); None when ``name`` is
    deterministic itself or none is listed."""
    mine = next((i for i in infos if i.name == name and not i.error), None)
    if mine is None or deterministic(mine.family):
        return None
    found = [
        i.name
        for i in infos
        if not i.error and i.name != name and deterministic(i.family) and _key(i) == _key(mine)
    ]
    return min(found) if found else None


@dataclass(frozen=True)
class Scored:
    """One model's numbers on a list of texts: the mean prediction ``mean [N, C]`` and every
    score of :data:`OOD_SCORES` (``scores[name]`` ``[N]``, higher = less sure). Built from
    samples ``[T, N, C]`` (:meth:`of`) or from per-text values already computed (the app's
    frames of a visitor's file)."""

    mean: np.ndarray  # [N, C]
    scores: dict[str, np.ndarray]  # score name -> [N]

    @classmethod
    def of(cls, probs: Any) -> Scored:
        p = np.asarray(probs, dtype=np.float64)  # [T, N, C]
        return cls(p.mean(axis=0), {s: ood_scores(p, s) for s in OOD_SCORES})

    def wrong(self, labels: Any) -> np.ndarray:
        """``[N]`` bool: the mean prediction's class is not the gold label."""
        return self.mean.argmax(axis=-1) != np.asarray(labels)

    def rows(self, index: Any) -> Scored:
        """The same numbers for the texts at ``index`` only (in that order)."""
        return Scored(self.mean[index], {k: v[index] for k, v in self.scores.items()})


def choose_score(dev: Any, dev_labels: Any) -> tuple[str, dict[str, float | None]]:
    """The score of :data:`OOD_SCORES` with the highest AUROC for the dev errors (ties: the
    first), and every score's dev AUROC (None when dev has no error or no right answer:
    then 1 - max p, the plain baseline, is kept). ``dev``: samples ``[T, N, C]`` or a
    :class:`Scored`."""
    from sklearn.metrics import roc_auc_score

    dev = dev if isinstance(dev, Scored) else Scored.of(dev)
    wrong = dev.wrong(dev_labels)
    one_class = wrong.all() or not wrong.any()
    got = {s: None if one_class else float(roc_auc_score(wrong, dev.scores[s])) for s in OOD_SCORES}
    ranked = [s for s in OOD_SCORES if got[s] is not None]
    best = max(ranked, key=lambda s: (got[s], -OOD_SCORES.index(s))) if ranked else "max_prob"
    return best, got


def _interval(value: float, low: float, high: float) -> dict:
    return {"value": value, "interval": [low, high]}


def comparison(
    probs: dict[str, Any],
    labels: dict[str, Any],
    lengths: dict[str, list[int]],
    read_len: int,
    base: tuple[str, dict[str, Any]] | None,
    *,
    seed: int = 0,
    matched_set: str | None = None,
) -> dict:
    """The ``comparison`` block (module docstring) from this checkpoint's samples ``probs``
    (``"id"``, ``"dev"`` and, with an out-of-domain side, ``"ood"``: each ``[T, N, C]``; the
    out-of-domain side is the one the length-matched figure draws from), the gold ``labels`` of
    ``"id"`` and ``"dev"``, the tokens each text is read at (``lengths``, ``"id"`` and
    ``"ood"``), and ``base``: (its name, its samples of ``"id"`` and ``"ood"`` on the same
    texts in the same order), or None."""
    score, dev_auroc = choose_score(probs["dev"], labels["dev"])
    mine = {k: Scored.of(v) for k, v in probs.items() if k in ("id", "ood")}
    theirs = None if base is None else {k: Scored.of(v) for k, v in base[1].items()}
    ood = None
    if "ood" in mine:
        edges = matching_edges(read_len)
        ood = (mine["ood"], None if theirs is None else theirs["ood"], lengths, edges)
    out = scored_comparison(
        mine["id"],
        labels["id"],
        None if base is None else (base[0], theirs["id"]),
        score,
        ood=ood,
        seed=seed,
    )
    out = {
        "baseline": out.pop("baseline"),
        "baseline_samples": None if base is None else int(np.shape(base[1]["id"])[0]),
        "score": out.pop("score"),
        "chosen_on": "dev",
        "dev_error_auroc": dev_auroc,
    } | out  # the order metrics.json has always had
    if matched_set and "ood_matched" in out:
        out["ood_matched"]["set"] = matched_set
    return out


OodSide = tuple[Scored, "Scored | None", dict[str, Any], list[int]]  # mine, base's, lengths, edges


def scored_comparison(
    mine: Scored,
    labels: Any,
    base: tuple[str, Scored] | None,
    score: str,
    *,
    ood: OodSide | None = None,
    seed: int = 0,
) -> dict:
    """The block's figures on in-domain texts ``mine`` (gold ``labels``) for the uncertainty
    ``score`` (chosen beforehand, never on these texts): intervals of the mean prediction's
    metrics and of ``score``'s AUROC for this model's errors, and with ``base`` (its name and
    :class:`Scored` on the same texts in the same order) the paired verdict against its
    1 - max p. ``ood``: this model's and the baseline's numbers on the out-of-domain texts,
    ``lengths`` (``"id"``, ``"ood"``: one per text) and the bin ``edges`` to match them on."""
    y = np.asarray(labels)
    out: dict[str, Any] = {
        "baseline": None if base is None else base[0],
        "score": score,
        "level": VERDICT_LEVEL,
        "resamples": VERDICT_RESAMPLES,
        "seed": seed,
        "n": int(len(y)),
        "intervals": {},
    }
    for key, metric in METRICS.items():
        got = bootstrap_interval(metric, mine.mean, y, resamples=VERDICT_RESAMPLES, seed=seed)
        out["intervals"][key] = _interval(got.value, got.low, got.high)
    wrong = mine.wrong(y)
    found = auroc_interval(wrong, mine.scores[score], seed=seed)
    out["intervals"]["error_auroc"] = None if found is None else _interval(*found)
    if base is not None:
        theirs = base[1]
        d = paired_models_difference(
            wrong, mine.scores[score], theirs.wrong(y), theirs.scores["max_prob"], seed=seed
        )
        out["errors"] = None if d is None else d.as_dict()
    if ood is not None:
        out["ood_matched"] = _ood_matched(mine, None if base is None else base[1], ood, score, seed)
    return out


def _ood_matched(
    mine_id: Scored, base_id: Scored | None, ood: OodSide, score: str, seed: int
) -> dict:
    """Both domains drawn to one length histogram, this model's chosen score and (with a
    baseline) the baseline's 1 - max p scored on the same drawn rows."""
    mine_ood, base_ood, lengths, edges = ood
    m = length_matched(lengths["id"], lengths["ood"], edges, seed)
    out: dict[str, Any] = {"n_per_side": m.n}
    if m.n < MIN_PER_SIDE:
        out["note"] = (
            f"the lengths of the two domains hardly overlap: {m.n} texts a side at equal "
            f"length (fewer than {MIN_PER_SIDE}), so no length-matched figure"
        )
        return out
    positive = np.r_[np.zeros(m.n, bool), np.ones(m.n, bool)]  # [2n], out of domain

    def drawn(id_side: Scored, ood_side: Scored, name: str) -> np.ndarray:
        return np.r_[id_side.scores[name][m.id_rows], ood_side.scores[name][m.ood_rows]]

    mine = drawn(mine_id, mine_ood, score)  # [2n]
    found = auroc_interval(positive, mine, seed=seed)
    out["auroc"] = None if found is None else _interval(*found)
    if base_id is not None and base_ood is not None:
        theirs = drawn(base_id, base_ood, "max_prob")
        d = paired_models_difference(positive, mine, positive, theirs, seed=seed)
        out["versus_baseline"] = None if d is None else d.as_dict()
    return out


SHORT = {"max_prob": "1−p", "entropy": "entropy", "mutual_information": "MI", "variance": "var"}


def _verdict(d: object) -> str | None:
    """``"+0.041 [+0.012, +0.070] better"`` from a paired difference's dict, or None."""
    said = versus(d)
    return None if said == "—" else said


def comparison_line(block: object) -> str | None:
    """One line of a ``comparison`` block: the chosen score against the baseline's 1 - max p,
    for the errors and for out-of-domain texts at matched length; None without a baseline."""
    if not isinstance(block, dict) or not isinstance(block.get("baseline"), str):
        return None  # (the lab's own file: printed to a terminal, never rendered)
    score = SHORT.get(block.get("score"), "?")
    parts = [f"{score} (chosen on dev) against {block['baseline']}'s 1−p"]
    errors = _verdict(block.get("errors"))
    if errors:
        parts.append(f"errors {errors}")
    ood = block.get("ood_matched")
    said = _verdict(ood.get("versus_baseline")) if isinstance(ood, dict) else None
    if said:
        parts.append(f"OOD at matched length ({ood.get('n_per_side')} a side) {said}")
    return "; ".join(parts)
