"""The landing's stories (ui.logic.landing)."""

from __future__ import annotations


def _frame(**columns: list[float]):
    """Three in-domain rows ("a"-"c") and one out-of-domain ("d"), gold 1 1 0 0, predicted
    1 0 0 1, T 10, with ``columns`` (p_gold, var_gold, correct, mi) as given and one_minus_max
    from p_gold and the prediction, as :func:`uqlab.workbench.dataset.frame` writes them."""
    import pandas as pd

    from uqlab.workbench import dataset

    rows = pd.DataFrame(
        {
            "domain": [dataset.IN] * 3 + [dataset.OUT],
            "text": ["a", "b", "c", "d"],
            "gold": [1, 1, 0, 0],
            "pred": [1, 0, 0, 1],
            "T": [10] * 4,
            **columns,
        }
    )
    p_max = rows["p_gold"].where(rows["pred"] == rows["gold"], 1 - rows["p_gold"])
    return rows.assign(one_minus_max=1 - p_max)


def test_the_unsure_story_is_a_sentence_whose_samples_disagree():
    """The landing's "Unsure" story: among in-domain rows whose samples split between right and
    wrong, the highest mutual information; never "the samples disagree" when they all agree."""
    from ui.logic import landing

    rows = _frame(
        p_gold=[0.9, 0.2, 0.6, 0.4],
        var_gold=[0.0, 0.01, 0.04, 0.02],
        correct=[10, 0, 6, 3],
        mi=[0.0, 0.3, 0.1, 0.2],
    )
    sure, unsure, ood = landing.stories(rows)
    assert (sure.text, unsure.text, ood.text) == ("a", "c", "d")  # not "b": all its samples agree
    assert unsure.why == "6 of 10 samples right: the samples disagree"
    agreeing = landing.stories(rows[rows["text"] != "c"])[1]
    assert agreeing.text == "b" and "disagree" not in agreeing.why and "± 0.10" in agreeing.why


def test_on_a_model_without_spread_the_unsure_story_is_its_least_sure_sentence():
    """A deterministic checkpoint's samples are one: its "Unsure" story read "its samples move
    p(gold) most (± 0.00 ...)" about an arbitrary sentence. With no visible spread anywhere it is
    the in-domain sentence whose mean prediction is least sure, and it says so."""
    from ui.logic import landing

    rows = _frame(
        p_gold=[0.97, 0.35, 0.58, 0.4],
        var_gold=[0.0, 1e-6, 0.0, 0.0],  # an sd of 0.001 prints as "± 0.00"
        correct=[10, 0, 10, 0],
        mi=[0.0, 1e-7, 0.0, 0.0],
    )
    unsure = landing.stories(rows)[1]
    assert unsure.title == "Unsure" and unsure.text == "c"  # max p 0.58: the least sure
    assert "± 0.00" not in unsure.why and "least sure" in unsure.why and "0.58" in unsure.why


def test_a_story_is_called_sure_only_when_p_gold_means_it():
    """Issue 45: an upload whose best sentence had p(gold) 0.51 was labelled "Sure of it". A
    story is "sure" from SURE_P (0.9) on; below, it is "Its surest" and says how unsure. Every
    story opens at the T and seed it was counted at."""
    import pandas as pd

    from ui.logic import landing
    from uqlab.workbench import dataset

    def frame(p: float) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "domain": [dataset.IN, dataset.IN],
                "text": ["a", "b"],
                "gold": [1, 0],
                "pred": [1, 1],
                "p_gold": [p, 0.3],
                "var_gold": [0.0, 0.01],
                "correct": [10, 4],
                "T": [10, 10],
                "mi": [0.0, 0.2],
            }
        )

    sure = landing.stories(frame(0.95))[0]
    assert (sure.title, sure.why) == ("Sure of it", "every sample right, p(gold) 0.95")
    coin = landing.stories(frame(0.51))[0]
    assert coin.title == "Its surest" and "only 0.51" in coin.why and "0.9 or more" in coin.why
    assert landing.SURE_P == 0.9
    assert {(s.T, s.seed) for s in landing.stories(frame(0.51))} == {
        (landing.STORY_T, landing.STORY_SEED)
    }
