"""uqcore.prefix: the layers below the first stochastic one, computed once and kept by bytes."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from uqcore.config import ModelConfig
from uqcore.model import build_model
from uqcore.prefix import PrefixCache, prefix_for, usable
from uqcore.sampling import Capture, sample
from uqcore.settings import SamplingSettings, resolve

IDS = torch.tensor([[2, 5, 6, 7, 3, 0, 0], [2, 9, 10, 11, 12, 3, 8], [2, 4, 0, 0, 0, 0, 0]])
MASK = IDS != 0


def _model(family: str, backbone: str, last_only: bool = True):
    layers = (2,) if last_only else None
    cfg = ModelConfig(family=family, backbone=backbone, vocab_size=60, max_len=16, n_layers=3,
                      n_heads=2, d_model=16, d_ff=32, stochastic_layers=layers)  # fmt: skip
    torch.manual_seed(0)
    return build_model(cfg)


@pytest.mark.parametrize("backbone", ["word", "bert"])
@pytest.mark.parametrize("family", ["hsto", "bam"])
def test_cached_prefix_gives_the_numbers_of_a_full_pass(family, backbone):
    model = _model(family, backbone)
    cache = PrefixCache(2**20)
    plain = sample(model, IDS, MASK, T=6, seed=4)  # no cache: the prefix once per call
    first = sample(model, IDS, MASK, T=6, seed=4, prefix_cache=cache, prefix_owner="m")
    assert (cache.hits, cache.misses) == (0, 3)
    again = sample(model, IDS, MASK, T=6, seed=4, prefix_cache=cache, prefix_owner="m")
    assert (cache.hits, cache.misses) == (3, 3)  # every row read back
    torch.testing.assert_close(first.probs, plain.probs, atol=1e-6, rtol=0)
    torch.testing.assert_close(again.probs, plain.probs, atol=1e-6, rtol=0)
    # a knob of the stochastic layer reuses the prefix and still equals a fresh pass
    knob = SamplingSettings(tau2=0.5) if family == "hsto" else SamplingSettings(noise_scale=0.5)
    changed = sample(model, IDS, MASK, T=6, seed=4, settings=knob, prefix_cache=cache,
                     prefix_owner="m")  # fmt: skip
    assert cache.misses == 3
    fresh = sample(model, IDS, MASK, T=6, seed=4, settings=knob)
    torch.testing.assert_close(changed.probs, fresh.probs, atol=1e-6, rtol=0)
    assert not torch.allclose(changed.probs, plain.probs)  # the knob does change the numbers


def test_rows_are_keyed_by_their_own_tokens_not_their_batch():
    model = _model("hsto", "bert")
    cache = PrefixCache(2**20)
    sample(model, IDS[:2], MASK[:2], T=3, seed=1, prefix_cache=cache, prefix_owner="m")
    alone = sample(model, IDS[1:2, :6], MASK[1:2, :6], T=3, seed=1, prefix_cache=cache,
                   prefix_owner="m")  # fmt: skip
    assert cache.hits == 0  # IDS[1] cut to 6 tokens is another input
    one = sample(model, IDS[2:3, :2], MASK[2:3, :2], T=3, seed=1, prefix_cache=cache,
                 prefix_owner="m")  # fmt: skip
    full = sample(model, IDS, MASK, T=3, seed=1)
    torch.testing.assert_close(one.probs[:, 0], full.probs[:, 2], atol=1e-6, rtol=0)
    assert alone.probs.shape == (3, 1, 2)
    sample(model, IDS, MASK, T=3, seed=1, prefix_cache=cache, prefix_owner="other")
    assert cache.hits == 0  # another owner (other weights) never reads these rows


def test_the_cache_stays_within_its_bytes():
    model = _model("hsto", "word")
    row_bytes = 4 * 16 * 7  # the longest row: 7 tokens x 16 floats
    cache = PrefixCache(2 * row_bytes)
    sample(model, IDS, MASK, T=2, seed=0, prefix_cache=cache, prefix_owner="m")
    assert 0 < cache.bytes <= 2 * row_bytes


def test_no_prefix_where_something_below_draws_noise_or_is_captured():
    s = resolve(_model("hsto", "bert").cfg)
    assert usable(_model("hsto", "bert"), s)
    assert not usable(_model("hsto", "bert", last_only=False), s)  # noise from layer 0
    assert not usable(_model("hsto", "bert"), s, capture=(0,))  # layer 0's maps wanted
    mc = _model("mcdropout", "bert")
    assert not usable(mc, dataclasses.replace(resolve(mc.cfg), dropout_on=True))
    ens = ModelConfig(family="ensemble", vocab_size=60, max_len=16, n_layers=2, n_heads=2,
                      d_model=16, d_ff=32, ensemble_size=2, stochastic_layers=(1,))  # fmt: skip
    assert not usable(build_model(ens), resolve(ens))


def test_capturing_the_noisy_layer_keeps_the_numbers():
    model = _model("hsto", "word")
    cache = PrefixCache(2**20)
    r = sample(model, IDS, MASK, T=4, seed=2, capture=Capture(layers=(2,)), prefix_cache=cache,
               prefix_owner="m")  # fmt: skip
    assert cache.misses == 3
    plain = sample(model, IDS, MASK, T=4, seed=2)
    torch.testing.assert_close(r.probs, plain.probs, atol=1e-6, rtol=0)
    assert r.maps[2].attention.shape == (4, 3, 2, 7, 7)


def test_prefix_states_pad_with_zeros_and_match_the_batch():
    model = _model("bam", "bert")
    s = resolve(model.cfg)
    states = prefix_for(model, IDS, MASK, s, PrefixCache(2**20), "m")  # [B, L, D]
    assert states.shape == (3, 7, 16)
    assert states[2, 2:].abs().max() == 0
    torch.testing.assert_close(states[1], model.prefix_states(IDS, MASK, s)[1], atol=1e-6,
                               rtol=0)  # fmt: skip
