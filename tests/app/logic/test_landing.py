"""The landing's stories (ui.logic.landing)."""

from __future__ import annotations


def test_the_unsure_story_is_a_sentence_whose_samples_disagree():
    """The landing's "Unsure" story: among in-domain rows whose samples split between right and
    wrong, the highest mutual information; never "the samples disagree" when they all agree."""
    import pandas as pd

    from ui.logic import dataset, landing

    rows = pd.DataFrame(
        {
            "domain": [dataset.IN] * 3 + [dataset.OUT],
            "text": ["a", "b", "c", "d"],
            "gold": [1, 1, 0, 0],
            "pred": [1, 0, 0, 1],
            "p_gold": [0.9, 0.2, 0.6, 0.4],
            "var_gold": [0.0, 0.01, 0.04, 0.02],
            "correct": [10, 0, 6, 3],
            "T": [10] * 4,
            "mi": [0.0, 0.3, 0.1, 0.2],
        }
    )
    sure, unsure, ood = landing.stories(rows)
    assert (sure.text, unsure.text, ood.text) == ("a", "c", "d")  # not "b": all its samples agree
    assert unsure.why == "6 of 10 samples right: the samples disagree"
    agreeing = landing.stories(rows[rows["text"] != "c"])[1]
    assert agreeing.text == "b" and "disagree" not in agreeing.why and "± 0.10" in agreeing.why
