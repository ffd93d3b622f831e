"""H-STO's k-means start (uqlab.training.centroids) reads keys on the model's device."""

from __future__ import annotations

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
