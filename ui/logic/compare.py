"""The numbers behind the Compare page: one sentence's results from several checkpoints set side
by side (no Streamlit here: plain functions of explore results)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ui.logic.format import mean_pm_var, sig
from uqcore.families import title as family_title
from uqlab.workbench.compute import ExploreResult


@dataclass(frozen=True)
class Comparison:
    """``table``: one row per checkpoint (method, Table 3 pair, correct / T, entropy, MI, the
    spread of p and of the last layer's attention over the samples);
    ``samples``: every sample's probability of the ``target`` class, one column per checkpoint;
    ``target``: the gold label, or the class the first checkpoint's mean prediction picks."""

    table: pd.DataFrame
    samples: pd.DataFrame
    target: int

    def per_sample(self) -> dict[str, np.ndarray]:
        """checkpoint name -> p(target) of its T samples ``[T]``."""
        return {c: self.samples[c].to_numpy() for c in self.samples.columns if c != "sample"}


def compare(
    results: dict[str, ExploreResult],
    families: dict[str, str],
    names: tuple[str, ...],
    label: int | None,
) -> Comparison:
    """Side-by-side statistics of ``results`` (checkpoint name -> its explore result, each with
    its summary for ``label``); ``families``: checkpoint name -> family. Every row has the same
    columns: with a gold label, p(gold) and correct / T; without one, the class each checkpoint
    predicts, p(that class) and the samples agreeing with it (two checkpoints may predict
    different classes, so one column per class would leave holes)."""
    first = next(iter(results.values()))
    target = label if label is not None else int(first.probs.mean(0).argmax())
    gold = label is not None
    rows = []
    for name, res in results.items():
        s = res.summary
        scored = (
            {
                f"p({names[s.target]}) mean ± var": mean_pm_var(s.p_mean, s.p_var),
                "correct / T": f"{s.correct}/{s.T}",
            }
            if gold
            else {
                "predicts": names[s.target],
                "p(predicted) mean ± var": mean_pm_var(s.p_mean, s.p_var),
                "samples agreeing": f"{s.correct}/{s.T}",
            }
        )
        rows.append(
            {
                "checkpoint": name,
                "method": family_title(families[name]),
                **scored,
                "entropy": round(s.entropy, 4),
                "mutual information": sig(s.mi),
                "spread of p": sig(float(np.sqrt(s.p_var))),
                "spread of attention": sig(attention_spread(res)),
            }
        )
    samples = pd.DataFrame({n: r.probs[:, target] for n, r in results.items()})
    samples.insert(0, "sample", range(len(samples)))
    return Comparison(pd.DataFrame(rows), samples, target)


def attention_spread(res: ExploreResult) -> float:
    """How much the attention moves between samples: the standard deviation across the kept
    samples of each attention weight of the last captured layer, averaged over heads, attending
    tokens and read tokens (0 for one sample or identical samples; an attention family moves it
    with its noise, a weight family with its weight draws)."""
    if not res.maps:
        return 0.0
    att = np.asarray(res.maps[max(res.maps)].attention, np.float64)  # [Tc, H, L, L]
    return float(att.std(axis=0).mean()) if att.shape[0] > 1 else 0.0


def mean_attention(
    results: dict[str, ExploreResult], layer: int, head: int, width: int
) -> list[tuple[list[str], dict[str, np.ndarray]]]:
    """The mean over each checkpoint's kept samples of one head's attention, cut to the first
    ``width`` tokens ``[W, W]``, grouped by tokenization: ``[(tokens, {name: map})]``, one group
    per distinct token list (a word-level and a WordPiece model read the same text as different
    tokens, so their maps never share axes), in the order of ``results``."""
    groups: dict[tuple[str, ...], dict[str, np.ndarray]] = {}
    for n, r in results.items():
        tokens = tuple(r.tokens[:width])
        att = np.asarray(r.maps[layer].attention[:, head, :width, :width], np.float32)  # [Tc, W, W]
        groups.setdefault(tokens, {})[n] = att.mean(0)
    return [(list(tokens), panels) for tokens, panels in groups.items()]
