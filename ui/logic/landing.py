"""The first-time visitor's landing: what the app shows, and three sentences that tell its
story on the current checkpoint (one it gets right and is sure of, one it is unsure about, one
from outside its training domain), picked from the bundled examples by the checkpoint itself.
No Streamlit here (``app_pages/explore.py`` draws it)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from uqlab.workbench import dataset

STORY_T = 10  # samples per example when the stories are picked: the stored samples' T
STORY_SEED = 0  # and their seed: a story opens at both, so its caption's counts are the view's
SURE_P = 0.9  # the least mean p(gold) a story may call "sure" (a 0.51 is a coin toss)
STORY_PER_DOMAIN = 300  # examples per domain looked at when stored samples hold them
STORY_LIVE_PER_DOMAIN = 16  # examples per domain sampled here when they do not (an upload)
VISIBLE_SD = 0.005  # the least spread of p(gold) between samples that shows as "± 0.01"


@dataclass(frozen=True)
class Story:
    """One preset of the landing: a button title, what it shows (its counts out of ``T``), the
    sentence and its label; opened at ``T`` samples and ``seed``, the numbers it was picked
    by, so the view shows what the caption says."""

    title: str
    why: str
    text: str
    label: int
    T: int = STORY_T  # the app's name for the sample count
    seed: int = STORY_SEED


def stories(frame: pd.DataFrame) -> list[Story]:
    """Three stories from a :func:`uqlab.workbench.dataset.frame` of the checkpoint on the bundled
    examples: the in-domain sentence it gets right with the highest mean p(gold) (every sample
    right; "Sure of it" only at :data:`SURE_P` or more, else "Its surest" says how unsure
    even that one is), the in-domain sentence with the highest mutual information among those
    whose samples disagree (some right, some wrong; when none does, among those whose p(gold)
    moves by :data:`VISIBLE_SD` or more between samples; when none moves either, as on a
    deterministic model, the least sure one by its mean p, ``one_minus_max``), and the
    out-of-domain sentence with the highest mutual information. Fewer when a kind is missing;
    none for a task without bundled examples (an uploaded checkpoint's own task)."""
    out = []
    if frame.empty or "domain" not in frame:
        return out
    ind, ood = frame[frame["domain"] == dataset.IN], frame[frame["domain"] == dataset.OUT]
    sure = ind[(ind["pred"] == ind["gold"]) & (ind["correct"] == ind["T"])]
    if not sure.empty:
        r = sure.sort_values("p_gold", ascending=False).iloc[0]
        out.append(
            Story(
                "Sure of it",
                f"every sample right, p(gold) {r['p_gold']:.2f}",
                r["text"],
                int(r["gold"]),
            )
            if r["p_gold"] >= SURE_P
            else Story(
                "Its surest",
                f"every sample right, yet p(gold) only {r['p_gold']:.2f}: it is sure of "
                f"no sentence here (sure: {SURE_P:g} or more)",
                r["text"],
                int(r["gold"]),
            )
        )
    if not ind.empty:
        split = ind[(ind["correct"] > 0) & (ind["correct"] < ind["T"])]  # the samples disagree
        moving = ind[ind["var_gold"] >= VISIBLE_SD**2]  # p(gold) moves visibly between samples
        if not split.empty or not moving.empty:
            r = (split if not split.empty else moving).sort_values("mi", ascending=False).iloc[0]
            out.append(Story("Unsure", _unsure(r), r["text"], int(r["gold"])))
        else:  # no spread to show (a deterministic model): its doubt is its mean p alone
            r = ind.sort_values("one_minus_max", ascending=False, kind="stable").iloc[0]
            out.append(
                Story(
                    "Unsure",
                    f"its least sure sentence, p(gold) {r['p_gold']:.2f}; its samples do not "
                    "spread",
                    r["text"],
                    int(r["gold"]),
                )
            )
    if not ood.empty:
        r = ood.sort_values("mi", ascending=False).iloc[0]
        out.append(
            Story(
                "Out of domain",
                f"from outside its training data; {r['correct']} of {r['T']} samples right",
                r["text"],
                int(r["gold"]),
            )
        )
    return out


def _unsure(r) -> str:
    """What the "Unsure" story shows: the samples split between right and wrong, or (when no
    in-domain sentence splits them) how far p(gold) moves between samples."""
    if 0 < r["correct"] < r["T"]:
        return f"{r['correct']} of {r['T']} samples right: the samples disagree"
    return (
        f"its samples move p(gold) most (± {r['var_gold'] ** 0.5:.2f} around "
        f"{r['p_gold']:.2f}); {r['correct']} of {r['T']} right"
    )
