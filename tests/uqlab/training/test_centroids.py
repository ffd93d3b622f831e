"""H-STO's k-means start (uqlab.training.centroids) reads keys on the model's device."""

from __future__ import annotations

import dataclasses

import pytest
import torch


def test_centroid_keys_are_read_on_the_model_device(monkeypatch):
    """H-STO's k-means start computes keys with token ids on the model's device (on an H100 the
    ids stayed on the CPU and the run crashed); the keys come back on the CPU for k-means. A
    model on the meta device stands for the GPU: the ids must reach it there."""
    from uqcore.build import build_model
    from uqcore.config import ModelConfig
    from uqlab.training.centroids import keys_of_layers

    cfg = ModelConfig(
        family="hsto", vocab_size=20, n_layers=1, n_heads=2, d_model=8, d_ff=16, max_len=8
    )
    model = build_model(cfg)
    keys = keys_of_layers(model, [(1, 5, 6), (1, 7)])
    assert keys[0].device.type == "cpu" and keys[0].shape == (5 * 2, 4)  # 5 tokens x 2 heads
    model.to("meta")
    seen = []
    embed = model._embed
    monkeypatch.setattr(model, "_embed", lambda ids, *a: seen.append(ids.device) or embed(ids, *a))
    with pytest.raises((RuntimeError, NotImplementedError)):  # meta tensors hold no values
        keys_of_layers(model, [(1, 5, 6), (1, 7)])
    assert seen == [torch.device("meta")]


@pytest.mark.parametrize("backbone", ["word", "llama"])
def test_keys_read_in_batches_equal_one_pass_and_only_the_asked_layers_run(backbone):
    """Issue 48: the k-means start read every layer's keys of 256 texts in one pass (6.5 GB
    above SmolLM2 at 256 tokens). Now the rows go a few at a time and the layers above the
    highest asked one never run: the keys are those of one pass, in the same order."""
    from uqcore.build import build_model
    from uqcore.config import ModelConfig
    from uqlab.training.centroids import keys_of_layers

    cfg = ModelConfig(
        family="hsto",
        backbone=backbone,
        vocab_size=30,
        n_layers=3,
        n_heads=2,
        d_model=8,
        d_ff=16,
        max_len=12,
        stochastic_layers=(1,),
    )
    if backbone == "llama":  # grouped: one key head for the two query heads
        cfg = cfg.replace(backbone_params=dataclasses.replace(cfg.backbone_params, n_kv_heads=1))
    torch.manual_seed(0)
    model = build_model(cfg).eval()
    rows = [(1, 5, 6), (1, 7), (1, 8, 9, 10, 11), (1, 4, 4, 4), (1, 12)]
    whole = keys_of_layers(model, rows, batch=len(rows))
    ran = []
    model.layers[2].register_forward_pre_hook(lambda *a: ran.append(2))
    some = keys_of_layers(model, rows, layers=[1], batch=2)
    assert list(some) == [1] and not ran  # layer 2 is above the asked one: never run
    torch.testing.assert_close(some[1], whole[1], atol=1e-6, rtol=0)
    assert whole[1].shape == (sum(map(len, rows)) * 2, 4)  # every query head's view
