"""ui.logic.why: occlusion is the sampler's, the app's salience record, the edit view's alignment.
The dataset map's stored file: tests/uqlab/test_feature_map.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.app_fixtures import make_checkpoints
from ui.logic import estimate, why
from uqcore.inference.sampling import sample
from uqcore.registry import load
from uqcore.settings import SamplingSettings
from uqlab.workbench import compute

TEXT = "the film was dull and the movie was great"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return make_checkpoints(tmp_path_factory.mktemp("why"), families=("hsto", "mcdropout", "trans"))


@pytest.mark.parametrize("family", ["hsto", "mcdropout"])
def test_occlusion_equals_t_separate_calls(root, family):
    """Every word removed in turn, all in one batched call; each shortened text's mean p and
    MI are those of T single-sample calls on it alone (sample t = first_sample t)."""
    ck = load(f"cola-{family}", root)
    T, seed = 6, 5
    probs = compute.explore(ck, TEXT, T, seed, SamplingSettings()).probs  # [T, C]
    calls = []

    def sampler(texts):
        calls.append(len(texts))
        return compute.many_probs(ck, texts, T, seed, SamplingSettings())

    table = why.occlusion(TEXT, probs, sampler, 1, 0, len(TEXT.split()))
    assert calls == [len(TEXT.split())]  # one call for all the occlusions
    for i, variant in enumerate(why.occluded_texts(TEXT, 0, len(TEXT.split()))):
        enc = ck.vocab.encode(variant, ck.config.max_len)
        ids = torch.tensor([enc.ids])
        mask = torch.ones_like(ids, dtype=torch.bool)
        with torch.inference_mode():
            alone = torch.cat(
                [sample(ck.model, ids, mask, 1, seed, first_sample=t).probs[:, 0] for t in range(T)]
            ).numpy()  # [T, C]
        row = table.iloc[i]
        assert row["word"] == TEXT.split()[i]
        assert abs(row["p without"] - alone[:, 1].mean()) < 1e-5
        assert abs(row["shift of p"] - (alone[:, 1].mean() - probs[:, 1].mean())) < 1e-5
        from uqcore.stats import mutual_information

        assert abs(row["MI without"] - mutual_information(alone[:, None])[0]) < 1e-5


def test_occlusion_of_a_single_word_text_leaves_nothing(root):
    ck = load("cola-trans", root)
    probs = compute.explore(ck, "film dull", 3, 0, SamplingSettings()).probs
    table = why.occlusion(
        "film dull",
        probs,
        lambda texts: compute.many_probs(ck, texts, 3, 0, SamplingSettings()),
        0,
        0,
        2,
    )
    assert len(table) == 2 and table["se"].fillna(0).eq(0).all()  # deterministic: no spread


def test_occlusion_window_of_a_long_text():
    assert why.occlusion_window(10, 5) == (0, 10)
    assert why.occlusion_window(100, 30) == (30, 30 + why.MAX_OCCLUDED)
    assert why.occlusion_window(100, 99) == (100 - why.MAX_OCCLUDED, 100)


def test_salience_record_of_the_app(root):
    ck = load("cola-hsto", root)
    a = why.salience(ck, TEXT, 5, 0, SamplingSettings(), 1, "integrated_gradients", 16)
    assert a.prob.shape == (5, len(a.tokens)) and a.tokens[0] == "[CLS]"
    table = a.table()
    assert list(table["token"]) == TEXT.split()
    assert abs(table["top share"].sum() - 1) < 1e-9  # every sample has one top token
    np.testing.assert_allclose(table["mean"], a.prob[:, 1:].mean(0))
    explored = compute.explore(ck, TEXT, 5, 0, SamplingSettings())
    np.testing.assert_allclose(a.probs, explored.probs, atol=1e-5)  # the explorer's samples


def test_edit_alignment_and_attention_difference():
    a = ["[CLS]", "the", "cat", "slept"]
    b = ["[CLS]", "the", "old", "cat", "slept"]
    pairs = why.aligned(a, b)
    assert pairs == [(0, 0), (1, 1), (2, 3), (3, 4)]
    ma, mb = np.eye(4), np.full((5, 5), 0.2)
    diff = why.attention_difference(ma, mb, pairs)
    assert diff.shape == (4, 4)
    np.testing.assert_allclose(diff, 0.2 - np.eye(4))


def test_salience_records_its_time_under_its_kind_and_size(root):
    """Every real computation is timed for the next estimate (ui.logic.estimate): its kind is
    the checkpoint and method, its size rows x path points x tokens."""
    ck = load("cola-hsto", root)
    timings = estimate.Timings()
    a = why.salience(
        ck, TEXT, 4, 0, SamplingSettings(), 1, "integrated_gradients", 8, timings=timings
    )
    (run,) = timings.runs(why.salience_kind("cola-hsto", "integrated_gradients"))
    assert run.seconds == a.seconds and run.size == 4 * (8 + 2) * len(a.tokens)
    assert timings.runs(why.salience_kind("cola-hsto", "gradient_x_input")) == []
    why.salience(ck, TEXT, 4, 0, SamplingSettings(), 1, "integrated_gradients", 8, timings=None)
    assert len(timings.runs(why.salience_kind("cola-hsto", "integrated_gradients"))) == 1


def test_salience_size_counts_the_rows_each_point_runs():
    assert why.salience_size(10, 32, "integrated_gradients", 7, True, None) == 10 * 34 * 7
    assert why.salience_size(10, 1, "gradient_x_input", 7, True, None) == 10 * 2 * 7
    assert why.salience_size(10, 32, "integrated_gradients", 7, False, None) == 34 * 7  # one row
    members = np.arange(10) % 3  # an ensemble: one row per member
    assert why.salience_size(10, 1, "gradient_x_input", 7, True, members) == 3 * 2 * 7


def test_estimates_of_salience_runs_bench(root, capsys):
    """Benchmark-style: estimate each run from the runs before it and print the estimate beside
    the measured time. Nothing timed is asserted (a shared machine is noisy); the figures on
    the shipped checkpoints are in the report of issue "time estimates within 2x"."""
    ck = load("cola-mcdropout", root)
    timings = estimate.Timings()
    method = "integrated_gradients"
    kind = why.salience_kind("cola-mcdropout", method)
    rows = []
    for steps in (8, 16, 32, 8, 24):
        a = why.salience(ck, TEXT, 6, 0, SamplingSettings(), 1, method, steps, timings=None)
        size = why.salience_size(6, steps, method, len(a.tokens), a.stochastic, a.members)
        guess, runs = timings.guess(kind, size)
        rows.append((steps, guess, a.seconds, runs))
        timings.record(kind, a.seconds, size)
    with capsys.disabled():
        for steps, guess, seconds, runs in rows:
            said = "none" if guess is None else f"{guess:.3f} s"
            print(f"\nIG {steps} steps: estimated {said} from {runs} runs, took {seconds:.3f} s")
    assert rows[0][1] is None and all(g is not None and g > 0 for _, g, _, _ in rows[1:])
