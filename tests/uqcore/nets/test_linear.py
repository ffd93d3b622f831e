"""Linear layers (uqcore.nets.linear): the oneDNN and matmul kernels, low-rank adapters."""

from __future__ import annotations

import pytest
import torch

from uqcore.build import build_model
from uqcore.config import ModelConfig
from uqcore.exceptions import ConfigError
from uqcore.nets import linear as lin
from uqcore.nets.linear import AdapterConfig, LoRALinear, add_adapters, linear, merge_adapters


def test_a_fresh_adapter_changes_nothing_and_merging_keeps_the_function():
    torch.manual_seed(0)
    plain = torch.nn.Linear(6, 4)
    lora = LoRALinear(plain, rank=2, alpha=4.0)
    x = torch.randn(3, 6)
    assert torch.equal(lora(x), plain(x))  # B = 0
    with torch.no_grad():
        lora.lora_b.normal_()
    assert not torch.allclose(lora(x), plain(x))
    holder = torch.nn.Sequential()
    holder.add_module("qkv", lora)
    merged = merge_adapters(holder).qkv
    assert type(merged) is torch.nn.Linear and torch.allclose(merged(x), lora(x), atol=1e-6)
    assert not lora.weight.requires_grad and lora.lora_a.requires_grad


def test_adapters_go_on_the_named_layers_only():
    cfg = ModelConfig(
        family="trans", n_layers=1, n_heads=2, d_model=8, d_ff=16, vocab_size=20, max_len=8
    )
    model = add_adapters(build_model(cfg), AdapterConfig(rank=2, targets=("qkv",)))
    kinds = {
        n: type(m).__name__
        for n, m in model.named_modules()
        if n.split(".")[-1] in ("qkv", "proj", "ff1", "head")
    }
    assert kinds == {
        "layers.0.attn.qkv": "LoRALinear",
        "layers.0.attn.proj": "Linear",
        "layers.0.ff1": "Linear",
        "head": "Linear",
    }
    with pytest.raises(ConfigError, match="adapters.targets"):
        cfg.replace(adapters=AdapterConfig(targets=("embed",)))


def test_linear_kernels_agree():
    """The oneDNN path (large inputs, no grad) and the matmul path compute the same function."""
    torch.manual_seed(0)
    layer = torch.nn.Linear(16, 24)
    x = torch.randn(300, 16)
    with torch.no_grad():
        fast = linear(x, layer, relu=True)
    with torch.enable_grad():
        plain = linear(x, layer, relu=True)
    assert torch.allclose(fast, plain, atol=1e-5)
    assert torch.allclose(plain, torch.relu(layer(x)), atol=1e-5)


def test_the_cpu_fast_path_is_never_taken_for_other_devices(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("oneDNN's CPU kernel was called for a non-CPU tensor")

    monkeypatch.setattr(lin, "_ONEDNN", refuse)
    layer = torch.nn.Linear(8, 4, device="meta")
    with torch.no_grad():
        out = lin.linear(torch.empty(500, 8, device="meta"), layer, relu=True)
    assert out.shape == (500, 4) and out.device.type == "meta"
