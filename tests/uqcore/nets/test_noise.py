"""The counter-based noise (uqcore.nets.noise): keyed by example, independent of the batch, the
padding and the device, checked against a plain-Python reference of the hash."""

from __future__ import annotations

import math

import pytest
import torch

from uqcore.nets.noise import SampleNoise, example_keys, mix32, sample_seed

MASK32 = 0xFFFFFFFF


def ref_mix(x: int) -> int:
    """lowbias32 on a Python integer (the reference the tensor code must equal bit for bit)."""
    x &= MASK32
    x ^= x >> 16
    x = (x * 0x7FEB352D) & MASK32
    x ^= x >> 15
    x = (x * 0x846CA68B) & MASK32
    return x ^ (x >> 16)


def signed(x: int) -> int:
    return x - (1 << 32) if x >= 1 << 31 else x


def test_the_tensor_hash_equals_the_reference_bit_for_bit():
    values = [0, 1, 2, 12345, 2**31 - 1, 2**31, 2**32 - 1, 0x9E3779B9, 987654321]
    got = mix32(torch.tensor([signed(v) for v in values], dtype=torch.int32))
    assert got.tolist() == [signed(ref_mix(v)) for v in values]


def test_one_uniform_equals_a_reference_computed_by_hand():
    """The whole chain (seed, sample, example key, draw, coordinates) in plain Python."""
    seed, t, key, shape, coord = 11, 3, 77, (2, 5), (1, 4)
    s = sample_seed(seed, t)
    row = ref_mix(ref_mix((key & MASK32) ^ (s & MASK32)) ^ ((s >> 32) & MASK32))
    draw = (ref_mix(1) * 0x2545F491) & MASK32  # the first draw of the pass
    h = ref_mix(row ^ draw)
    for c in coord:
        h = ref_mix(h + (c + 1) * 0x9E3779B9)
    expected = min(max(((h >> 8) & 0xFFFFFF) * 2.0**-24, 1e-6), 1 - 1e-6)
    noise = SampleNoise(seed, t, 1, 1, keys=torch.tensor([key], dtype=torch.int32))
    assert noise.uniform(*shape)[0][coord].item() == pytest.approx(expected, abs=0, rel=0)


def test_an_example_gets_the_same_noise_alone_in_a_batch_and_padded():
    ids = torch.tensor([[2, 5, 6, 7, 0, 0], [2, 9, 10, 11, 12, 13]])
    mask = ids != 0
    keys = example_keys(ids, mask)
    alone = example_keys(ids[:1, :4], mask[:1, :4])
    assert keys[0] == alone[0] and keys[0] != keys[1]
    batch = SampleNoise(3, 0, 4, 2, keys=keys).neg_gumbel(2, 6, 6).view(4, 2, 2, 6, 6)
    single = SampleNoise(3, 2, 1, 1, keys=alone).neg_gumbel(2, 4, 4)  # sample 2, 4 tokens
    assert torch.equal(batch[2, 0, :, :4, :4], single[0])


def test_draws_are_uniform_independent_and_as_asked():
    noise = SampleNoise(0, 0, 100, 1)
    u = noise.uniform(10_000)  # [100, 10000]
    assert abs(u.mean().item() - 0.5) < 0.002 and abs(u.var().item() - 1 / 12) < 0.001
    counts = torch.histc(u, bins=16, min=0, max=1) / u.numel() * 16
    assert (counts - 1).abs().max() < 0.02
    v = noise.uniform(10_000)  # the next draw: uncorrelated with the first
    assert abs(torch.corrcoef(torch.stack([u.flatten(), v.flatten()]))[0, 1]) < 0.01
    near = torch.corrcoef(torch.stack([u[:, :-1].flatten(), u[:, 1:].flatten()]))[0, 1]
    assert abs(near) < 0.01  # neighbouring coordinates
    keep = noise.keep_mask(0.25, 4000)
    assert abs(1 - keep.float().mean().item() - 0.25) < 0.01
    z = noise.normal(4000)
    assert abs(z.mean().item()) < 0.02 and abs(z.std().item() - 1) < 0.02
    assert noise.side().uniform(5).shape == (100, 5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_cpu_and_cuda_draw_the_same_numbers():
    keys = example_keys(torch.tensor([[2, 5, 6]]), torch.ones(1, 3, dtype=torch.bool))
    cpu = SampleNoise(4, 0, 8, 1, keys=keys)
    gpu = SampleNoise(4, 0, 8, 1, device="cuda", keys=keys.cuda())
    assert torch.equal(cpu.keep_mask(0.1, 64, 64), gpu.keep_mask(0.1, 64, 64).cpu())
    assert torch.allclose(
        cpu.neg_gumbel(3, 7, 7), gpu.neg_gumbel(3, 7, 7).cpu(), rtol=1e-6, atol=1e-6
    )
    assert math.isfinite(float(gpu.normal(5).sum()))


def test_noise_draws_are_per_sample():
    """Sample t's noise is the same whether drawn alone or among others."""
    together = SampleNoise(7, 0, 5, 3).gumbel(4)
    alone = SampleNoise(7, 2, 1, 3).gumbel(4)
    assert torch.equal(together[6:9], alone)
    assert not torch.equal(SampleNoise(8, 2, 1, 3).gumbel(4), alone)
    assert torch.isfinite(together).all()


def test_keep_mask_drops_the_requested_fraction():
    keep = SampleNoise(0, 0, 50, 4).keep_mask(0.25, 1000)
    assert keep.dtype == torch.bool and keep.shape == (200, 1000)
    assert abs(1 - keep.float().mean().item() - 0.25) < 0.01
    normal = SampleNoise(0, 0, 50, 4).normal(1000)
    assert abs(normal.mean().item()) < 0.02 and abs(normal.std().item() - 1) < 0.02
