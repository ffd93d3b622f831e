"""The weight posterior (uqcore.nets.posterior): what it covers, its draws, its checkpoint."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from uqcore.build import build_model, frozen_names
from uqcore.checkpoint import load_checkpoint, save_checkpoint
from uqcore.config import ModelConfig
from uqcore.exceptions import ConfigError
from uqcore.nets.linear import LoRALinear
from uqcore.nets.posterior import POSTERIOR, draw_key, posterior_of
from uqcore.text.vocab import Vocab


def _cfg(**kw) -> ModelConfig:
    base = dict(family="laplace", vocab_size=40, num_classes=3, max_len=12, n_layers=2)
    return ModelConfig(**{**base, "n_heads": 2, "d_model": 16, "d_ff": 32, **kw})


def _fitted(cfg: ModelConfig, seed: int = 0):
    torch.manual_seed(seed)
    model = build_model(cfg)
    post = posterior_of(model)
    post.set_curvature({n: torch.rand(post.curvature(n).shape) * 50 for n in post.names})
    return model


def test_it_covers_what_training_makes_and_nothing_else():
    model = build_model(_cfg())
    post = posterior_of(model)
    assert set(post.names) == {n for n, _ in model.named_parameters()}  # word-level: all
    assert all(float(post.curvature(n).abs().sum()) == 0 for n in post.names)  # not yet fitted
    shape = {"vocab_size": 50, "max_len": 16, "n_layers": 2, "n_heads": 2, "d_model": 16}
    bert = ModelConfig(
        family="laplace", backbone="bert", num_classes=2, d_ff=32, adapters={"rank": 2}, **shape
    )
    names = posterior_of(build_model(bert)).names
    assert names and not set(names) & frozen_names(bert)  # never the frozen base
    assert any(n.endswith("lora_a") for n in names) and any(n.endswith("lora_b") for n in names)
    assert posterior_of(build_model(_cfg(family="trans"))) is None


def test_draws_are_seeded_scaled_and_centred_on_the_trained_weights():
    model = _fitted(_cfg())
    post, trained = posterior_of(model), dict(model.named_parameters())
    one = post.draw(trained, 10.0, seed=3, index=5, scale=1.0)
    again = post.draw(trained, 10.0, seed=3, index=5, scale=1.0)
    assert all(torch.equal(one[n], again[n]) for n in post.names)
    other = post.draw(trained, 10.0, seed=3, index=6, scale=1.0)
    assert not all(torch.equal(one[n], other[n]) for n in post.names)
    zero = post.draw(trained, 10.0, seed=3, index=5, scale=0.0)
    assert all(torch.equal(zero[n], trained[n]) for n in post.names)
    half = post.draw(trained, 10.0, seed=3, index=5, scale=0.5)
    for n in post.names:  # the deviation is scale * eps * (H + delta)^-1/2
        torch.testing.assert_close(half[n] - trained[n], 0.5 * (one[n] - trained[n]))
    name = post.names[0]
    eps = (one[name] - trained[name]) / post.std(name, 10.0)
    gen = torch.Generator().manual_seed(draw_key(3, 5))
    torch.testing.assert_close(eps, torch.randn(trained[name].shape, generator=gen))
    assert draw_key(3, 5) != draw_key(5, 3)


def test_a_bad_curvature_is_refused():
    post = posterior_of(build_model(_cfg()))
    good = {n: torch.ones(post.curvature(n).shape) for n in post.names}
    with pytest.raises(ValueError, match="finite"):
        post.set_curvature({**good, post.names[0]: -good[post.names[0]]})
    with pytest.raises(ValueError, match="expected"):
        post.set_curvature(dict(list(good.items())[1:]))


def test_the_posterior_travels_in_the_checkpoint(tmp_path):
    cfg = _cfg(adapters={"rank": 2}).replace(attention={"prior_precision": 7.5, "fit_rows": 30})
    model = _fitted(cfg)
    vocab = Vocab.build(["a b c"], max_size=cfg.vocab_size)
    save_checkpoint(tmp_path / "ck", model, cfg, vocab)
    ck = load_checkpoint(tmp_path / "ck")
    assert ck.config.attention.prior_precision == 7.5 and ck.config.attention.fit_rows == 30
    loaded, post = posterior_of(ck.model), posterior_of(model)
    assert loaded.names == post.names
    assert all(torch.equal(loaded.curvature(n), post.curvature(n)) for n in post.names)
    assert any(isinstance(m, LoRALinear) for m in ck.model.modules())  # kept apart: drawn
    assert any(k.startswith(f"{POSTERIOR}.") for k in ck.model.state_dict())


def test_the_posterior_has_a_file_of_its_own_in_16_bits_when_asked(tmp_path):
    from safetensors import safe_open

    from uqcore.checkpoint import POSTERIOR_FILE, WEIGHTS_FILE
    from uqcore.exceptions import CheckpointError

    cfg = _cfg()
    model = _fitted(cfg)
    vocab = Vocab.build(["a b c"], max_size=cfg.vocab_size)
    save_checkpoint(tmp_path / "ck", model, cfg, vocab, dtype=torch.float16)
    with safe_open(str(tmp_path / "ck" / WEIGHTS_FILE), "pt") as f:
        assert not any(k.startswith(POSTERIOR) for k in f.keys())  # the weights alone
    with safe_open(str(tmp_path / "ck" / POSTERIOR_FILE), "pt") as f:
        kinds = {f.get_slice(k).get_dtype() for k in f.keys()}
        assert kinds == {"BF16"}  # a curvature's range, which float16 would overflow
    loaded = posterior_of(load_checkpoint(tmp_path / "ck").model)
    for n in loaded.names:
        want = posterior_of(model).curvature(n).to(torch.bfloat16).float()
        assert torch.equal(loaded.curvature(n), want)
    (tmp_path / "ck" / POSTERIOR_FILE).unlink()
    with pytest.raises(CheckpointError, match=POSTERIOR_FILE):
        load_checkpoint(tmp_path / "ck")


def test_from_block_covers_that_block_up_and_the_head_only(tmp_path):
    """A subnetwork posterior: the blocks below ``from_block`` and the embeddings keep their
    trained weights in every draw (no curvature buffer of theirs), so they run once per text."""
    whole = posterior_of(build_model(_cfg(n_layers=3))).names
    cfg = _cfg(n_layers=3).replace(attention={"from_block": 2})
    model = _fitted(cfg)
    names = posterior_of(model).names
    assert set(names) == {n for n in whole if n.startswith(("layers.2.", "head."))}
    assert {"head.weight", "head.bias"} <= set(names)
    trained = dict(model.named_parameters())
    drawn = posterior_of(model).draw(trained, 1.0, seed=0, index=0, scale=1.0)
    assert set(drawn) == set(names)  # nothing below block 2 is drawn
    vocab = Vocab.build(["a b c"], max_size=cfg.vocab_size)  # it travels in the checkpoint
    save_checkpoint(tmp_path / "ck", model, cfg, vocab)
    ck = load_checkpoint(tmp_path / "ck")
    assert ck.config.attention.from_block == 2 and posterior_of(ck.model).names == names
    llama = dict(vocab_size=50, max_len=16, n_layers=3, n_heads=2, d_model=16, d_ff=32)
    dec = ModelConfig(family="laplace", backbone="llama", num_classes=2, **llama)
    grouped = dataclasses.replace(dec.backbone_params, n_kv_heads=1)
    dec = dec.replace(backbone_params=grouped, adapters={"rank": 2}, attention={"from_block": 1})
    got = posterior_of(build_model(dec)).names
    assert got and all(n.startswith(("layers.1.", "layers.2.", "head.")) for n in got)
    assert any(n.startswith("layers.1.") and n.endswith("lora_a") for n in got)


@pytest.mark.parametrize("bad", [3, 7, -1, True, 1.5, "2"])
def test_a_from_block_the_model_does_not_have_is_refused(bad):
    with pytest.raises(ConfigError, match="from_block"):
        _cfg(n_layers=3).replace(attention={"from_block": bad})
    stored = _cfg(n_layers=3).to_dict()  # a hostile config.json: refused when read too
    stored["attention"]["from_block"] = bad
    with pytest.raises(ConfigError, match="from_block"):
        ModelConfig.from_dict(stored)
