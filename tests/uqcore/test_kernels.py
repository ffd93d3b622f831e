"""Properties of the attention kernels, independent of any layer."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from uqcore import kernels
from uqcore.kernels.common import SOFTMAX_MIN_ROW, log_softmax_last, softmax_last
from uqcore.kernels.softmax import FUSED_MIN_LEN, manual_softmax_weights
from uqcore.nets.noise import SampleNoise

N, H, L, D = 4, 2, 6, 8


def qkv(seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(N, H, L, D, generator=g) for _ in range(3)]


def pad_mask():
    mask = torch.ones(N, L, dtype=torch.bool)
    mask[0, 3:] = False
    mask[2, 5:] = False
    return mask


def assert_rows(attn, mask):
    n = attn.shape[0]
    mask = mask[:n]
    assert torch.allclose(attn.sum(-1), torch.ones(attn.shape[:-1]), atol=1e-5)
    assert attn.masked_select(~mask[:, None, None, :].expand_as(attn)).abs().max() == 0


def noise(seed=0):
    return SampleNoise(seed, 0, N, 1)


@pytest.mark.parametrize("hard", [False, True])
def test_sto_rows_sum_to_one_and_padding_zero(hard):
    q, k, v = qkv()
    mask = pad_mask()
    out = kernels.sto_attention(q, k, v, mask, tau2=3.0, noise_scale=1.0, noise=noise(), hard=hard)
    assert_rows(out.maps.attention, mask)
    if hard:
        assert set(out.maps.attention.unique().tolist()) <= {0.0, 1.0}
        assert torch.equal(out.maps.attention.sum(-1), torch.ones(N, H, L))


@pytest.mark.parametrize("side", ["key", "query"])
@pytest.mark.parametrize("per_head", [False, True])
def test_centroid_attention_rows_and_assignments(side, per_head):
    q, k, v = qkv()
    mask = pad_mask()
    c = torch.randn(H, D, 3) if per_head else torch.randn(D, 3)
    out = kernels.centroid_attention(q, k, v, mask, c, 1.0, 2.0, 1.0, noise(), side=side)
    assert_rows(out.maps.attention, mask)
    p = out.maps.centroids
    assert p.shape == (N, H, L, 3)
    assert torch.allclose(p.sum(-1), torch.ones(N, H, L), atol=1e-5)


def test_centroid_hard_assignments_are_one_hot():
    q, k, v = qkv()
    out = kernels.centroid_attention(
        q, k, v, pad_mask(), torch.randn(D, 3), 1.0, 2.0, 1.0, noise(), hard=True
    )
    assert set(out.maps.centroids.unique().tolist()) <= {0.0, 1.0}


def test_hard_mode_ignores_tau_in_forward_value():
    """The pitfall the app must explain: in hard mode the temperature does not change samples."""
    q, k, v = qkv()
    a = kernels.sto_attention(q, k, v, pad_mask(), 0.5, 1.0, noise(3), hard=True).maps.attention
    b = kernels.sto_attention(q, k, v, pad_mask(), 50.0, 1.0, noise(3), hard=True).maps.attention
    assert torch.equal(a, b)


@pytest.mark.parametrize("length", [L, 130])  # manual path below FUSED_MIN_LEN, SDPA from it
def test_manual_softmax_equals_sdpa(length):
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, H, length, D, generator=g) for _ in range(3))
    mask = torch.ones(2, length, dtype=torch.bool)
    mask[0, length // 2 :] = False
    weights = manual_softmax_weights(q, k, mask, math.sqrt(D))
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, None, :])
    assert torch.allclose(weights @ v, ref, atol=1e-5)
    assert_rows(weights, mask)
    plain = kernels.softmax_attention(q, k, v, mask, tau=math.sqrt(D), need_weights=False)
    with_weights = kernels.softmax_attention(q, k, v, mask, tau=math.sqrt(D))
    assert torch.equal(with_weights.maps.attention, weights)
    assert torch.equal(plain.out, with_weights.out)  # capturing must not change the numbers
    assert torch.allclose(plain.out, ref, atol=1e-5)
    assert (plain.maps.attention is None) == (length >= FUSED_MIN_LEN)


def test_sto_without_noise_is_softmax_at_tau2():
    q, k, v = qkv()
    mask = pad_mask()
    sto = kernels.sto_attention(q, k, v, mask, 2.5, 0.0, noise())
    ref = kernels.softmax_attention(q, k, v, mask, 2.5)
    assert torch.allclose(sto.maps.attention, ref.maps.attention, atol=1e-6)


@pytest.mark.parametrize("dist", ["weibull", "lognormal"])
@pytest.mark.parametrize("contextual", [True, False])
def test_bam_rows_kl_nonnegative_and_mean(dist, contextual):
    q, k, v = qkv()
    mask = pad_mask()
    prior = torch.randn(N, H, L) if contextual else None
    kw = dict(dist=dist, prior_logits=prior, shape_k=5.0, sigma=0.5, beta=1.0, prior_sigma=1.0)
    s = kernels.bam_attention(q, k, v, mask, sample=True, noise_scale=1.0, noise=noise(), **kw)
    m = kernels.bam_attention(q, k, v, mask, sample=False, noise_scale=1.0, noise=noise(), **kw)
    assert_rows(s.maps.attention, mask)
    assert not torch.allclose(s.maps.attention, m.maps.attention)
    assert torch.equal(m.maps.attention, s.maps.posterior_mean)
    assert (s.maps.kl_per_head >= -1e-4).all() and torch.isfinite(s.maps.kl_per_head).all()
    prior_row = s.maps.prior
    assert torch.allclose(prior_row.sum(-1), torch.ones(N, H), atol=1e-5)
    assert (prior_row.masked_select(~mask[:, None, :].expand_as(prior_row)) == 0).all()


def test_bam_samples_average_to_the_posterior_mean():
    q, k, v = qkv()
    mask = pad_mask()
    many = SampleNoise(0, 0, 4000, 1)
    rep = [t.repeat(4000, 1, 1, 1)[:4000] for t in (q[:1], k[:1], v[:1])]
    out = kernels.bam_attention(
        *rep,
        mask[:1].repeat(4000, 1),
        dist="weibull",
        prior_logits=None,
        shape_k=10.0,
        sigma=0.5,
        beta=1.0,
        prior_sigma=1.0,
        sample=True,
        noise_scale=1.0,
        noise=many,
    )
    assert torch.allclose(out.maps.attention.mean(0), out.maps.posterior_mean[0], atol=0.01)


def test_kl_closed_forms_are_zero_at_equality_and_positive_elsewhere():
    mu = torch.tensor([0.3])
    assert kernels.kl_lognormal(mu, 0.7, mu, 0.7).abs().item() < 1e-6
    assert kernels.kl_lognormal(mu, 0.7, mu + 1, 0.7).item() > 0
    # Weibull(k=1, lam) is Exponential(1/lam) = Gamma(1, 1/lam): the KL must be 0
    lam = torch.tensor([2.0])
    kl = kernels.kl_weibull_gamma(torch.log(lam), 1.0, torch.tensor([1.0]), 0.5)
    assert kl.abs().item() < 1e-5


def test_em_with_zero_iterations_is_plain_attention():
    q, k, v = qkv()
    mask = pad_mask()
    em = kernels.probtrans_attention(q, k, v, mask, 1 / math.sqrt(D), 1.0, 0, keep_prior=True)
    ref = kernels.softmax_attention(q, k, v, mask, math.sqrt(D))
    assert torch.allclose(em.maps.attention, ref.maps.attention, atol=1e-6)
    assert torch.allclose(em.maps.attention_before_em, ref.maps.attention, atol=1e-6)


def test_em_moves_keys_towards_queries_and_keeps_rows():
    q, k, v = qkv()
    mask = pad_mask()
    adapted = kernels.em_adapt_keys(q, k, mask, 1 / math.sqrt(D), 1.0, 3)
    assert not torch.allclose(adapted, k)
    # a huge prior precision pins the keys to their trained values
    pinned = kernels.em_adapt_keys(q, k, mask, 1 / math.sqrt(D), 1e9, 3)
    assert torch.allclose(pinned, k, atol=1e-5)
    out = kernels.probtrans_attention(q, k, v, mask, 1 / math.sqrt(D), 1.0, 3)
    assert_rows(out.maps.attention, mask)


@pytest.mark.parametrize("width", [1, 2, 4, 7, 12, 15, 16, 33])
def test_short_row_softmax_agrees_with_pytorch(width):
    torch.manual_seed(width)
    x = torch.randn(3, 4, 5, width) * 4
    if width > 1:
        x[0, 0, 0, 0] = float("-inf")  # a padded key
    with torch.inference_mode():
        fast, log_fast = softmax_last(x), log_softmax_last(x)
    assert fast.shape == x.shape and log_fast.shape == x.shape
    assert torch.allclose(fast, torch.softmax(x, -1), atol=3e-7, rtol=0)
    finite = torch.isfinite(log_fast)
    assert torch.equal(finite, torch.isfinite(torch.log_softmax(x, -1)))
    assert torch.allclose(log_fast[finite], torch.log_softmax(x, -1)[finite], atol=1e-6)
    assert (fast[0, 0, 0, 0] == 0) == (width > 1)
    assert torch.allclose(fast.sum(-1), torch.ones(3, 4, 5))


def test_training_keeps_pytorchs_softmax_bit_for_bit():
    """With gradients the plain kernel runs, so retraining reproduces the shipped weights."""
    x = torch.randn(6, SOFTMAX_MIN_ROW - 4, requires_grad=True)
    assert torch.equal(softmax_last(x), torch.softmax(x, -1))
    assert torch.equal(log_softmax_last(x), torch.log_softmax(x, -1))


@pytest.mark.parametrize("noise_scale", [1.0, 0.7])
@pytest.mark.parametrize("tau", [1.0, 0.3, "per row"])
def test_tiled_gumbel_softmax_gives_the_bits_of_the_copied_logits(noise_scale, tau):
    """The same bits as the copied logits' Gumbel-softmax; where lambda equals tau the race
    (exp once per example, divided by each sample's E = -log u) gives them within rounding."""
    from uqcore.kernels.gumbel import gumbel_softmax, gumbel_softmax_tiled

    repeats, batch = 3, 2
    logits = torch.randn(batch, 4, 9, 5)  # [B, H, L, c]
    if tau == "per row":
        tau = torch.tensor([0.3, 1.0, 3.0]).repeat_interleave(batch).view(-1, 1, 1, 1)
    copied = logits.repeat(repeats, 1, 1, 1)
    want = gumbel_softmax(copied, tau, noise_scale, SampleNoise(5, 0, repeats, batch), False)
    before = logits.clone()
    got = gumbel_softmax_tiled(
        logits, repeats, tau, noise_scale, SampleNoise(5, 0, repeats, batch), False
    )
    if isinstance(tau, float) and tau == noise_scale:  # the exponential race: another order
        torch.testing.assert_close(got, want, atol=1e-6, rtol=0)
    else:
        assert torch.equal(got, want)
    assert torch.equal(logits, before)  # the unique rows' logits are not written
    plain = gumbel_softmax_tiled(logits, repeats, tau, 0.0, None, False)
    assert torch.equal(
        plain, gumbel_softmax(logits.repeat(repeats, 1, 1, 1), tau, 0.0, None, False)
    )


@pytest.mark.parametrize("hard", [False, True])
def test_the_exponential_race_stays_finite_and_normalised_at_the_uniforms_extremes(hard):
    """Logits far apart (one key at +-80 from the others) and every sample's draws: no 0 / 0,
    no overflow, rows summing to 1, the argmax of the copied logits' softmax."""
    from uqcore.kernels.gumbel import gumbel_softmax, gumbel_softmax_tiled

    repeats, batch = 50, 3
    logits = torch.randn(batch, 2, 7, 4)
    logits[0, :, :, 0] += 80.0
    logits[1, :, :, 1] -= 80.0
    with torch.inference_mode():
        got = gumbel_softmax_tiled(
            logits, repeats, 2.0, 2.0, SampleNoise(1, 0, repeats, batch), hard
        )
        copied = logits.repeat(repeats, 1, 1, 1)
        want = gumbel_softmax(copied, 2.0, 2.0, SampleNoise(1, 0, repeats, batch), hard)
    assert torch.isfinite(got).all()
    torch.testing.assert_close(got.sum(-1), torch.ones(got.shape[:-1]), atol=1e-6, rtol=0)
    torch.testing.assert_close(got, want, atol=1e-6, rtol=0)
