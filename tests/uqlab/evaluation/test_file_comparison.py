"""The comparison on a visitor's labelled file: the same block as a shipped checkpoint's, its
uncertainty never chosen on the rows it scores, every model paired on the same rows."""

from __future__ import annotations

import numpy as np
import pytest

from uqcore.inference.detection import length_matched, matching_edges, paired_models_difference
from uqcore.stats import OOD_SCORES
from uqlab.evaluation.comparison import Scored, choose_score, comparison, scored_comparison
from uqlab.evaluation.file_comparison import (
    HALF,
    OWN_DEV,
    OnFile,
    file_blocks,
    halves,
    recorded_score,
)


def _probs(margin: np.ndarray, spread: np.ndarray, T: int = 5, seed: int = 0) -> np.ndarray:
    """``[T, N, 2]`` around p1 = sigmoid(margin), each row's samples spread by ``spread``."""
    noise = np.random.default_rng(seed).normal(size=(T, len(margin))) * spread[None]
    p1 = 1 / (1 + np.exp(-(margin[None] + noise)))
    return np.stack([1 - p1, p1], axis=-1)


def _file(n: int = 200, seed: int = 3):
    """Gold labels, a sampling model whose samples disagree exactly where it errs (MI finds
    its errors) and a plain model right on the same rows with a flat, uninformative margin."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    wrong = rng.random(n) < 0.25
    sign = np.where(y == 1, 1.0, -1.0)
    sampling = _probs(sign * np.where(wrong, -0.8, 1.5), np.where(wrong, 3.0, 0.1), seed=seed)
    plain = _probs(sign * np.where(wrong, -1.0, 1.0) * rng.uniform(0.5, 1.5, n), np.zeros(n))
    return y, sampling, plain


@pytest.mark.parametrize(
    "metrics, want",
    [
        ({"comparison": {"chosen_on": "dev", "score": "entropy"}}, "entropy"),
        ({"comparison": {"chosen_on": "test", "score": "entropy"}}, None),  # not held out
        ({"comparison": {"chosen_on": "dev", "score": "[x](http://a)"}}, None),
        ({"comparison": {"chosen_on": "dev", "score": ["entropy"]}}, None),
        ({"comparison": "entropy"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_a_recorded_choice_is_read_only_when_it_was_made_on_dev_and_names_a_score(metrics, want):
    assert recorded_score(metrics) == want


def test_the_halves_split_the_rows_by_the_seed():
    a, b = halves(11, seed=4)
    assert sorted([*a, *b]) == list(range(11)) and len(a) == 5 and len(b) == 6
    assert all(np.array_equal(x, y) for x, y in zip(halves(11, 4), (a, b), strict=True))
    assert not np.array_equal(halves(11, 5)[0], a)


def test_with_recorded_choices_every_row_is_scored_as_a_shipped_block_would_be():
    y, sampling, plain = _file()
    models = {
        "x-trans": OnFile(Scored.of(plain), recorded="max_prob"),
        "x-hsto": OnFile(Scored.of(sampling), recorded="mutual_information"),
    }
    got = file_blocks(models, y, {"x-trans": None, "x-hsto": "x-trans"}, seed=2)
    direct = scored_comparison(
        Scored.of(sampling), y, ("x-trans", Scored.of(plain)), "mutual_information", seed=2
    )
    assert got["x-hsto"] == {"chosen_on": OWN_DEV, "length_unit": "words"} | direct
    assert got["x-hsto"]["n"] == len(y) and got["x-trans"]["baseline"] is None
    assert got["x-hsto"]["errors"]["verdict"] == "better"  # MI finds its errors, 1 - p cannot
    mine = Scored.of(sampling)
    want = paired_models_difference(
        mine.wrong(y),
        mine.scores["mutual_information"],
        Scored.of(plain).wrong(y),
        Scored.of(plain).scores["max_prob"],
        seed=2,
    )
    assert got["x-hsto"]["errors"] == want.as_dict()


def test_without_a_recorded_choice_half_the_file_chooses_and_the_other_half_is_scored():
    y, sampling, plain = _file(n=201)
    models = {"x-trans": OnFile(Scored.of(plain), recorded="max_prob")}
    models["x-hsto"] = OnFile(Scored.of(sampling))  # an upload: no metrics.json
    got = file_blocks(models, y, {"x-hsto": "x-trans", "x-trans": None}, seed=7)
    choose, scored = halves(len(y), 7)
    assert got["x-hsto"]["chosen_on"] == HALF and got["x-trans"]["chosen_on"] == OWN_DEV
    assert got["x-hsto"]["n"] == got["x-trans"]["n"] == len(scored) == 101  # the same rows
    want = choose_score(Scored.of(sampling).rows(choose), y[choose])[0]
    assert got["x-hsto"]["score"] == want and want in OOD_SCORES
    rescored = scored_comparison(
        Scored.of(sampling).rows(scored),
        y[scored],
        ("x-trans", Scored.of(plain).rows(scored)),
        want,
        seed=7,
    )
    assert got["x-hsto"]["errors"] == rescored["errors"]


def test_the_out_of_domain_file_is_matched_to_the_labelled_one_at_equal_word_counts():
    y, sampling, plain = _file(n=200)
    rng = np.random.default_rng(0)
    words = {"id": list(rng.integers(4, 14, 200)), "ood": list(rng.integers(6, 16, 150))}
    far = _probs(np.zeros(150), np.full(150, 3.0), seed=9)  # out of domain: unsure and split
    models = {
        "x-trans": OnFile(Scored.of(plain), Scored.of(far[:1].repeat(5, 0)), "max_prob"),
        "x-hsto": OnFile(Scored.of(sampling), Scored.of(far), "mutual_information"),
    }
    got = file_blocks(models, y, {"x-hsto": "x-trans"}, words, seed=1)
    edges = matching_edges(int(max(*words["id"], *words["ood"])) + 1)  # equal word counts
    m = length_matched(words["id"], words["ood"], edges, 1)
    block = got["x-hsto"]["ood_matched"]
    assert block["n_per_side"] == m.n > 20 and block["auroc"]["value"] > 0.5
    assert block["versus_baseline"]["verdict"] in ("better", "tie", "worse")
    assert "versus_baseline" not in got["x-trans"]["ood_matched"]  # no baseline of its own


def test_the_refactored_block_of_samples_is_the_scored_one_with_its_dev_choice():
    y, sampling, plain = _file()
    dev_y, dev = _file(seed=8)[:2]
    block = comparison(
        {"id": sampling, "dev": dev}, {"id": y, "dev": dev_y}, {}, 64, ("b", {"id": plain})
    )
    score = choose_score(dev, dev_y)[0]
    direct = scored_comparison(Scored.of(sampling), y, ("b", Scored.of(plain)), score)
    assert {k: v for k, v in block.items() if k in direct} == direct
    assert list(block)[:5] == [
        "baseline",
        "baseline_samples",
        "score",
        "chosen_on",
        "dev_error_auroc",
    ]
