"""Resumable training state (uqlab.training.resume): frozen tensors are not written, and a
resumed model and its best weights are whole again."""

from __future__ import annotations

import pytest
import torch
from safetensors import safe_open
from torch import nn

from uqcore.exceptions import CheckpointError
from uqlab.training.resume import TENSORS, Progress, load_state, save_state


def _model(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 2))
    model[0].weight.requires_grad_(False)  # a "base" weight that never trains
    return model


def test_frozen_weights_are_not_saved_and_resuming_restores_the_rest(tmp_path):
    model = _model(0)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad])
    model(torch.ones(3, 4)).sum().backward()
    opt.step()
    best = {k: v.clone() for k, v in model.state_dict().items()}
    save_state(tmp_path, model, best, opt, Progress(epoch=1), {"a": 1})
    with safe_open(str(tmp_path / TENSORS), "pt") as f:
        stored = set(f.keys())
    assert "model.0.weight" not in stored and "best.0.weight" not in stored
    assert {"model.0.bias", "model.1.weight", "best.1.bias"} <= stored

    other = _model(0)  # the same base (same seed); trainable tensors differ until loaded
    other[1].weight.data.zero_()
    opt2 = torch.optim.Adam([p for p in other.parameters() if p.requires_grad])
    progress, best2 = load_state(tmp_path, other, opt2, {"a": 1})
    assert progress.epoch == 1
    for k, v in model.state_dict().items():
        assert torch.equal(other.state_dict()[k], v), k
        assert torch.equal(best2[k], best[k]), k


def test_a_state_of_another_model_is_refused(tmp_path):
    model = _model(0)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad])
    save_state(tmp_path, model, None, opt, Progress(), {"a": 1})
    bigger = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 2), nn.Linear(2, 2))
    with pytest.raises(CheckpointError, match="does not fit this model"):
        load_state(tmp_path, bigger, torch.optim.Adam(bigger.parameters()), {"a": 1})
