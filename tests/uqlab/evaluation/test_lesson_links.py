"""How uqlab.evaluation.lesson_links picks each Learn step's checkpoint: the rule, and its prior
distance read the way the explorer's ``uniform_prior`` reads it."""

from __future__ import annotations

import numpy as np

from uqlab.evaluation.lesson_links import Candidate, Measured, prior_distance, winner


def _m(ckpt: str, quantity: float, acc: float, **knobs) -> Measured:
    return Measured("gumbel", Candidate(ckpt, knobs), quantity, acc, 40, "a text", 0.0)


def test_the_winner_is_the_most_visible_candidate_that_keeps_its_checkpoints_accuracy():
    own = _m("a", 0.05, 0.80)
    wrecked = _m("a", 0.50, 0.60, tau2=0.01)  # more visible, but 75 % of a's own accuracy
    kept = _m("a", 0.08, 0.75, tau2=0.1)  # 94 %: kept
    other = _m("b", 0.07, 0.95)  # another task: compared with its own accuracy only
    assert winner([own, wrecked, kept, other]) is kept


def test_a_tie_goes_to_the_more_accurate_candidate():
    assert winner([_m("a", 0.3, 0.55), _m("b", 0.3, 0.62)]).candidate.ckpt == "b"


def test_the_prior_distance_is_what_the_explorer_compares_with_its_tolerance():
    from uqlab.workbench.compute import PRIOR_TOLERANCE, uniform_prior

    rng = np.random.default_rng(0)
    for scale in (0.01, 0.1, 0.5, 2.0):
        prior = rng.dirichlet(np.full(12, 1 / scale), size=4)  # [H, n]
        assert uniform_prior(prior) is (prior_distance(prior) < PRIOR_TOLERANCE)
    assert prior_distance(np.full((3, 7), 1 / 7)) == 0.0
