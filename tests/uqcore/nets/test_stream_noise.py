"""Training's noise streams (uqcore.nets.stream_noise): the numbers never depend on how they are
drawn."""

from __future__ import annotations

import torch

from uqcore.nets.stream_noise import StreamNoise


def test_noise_streams_do_not_depend_on_how_they_are_drawn():
    """Training's streams: the reserve hint only changes block sizes, never the numbers."""
    plain = StreamNoise(3, 0, 4, 2)
    hinted = StreamNoise(3, 0, 4, 2, reserve=100_000)
    for noise_source in (plain, hinted):
        noise_source.draws = [
            noise_source.gumbel(3, 5),
            noise_source.keep_mask(0.3, 7000),
            noise_source.normal(9),
        ]
    for a, b in zip(plain.draws, hinted.draws, strict=True):
        assert torch.equal(a, b)
    assert plain.consumed == hinted.consumed > 0


def test_noise_for_indices_matches_the_same_samples_of_a_run():
    run = StreamNoise(5, 0, 6, 1).gumbel(3)
    picked = StreamNoise.for_indices(5, [4, 1], batch=1).gumbel(3)
    assert torch.equal(picked, run[[4, 1]])
