"""The comparison block: each family against the deterministic model of its task and backbone,
on the same texts, its score chosen on dev (issue 47)."""

from __future__ import annotations

import numpy as np
import pytest

from uqcore.inference.detection import paired_models_difference
from uqcore.registry import list_checkpoints
from uqcore.stats import OOD_SCORES, accuracy, bootstrap_interval, ece, ood_scores
from uqlab.catalog.paths import checkpoint_dir
from uqlab.evaluation.comparison import (
    SHORT,
    choose_score,
    comparison,
    comparison_line,
    deterministic,
    find_baseline,
)


def test_every_shipped_family_is_paired_with_the_deterministic_model_of_its_task_and_base():
    infos = list_checkpoints(checkpoint_dir())
    got = {i.name: find_baseline(i.name, infos) for i in infos if not i.error}
    assert got["cr-minilm-hsto"] == got["cr-minilm-laplace"] == "cr-minilm-trans"
    assert got["cr-smollm2-words-sto"] == got["cr-smollm2-laplace"] == "cr-smollm2-trans"
    assert got["cola-ensemble"] == got["cola-hsto"] == "cola-trans"  # word-level: no base
    assert got["cola-minilm-ensemble"] == "cola-minilm-trans"  # not the word-level one
    assert got["imdb-sto-t40"] == "imdb-trans"
    family = {i.name: i.family for i in infos}
    for name, base in got.items():  # every sampling one has a baseline, which is deterministic
        assert (base is None) == deterministic(family[name]), name
        assert base is None or deterministic(family[base])
    assert got["cola-trans"] is None and got["cr-minilm-trans"] is None
    assert not any(deterministic(f) for f in ("mcdropout", "laplace", "probtrans"))


def _probs(margin: np.ndarray, spread: np.ndarray, T: int = 5, seed: int = 0) -> np.ndarray:
    """``[T, N, 2]`` around p1 = sigmoid(margin), each row's samples spread by ``spread``."""
    noise = np.random.default_rng(seed).normal(size=(T, len(margin))) * spread[None]
    p1 = 1 / (1 + np.exp(-(margin[None] + noise)))
    return np.stack([1 - p1, p1], axis=-1)


def _case(n: int = 160, seed: int = 1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    wrong = rng.random(n) < 0.25  # the rows the model gets wrong
    margin = np.where(y == 1, 1.0, -1.0) * np.where(wrong, -0.8, 1.5)
    spread = np.where(wrong, 2.0, 0.2)  # its samples disagree on exactly those rows
    return y, _probs(margin, spread, seed=seed)


def test_the_score_is_chosen_on_dev_errors_and_ties_keep_the_first():
    y, p = _case()
    score, aurocs = choose_score(p, y)
    assert score == max(OOD_SCORES, key=lambda s: aurocs[s]) and set(aurocs) == set(OOD_SCORES)
    right = p.mean(0).argmax(-1)  # no error on dev: no AUROC, the plain baseline is kept
    assert choose_score(p, right) == ("max_prob", dict.fromkeys(OOD_SCORES))


def test_the_block_pairs_both_models_on_the_same_texts_with_plain_bootstrap_intervals():
    y, p = _case()
    y_dev, p_dev = _case(seed=2)
    ood = _probs(np.full(120, 0.3), np.full(120, 1.0), seed=3)
    flips = np.random.default_rng(4).random(len(y)) < 0.2  # the baseline's own errors
    base_margin = (
        np.where(y == 1, 0.9, -0.9) * np.where(flips, -1.0, 1.0) * np.linspace(0.5, 2, len(y))
    )
    base = _probs(base_margin, np.zeros(len(y)), T=1, seed=4)
    base_ood = _probs(np.full(120, 0.5), np.zeros(120), T=1, seed=5)
    lengths = {"id": [10] * len(y), "ood": [10] * 60 + [40] * 60}
    block = comparison(
        {"id": p, "dev": p_dev, "ood": ood},
        {"id": y, "dev": y_dev},
        lengths,
        64,
        ("plain", {"id": base, "ood": base_ood}),
        seed=3,
        matched_set="cut reviews",
    )
    score = block["score"]
    assert block["chosen_on"] == "dev" and block["baseline"] == "plain"
    assert block["baseline_samples"] == 1 and block["n"] == len(y)
    for key, metric in (("accuracy", accuracy), ("ece", ece)):
        plain = bootstrap_interval(metric, p.mean(0), y, resamples=1000, seed=3)
        assert block["intervals"][key] == {
            "value": plain.value,
            "interval": [plain.low, plain.high],
        }
    wrong, base_wrong = (q.mean(0).argmax(-1) != y for q in (p, base))
    want = paired_models_difference(
        wrong, ood_scores(p, score), base_wrong, ood_scores(base, "max_prob"), seed=3
    )
    assert block["errors"] == want.as_dict()
    matched = block["ood_matched"]  # only the 60 OOD texts of length 10 meet the test's
    assert matched["n_per_side"] == 60 and matched["set"] == "cut reviews"
    assert set(matched["versus_baseline"]) >= {"difference", "interval", "verdict"}
    line = comparison_line(block)
    assert line.startswith(f"{SHORT[score]} (chosen on dev) against plain's 1−p")
    assert "errors " in line and "OOD at matched length (60 a side)" in line


def test_no_baseline_and_lengths_apart_say_so_instead_of_a_figure():
    y, p = _case()
    ood = _probs(np.full(50, 0.3), np.full(50, 1.0))
    block = comparison(
        {"id": p, "dev": p, "ood": ood},
        {"id": y, "dev": y},
        {"id": [8] * len(y), "ood": [64] * 50},
        64,
        None,
    )
    assert block["baseline"] is None and "errors" not in block
    assert "hardly overlap" in block["ood_matched"]["note"]
    assert comparison_line(block) is None
    assert comparison_line({"baseline": "x", "errors": {"difference": "1"}}) == (
        "? (chosen on dev) against x's 1−p"
    )


@pytest.mark.parametrize("bad", [None, [], {"baseline": 3}])
def test_a_block_of_another_shape_gives_no_line(bad):
    assert comparison_line(bad) is None
