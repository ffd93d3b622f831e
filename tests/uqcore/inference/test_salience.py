"""uqcore.inference.salience: hand-computed values, completeness, sample t alone, every family."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from tests.helpers import ALL_FAMILIES, tiny_config, tiny_model
from uqcore.exceptions import ConfigError, InputError
from uqcore.inference.salience import attribute, mutual_information
from uqcore.inference.sampling import sample
from uqcore.nets.model import ForwardOutput
from uqcore.nets.noise import SampleNoise, example_keys

IDS = torch.tensor([[2, 5, 6, 7, 8, 9]])
MASK = torch.ones_like(IDS, dtype=torch.bool)
HOLD = torch.tensor([True, False, False, False, False, False])


class HandMade(nn.Module):
    """``logits = u_t * (W @ mean_l x_l)``, ``u_t`` sample t's uniform draw: small enough to
    differentiate by hand."""

    def __init__(self):
        super().__init__()
        self.cfg = tiny_config("sto")
        torch.manual_seed(3)
        self.embed = nn.Embedding(self.cfg.vocab_size, 4)
        self.w = nn.Parameter(torch.randn(self.cfg.num_classes, 4))

    def forward(self, ids, mask, settings=None, noise=None, capture=(), token_embeddings=None):
        x = self.embed(ids) if token_embeddings is None else token_embeddings  # [N, L, D]
        u = noise.uniform(1) if noise is not None else torch.ones(ids.shape[0], 1)  # [N, 1]
        return ForwardOutput(logits=u * (x.mean(1) @ self.w.T))


def _hand(model: HandMade, T: int, seed: int, target: int, alphas):
    """Attributions of p_t(target) computed with numpy from the closed-form gradient."""
    x = model.embed.weight[IDS[0]].detach().double().numpy()  # [L, D]
    x0 = np.where(HOLD.numpy()[:, None], x, model.embed.weight[0].detach().double().numpy())
    w = model.w.detach().double().numpy()  # [C, D]
    keys = example_keys(IDS, MASK)
    out = np.zeros((T, x.shape[0]))
    for t in range(T):
        u = float(SampleNoise(seed, t, 1, 1, "cpu", keys).uniform(1)[0, 0])
        for a in alphas:
            xa = x0 + a * (x - x0)
            z = u * (w @ xa.mean(0))
            p = np.exp(z - z.max())
            p /= p.sum()
            grad = p[target] * u * (w[target] - p @ w) / x.shape[0]  # d p_target / d x_l [D]
            out[t] += ((x - x0) @ grad) / len(alphas)
    return out


@pytest.mark.parametrize("method", ["gradient_x_input", "integrated_gradients"])
def test_a_hand_made_model_gets_its_hand_computed_attributions(method):
    model = HandMade()
    steps = 1 if method == "gradient_x_input" else 8
    alphas = [1.0] if steps == 1 else [(s + 0.5) / steps for s in range(steps)]
    got = attribute(model, IDS, MASK, 5, 7, 1, baseline_id=0, hold=HOLD, method=method, steps=steps)
    want = _hand(model, 5, 7, 1, alphas)
    np.testing.assert_allclose(got.prob.double().numpy(), want, atol=1e-6)
    assert got.prob[:, 0].abs().max() == 0  # a held position gets nothing
    assert got.prob.std(0).max() > 1e-4  # the samples' noise differs, so do their attributions


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_integrated_gradients_are_complete(family):
    """sum over tokens = f(input) - f(baseline), for every sample and for the mutual
    information, within the midpoint rule's error at 256 steps (the tiny models' ReLU kinks
    make it converge slower than 1/steps^2 on some paths: BayesFormer's gap is 0.046 at 64
    steps, 0.002 at 256)."""
    model = tiny_model(family)
    got = attribute(model, IDS, MASK, 6, 1, 0, baseline_id=0, hold=HOLD, steps=256)
    assert got.prob_gap.abs().max() < 5e-3, got.prob_gap
    lhs = got.prob.sum(1)
    rhs = got.probs[:, 0] - got.base_probs[:, 0]
    torch.testing.assert_close(lhs - rhs, got.prob_gap)
    if got.mi is not None:
        assert abs(got.mi_gap) < 5e-3
        assert abs(float(got.mi.sum()) - (got.mi_value - got.mi_base) - got.mi_gap) < 1e-6


@pytest.mark.parametrize("family", ["mcdropout", "hsto", "bam", "bayesformer", "probtrans"])
def test_sample_t_of_a_batched_call_is_the_single_sample_computation(family):
    model = tiny_model(family)
    many = attribute(
        model, IDS, MASK, 5, 4, 1, baseline_id=0, hold=HOLD, steps=6, memory_budget=40_000
    )  # small chunks: rows split up
    for t in (0, 3):
        one = attribute(
            model, IDS, MASK, 1, 4, 1, baseline_id=0, hold=HOLD, steps=6, first_sample=t
        )
        torch.testing.assert_close(many.prob[t], one.prob[0], atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(many.probs[t], one.probs[0], atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_the_probabilities_are_the_samplers(family):
    model = tiny_model(family)
    got = attribute(model, IDS, MASK, 4, 2, 0, baseline_id=0, hold=HOLD, method="gradient_x_input")
    with torch.inference_mode():
        want = sample(model, IDS, MASK, 4, 2).probs[:, 0]
    torch.testing.assert_close(got.probs, want, atol=1e-5, rtol=1e-4)
    if not got.stochastic:  # one computation stands for every sample: no spread
        assert got.mi is None and got.prob.std(0).max() == 0


def test_an_ensembles_samples_are_its_members():
    model = tiny_model("ensemble")
    got = attribute(model, IDS, MASK, 7, 0, 1, baseline_id=0, hold=HOLD, steps=4)
    assert got.members.tolist() == [0, 1, 2, 0, 1, 2, 0]
    torch.testing.assert_close(got.prob[0], got.prob[3])
    assert (got.prob[0] - got.prob[1]).abs().max() > 1e-6
    assert got.mi is not None and abs(got.mi_gap) < 1e-2


def test_mutual_information_matches_the_stats_module():
    from uqcore.stats import mutual_information as np_mi

    p = torch.softmax(torch.randn(9, 3, 4, dtype=torch.float64), -1)
    np.testing.assert_allclose(mutual_information(p).numpy(), np_mi(p.numpy()), atol=1e-12)


def test_bad_arguments_get_messages():
    model = tiny_model("sto")
    with pytest.raises(ConfigError, match="method"):
        attribute(model, IDS, MASK, 2, 0, 0, baseline_id=0, hold=HOLD, method="lime")
    with pytest.raises(ConfigError, match="steps"):
        attribute(model, IDS, MASK, 2, 0, 0, baseline_id=0, hold=HOLD, steps=0)
    with pytest.raises(ConfigError, match="target"):
        attribute(model, IDS, MASK, 2, 0, 5, baseline_id=0, hold=HOLD)
    with pytest.raises(InputError, match="one text"):
        attribute(model, IDS.repeat(2, 1), MASK.repeat(2, 1), 2, 0, 0, baseline_id=0, hold=HOLD)
    with pytest.raises(ConfigError, match="inference_mode"), torch.inference_mode():
        attribute(model, IDS, MASK, 2, 0, 0, baseline_id=0, hold=HOLD)


def test_hard_samples_say_their_gradient_is_a_surrogate():
    """Straight-through one-hot attention has no gradient of its own: the result says so."""
    from uqcore.settings import SamplingSettings

    model = tiny_model("hsto")
    got = attribute(
        model,
        IDS,
        MASK,
        3,
        0,
        0,
        baseline_id=0,
        hold=HOLD,
        steps=8,
        settings=SamplingSettings(hard=True),
    )
    assert got.straight_through
    assert not attribute(
        model, IDS, MASK, 3, 0, 0, baseline_id=0, hold=HOLD, steps=8
    ).straight_through


def test_three_classes_take_a_second_backward_pass_and_stay_complete():
    from uqcore.build import build_model

    torch.manual_seed(0)
    model = build_model(tiny_config("mcdropout").replace(num_classes=3))
    got = attribute(model, IDS, MASK, 5, 2, 2, baseline_id=0, hold=HOLD, steps=128)
    assert got.probs.shape == (5, 3)
    assert got.prob_gap.abs().max() < 5e-3 and abs(got.mi_gap) < 5e-3
    gxi = attribute(model, IDS, MASK, 5, 2, 2, baseline_id=0, hold=HOLD, method="gradient_x_input")
    assert gxi.mi is not None and gxi.mi.abs().sum() > 0


@pytest.mark.parametrize("family", ["hsto", "mcdropout"])
def test_the_mutual_informations_attribution_is_the_same_in_one_chunk_or_many(family):
    """All T samples of a point in one chunk (the MI cotangent computed in the chunk) or
    spread over chunks (computed from a first pass over every row): the same numbers."""
    model = tiny_model(family)
    whole = attribute(model, IDS, MASK, 6, 3, 1, baseline_id=0, hold=HOLD, steps=8)
    split = attribute(
        model, IDS, MASK, 6, 3, 1, baseline_id=0, hold=HOLD, steps=8, memory_budget=40_000
    )  # fewer rows per chunk than T
    torch.testing.assert_close(whole.mi, split.mi, atol=1e-6, rtol=1e-4)
    torch.testing.assert_close(whole.prob, split.prob, atol=1e-6, rtol=1e-4)
