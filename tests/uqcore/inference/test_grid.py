"""uqcore.inference.grid: a grid of temperatures sampled in one pass gives, value by value, the
numbers of one call per value; grids that cannot fold are sampled one value at a time."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from uqcore.build import build_model
from uqcore.config import ModelConfig
from uqcore.exceptions import ConfigError
from uqcore.inference.grid import folds, sample_grid
from uqcore.inference.prefix import PrefixCache
from uqcore.inference.sampling import sample
from uqcore.nets.noise import SampleNoise, TiledNoise, example_keys
from uqcore.settings import SamplingSettings, resolve

IDS = torch.tensor([[2, 5, 6, 7, 3, 0, 0], [2, 9, 10, 11, 12, 3, 8], [2, 4, 0, 0, 0, 0, 0]])
MASK = IDS != 0
TAUS = (0.3, 1.0, 3.0, 40.0)


def _model(family: str, backbone: str = "word", n_layers: int = 1, last_only: bool = False):
    cfg = ModelConfig(
        family=family,
        backbone=backbone,
        vocab_size=60,
        max_len=16,
        n_layers=n_layers,
        n_heads=2,
        d_model=16,
        d_ff=32,
        stochastic_layers=(n_layers - 1,) if last_only else None,
    )
    torch.manual_seed(0)
    return build_model(cfg).eval()


def _grid(model, **values) -> list:
    """One resolved setting per value of the one knob in ``values`` (or per pair when two)."""
    names = list(values)
    return [
        resolve(model.cfg, SamplingSettings(**dict(zip(names, vs, strict=True))))
        for vs in zip(*values.values(), strict=True)
    ]


def _same_as_one_call_each(model, grid, **kw) -> None:
    got = sample_grid(model, IDS, MASK, 5, 3, grid, **kw)
    assert len(got) == len(grid)
    for s, r in zip(grid, got, strict=True):
        alone = sample(model, IDS, MASK, 5, 3, s)
        assert r.probs.shape == alone.probs.shape == (5, 3, 2)
        torch.testing.assert_close(r.probs, alone.probs, atol=1e-6, rtol=0)
        torch.testing.assert_close(r.logits, alone.logits, atol=1e-5, rtol=0)
        assert r.settings == dataclasses.replace(s, need_kl=False)


@pytest.mark.parametrize(
    "family,backbone,n_layers", [("hsto", "word", 1), ("sto", "word", 1), ("hsto", "bert", 3)]
)
@pytest.mark.parametrize("knob", ["tau1", "tau2", "both"])
def test_a_folded_grid_gives_each_value_the_numbers_of_its_own_call(
    family, backbone, n_layers, knob
):
    """The shipped shapes: a one-layer word net, noise in its only layer; a MiniLM-like encoder
    with noise in its last layer only. tau2 alone reuses the first value's noisy scores; tau1
    (H-STO) runs every value with tiled noise."""
    model = _model(family, backbone, n_layers, last_only=n_layers > 1)
    if knob == "both":
        grid = _grid(model, tau1=TAUS, tau2=TAUS[::-1])
    else:
        grid = _grid(model, **{knob: TAUS})
    assert folds(model, grid)
    _same_as_one_call_each(model, grid)
    _same_as_one_call_each(model, grid, memory_budget=1)  # one sample per chunk
    cache = PrefixCache(2**20)
    _same_as_one_call_each(model, grid, prefix_cache=cache, prefix_owner="m")
    assert cache.misses == 3  # the prefix computed once for the whole grid


def test_grids_that_cannot_fold_are_sampled_one_value_at_a_time():
    every_layer = _model("hsto", "word", n_layers=2)  # noise below the last layer
    grid = _grid(every_layer, tau2=TAUS)
    assert not folds(every_layer, grid)
    _same_as_one_call_each(every_layer, grid)
    one = _model("hsto")
    other = _grid(one, noise_scale=(0.5, 1.0))  # not a temperature
    assert not folds(one, other)
    _same_as_one_call_each(one, other)
    assert not folds(one, _grid(one, tau2=(2.0,)))  # one value: nothing to share
    mc = _model("mcdropout")
    assert not folds(mc, _grid(mc, tau=(1.0, 2.0)))


def test_an_empty_grid_or_a_bad_argument_is_refused():
    model = _model("hsto")
    with pytest.raises(ConfigError, match="at least one"):
        sample_grid(model, IDS, MASK, 5, 0, [])
    with pytest.raises(ConfigError, match="T"):
        sample_grid(model, IDS, MASK, 0, 0, _grid(model, tau2=TAUS))


def test_tiled_noise_repeats_each_draw_of_its_base():
    keys = example_keys(IDS, MASK)
    base = SampleNoise(7, 2, 3, 3, keys=keys)
    tiled = TiledNoise(SampleNoise(7, 2, 3, 3, keys=keys), 4)
    assert tiled.rows == 4 * base.rows
    for draw in (
        lambda n: n.neg_gumbel(2, 5),
        lambda n: n.uniform(6),
        lambda n: n.keep_mask(0.3, 4),
    ):
        one, many = draw(base), draw(tiled)
        assert many.shape == (4 * base.rows, *one.shape[1:])
        for g in range(4):
            assert torch.equal(many[g * base.rows : (g + 1) * base.rows], one)
    assert tiled.draws == base.draws == 3
    tiled.skip(2)
    base.skip(2)
    assert torch.equal(tiled.uniform(3)[: base.rows], base.uniform(3))
    with pytest.raises(ValueError, match="tiles"):
        TiledNoise(base, 0)
