"""A decoder through the sampler: the layers below the first stochastic one run once (with or
without a prefix cache) and give the numbers of a full pass per sample; samples do not depend on
the batch around an example; adapters (no biases) train and merge; a tiny decoder checkpoint on
a local base saves, loads strictly and samples the same."""

from __future__ import annotations

import pytest
import torch

from uqcore.build import build_model
from uqcore.config import ModelConfig
from uqcore.inference.prefix import PrefixCache
from uqcore.inference.sampling import Capture, sample
from uqcore.nets.linear import AdapterConfig, LoRALinear, add_adapters, merge_adapters
from uqcore.nets.noise import SampleNoise
from uqcore.settings import SamplingSettings, resolve


def _cfg(family: str = "hsto", **extra) -> ModelConfig:
    data = {
        "family": family,
        "backbone": "llama",
        "vocab_size": 60,
        "max_len": 32,
        "n_layers": 3,
        "n_heads": 4,
        "d_model": 32,
        "d_ff": 64,
        "backbone_params": {"n_kv_heads": 2},
        "stochastic_layers": [2],
        **extra,
    }
    return ModelConfig.from_dict(data)


def _batch() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(3)
    ids = torch.randint(3, 60, (3, 9), generator=g)
    mask = torch.ones_like(ids, dtype=torch.bool)
    mask[1, 6:] = False  # right padding: the sampler's layout
    mask[2, 4:] = False
    return ids, mask


@pytest.mark.parametrize("family", ["hsto", "sto", "bam"])
def test_shared_lower_layers_and_the_prefix_give_a_full_pass_per_sample(family):
    torch.manual_seed(0)
    model = build_model(_cfg(family))
    assert model.cfg.first_stochastic_layer == 2
    ids, mask = _batch()
    s = resolve(model.cfg, SamplingSettings(tau2=0.7))
    count = 4
    rows_ids, rows_mask = ids.repeat(count, 1), mask.repeat(count, 1)
    with torch.no_grad():
        full = model(rows_ids, rows_mask, s, SampleNoise(5, 0, count, 3), repeats=1)
        shared = model(rows_ids, rows_mask, s, SampleNoise(5, 0, count, 3), repeats=count)
        prefix = model.prefix_states(ids, mask, s)
        given = model(
            rows_ids, rows_mask, s, SampleNoise(5, 0, count, 3), repeats=count, prefix=prefix
        )
    # noise is keyed by row, so 'full' (each row its own copy) draws what the others draw
    torch.testing.assert_close(shared.logits, full.logits, atol=1e-5, rtol=0)
    torch.testing.assert_close(given.logits, full.logits, atol=1e-5, rtol=0)
    assert not torch.allclose(full.logits[:3], full.logits[3:6])  # the samples differ


def test_sampler_with_a_prefix_cache_equals_the_sampler_without():
    torch.manual_seed(0)
    model = build_model(_cfg())
    ids, mask = _batch()
    cache = PrefixCache(2**24)
    plain = sample(model, ids, mask, 6, seed=2)
    cached = sample(model, ids, mask, 6, seed=2, prefix_cache=cache, prefix_owner="m")
    again = sample(model, ids, mask, 6, seed=2, prefix_cache=cache, prefix_owner="m")
    torch.testing.assert_close(cached.probs, plain.probs, atol=1e-6, rtol=0)
    torch.testing.assert_close(again.probs, plain.probs, atol=1e-6, rtol=0)
    assert cache.misses == 3 and cache.hits == 3
    assert plain.probs.std(0).max() > 1e-4  # stochastic


def test_an_example_alone_gets_its_row_of_a_batch():
    torch.manual_seed(0)
    model = build_model(_cfg())
    ids, mask = _batch()
    batch = sample(model, ids, mask, 5, seed=9, capture=Capture(layers=(2,)))
    n = int(mask[1].sum())
    alone = sample(model, ids[1:2, :n], mask[1:2, :n], 5, seed=9, capture=Capture(layers=(2,)))
    torch.testing.assert_close(alone.probs[:, 0], batch.probs[:, 1], atol=1e-5, rtol=0)
    att = batch.maps[2].attention[:, 1, :, :n, :n]  # [T, H, n, n]
    torch.testing.assert_close(alone.maps[2].attention[:, 0], att, atol=1e-5, rtol=0)
    upper = torch.ones(n, n, dtype=torch.bool).triu(1)
    assert float(att[..., upper].abs().max()) == 0.0  # causal


def test_adapters_on_bias_free_projections_train_and_merge():
    torch.manual_seed(0)
    cfg = _cfg("trans", adapters={"rank": 2, "targets": ["qkv", "ff_gate"], "layers": [1, 2]})
    model = build_model(cfg)
    adapted = [n for n, m in model.named_modules() if isinstance(m, LoRALinear)]
    assert adapted == [
        "layers.1.attn.qkv",
        "layers.1.ff_gate",
        "layers.2.attn.qkv",
        "layers.2.ff_gate",
    ]
    assert all(m.bias is None for n, m in model.named_modules() if n in adapted)
    ids, mask = _batch()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, LoRALinear):
                m.lora_b.normal_()
        before = model(ids, mask).logits
        merge_adapters(model)
        after = model(ids, mask).logits
    torch.testing.assert_close(after, before, atol=1e-5, rtol=0)
    assert cfg.to_dict()["adapters"]["layers"] == [1, 2]
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg


def test_adapter_layers_are_checked():
    with pytest.raises(ValueError, match="adapters.layers"):
        _cfg(adapters={"rank": 2, "layers": [3]}).validate()
    plain = torch.nn.Sequential()
    assert add_adapters(plain, AdapterConfig(layers=(0,))) is plain


def test_dropout_runs_every_row_and_stays_finite():
    torch.manual_seed(0)
    model = build_model(_cfg("mcdropout", stochastic_layers=None))
    ids, mask = _batch()
    assert resolve(model.cfg).drop_p > 0
    got = sample(model, ids, mask, 4, seed=1)
    assert bool(torch.isfinite(got.probs).all()) and got.probs.std(0).max() > 1e-4


def test_a_laplace_decoder_draws_its_top_blocks_from_one_shared_pass():
    """Issue 47: adapters in the top blocks only (as the SmolLM2 checkpoints): the blocks below
    run once for every weight draw, and the samples equal those of a full pass each."""
    from uqcore.inference.sampling import Capture, sample
    from uqcore.nets.posterior import drawn_blocks, posterior_of

    cfg = _cfg("laplace", stochastic_layers=None, adapters={"rank": 2, "layers": [1, 2]})
    cfg = cfg.replace(attention={"prior_precision": 4.0})
    frozen = build_model(cfg)
    names = posterior_of(frozen).names
    blocks = drawn_blocks(names, cfg.n_layers)
    assert blocks == (1, 2) and not any(n.startswith("layers.0.") for n in names)
    torch.manual_seed(0)
    model = build_model(cfg.replace(stochastic_layers=list(blocks)))
    for name, p in model.named_parameters():  # B starts at 0: a direction for the draws
        if name.endswith("lora_b"):
            torch.nn.init.normal_(p, std=0.2)
    ids, mask = _batch()
    shared = sample(model, ids, mask, T=5, seed=2)  # from the prefix below block 1
    full = sample(model, ids, mask, T=5, seed=2, capture=Capture(layers=(0,)))  # no prefix
    torch.testing.assert_close(shared.probs, full.probs, atol=1e-5, rtol=0)
    assert shared.probs.std(0).max() > 1e-3  # the draws differ
    assert drawn_blocks(("embed_norm.weight", "layers.1.x.lora_a"), 3) is None  # below: none
    assert drawn_blocks(("head.weight", "head.bias"), 3) == (2,)  # the head alone: the top block
