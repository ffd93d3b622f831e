"""The library's linear layers: :func:`linear`, the one call every projection goes through, and
their low-rank adapters (LoRA, Hu et al. 2021), which :func:`linear` computes too.

:func:`linear` picks the fastest CPU kernel for the size (oneDNN's fused linear + ReLU from
:data:`ONEDNN_MIN_ROWS` rows without gradients, else a matmul plus in-place bias);
:func:`matmul_linear_only` turns the oneDNN path off within a block (FLOP counters, ``vmap``).

``LoRALinear`` keeps a frozen base ``weight [out, in]`` and ``bias [out]`` and adds a trainable
update ``(alpha / r) * B A`` with ``A [r, in]`` and ``B [out, r]``; ``B`` starts at zero, so a
fresh adapter changes nothing. :func:`add_adapters` swaps the named ``nn.Linear`` modules of a
model for adapters in place; :func:`merge_adapters` folds each update into its weight and swaps
back to ``nn.Linear``, so inference costs what the base model costs.

Why not ``peft``: the library's layers call their weights directly (oneDNN's fused linear in
:func:`linear`, BayesFormer's per-head masked projection), which a wrapped module's
``forward`` would not reach; ``peft`` would also bring ``transformers`` and ``accelerate`` into
the app's runtime, and its LoRA dropout draws from the global random generator, where every draw
here comes from the caller's seeded streams. The adapters below are the 60 lines those reasons need.
"""

from __future__ import annotations

import contextlib
import math
import threading
from dataclasses import dataclass

import torch
from torch import nn


def linear(x: torch.Tensor, layer: nn.Linear, relu: bool = False) -> torch.Tensor:
    """``layer(x)``, then ReLU if asked, with the fastest CPU kernel for the size.

    Without gradients and from ``ONEDNN_MIN_ROWS`` rows, oneDNN's fused linear (+ ReLU) kernel
    (the one PyTorch's compiler uses on CPU) is 10-20% faster and saves a pass over the output;
    otherwise a matmul plus in-place bias (and ReLU). Both compute the same function; they may
    differ in the last bits, which is why the choice depends on the size only. The oneDNN op
    exists for CPU tensors only: any other device (CUDA) always takes the matmul path.
    """
    if isinstance(layer, LoRALinear):  # base path, then the low-rank update, then ReLU
        out = torch.matmul(x, layer.weight.t())
        out = (out if layer.bias is None else out.add_(layer.bias)) + layer.delta(x)
        return torch.relu_(out) if relu else out
    rows = x.numel() // x.shape[-1]
    fast = _ONEDNN is not None and not getattr(_ONEDNN_STATE, "off", False)
    if fast and rows >= ONEDNN_MIN_ROWS and x.device.type == "cpu" and not torch.is_grad_enabled():
        return _ONEDNN(x, layer.weight, layer.bias, "relu" if relu else "none", [], "")
    out = torch.matmul(x, layer.weight.t())
    out = out if layer.bias is None else out.add_(layer.bias)  # a decoder's may have none
    return torch.relu_(out) if relu else out


ONEDNN_MIN_ROWS = 128  # measured crossover on a 2-core AVX-512 CPU (docs/performance.md)
_ONEDNN_STATE = threading.local()


@contextlib.contextmanager
def matmul_linear_only():
    """Within this block (this thread only), ``linear`` always takes the plain matmul path.
    For tools that trace aten matmuls, such as FLOP counters, which do not see oneDNN ops."""
    before = getattr(_ONEDNN_STATE, "off", False)
    _ONEDNN_STATE.off = True
    try:
        yield
    finally:
        _ONEDNN_STATE.off = before


_ONEDNN = (
    getattr(torch.ops.mkldnn, "_linear_pointwise", None)
    if torch.backends.mkldnn.is_available()
    else None
)


@dataclass(frozen=True)
class AdapterConfig:
    """Rank ``rank`` adapters with scale ``alpha / rank`` on every linear layer whose name ends
    with one of ``targets`` (``qkv``, ``proj``: attention; ``ff1``, ``ff2``: the FFN; a
    decoder's ``ff_gate``), in the blocks ``layers`` only (None: every block)."""

    rank: int = 8
    alpha: float = 16.0
    targets: tuple[str, ...] = ("qkv", "proj", "ff1", "ff2")
    layers: tuple[int, ...] | None = None

    def to_dict(self) -> dict:
        """As config.json stores it (``layers`` only when set: older files stay the same)."""
        out = {"rank": self.rank, "alpha": self.alpha, "targets": list(self.targets)}
        return out if self.layers is None else {**out, "layers": list(self.layers)}


class LoRALinear(nn.Module):
    """``x W^T + b + (alpha / r) (x A^T) B^T`` with ``W``, ``b`` frozen (see the module doc)."""

    def __init__(self, base: nn.Linear, rank: int, alpha: float):
        super().__init__()
        self.weight = nn.Parameter(base.weight.detach(), requires_grad=False)  # [out, in]
        bias = None if base.bias is None else nn.Parameter(base.bias.detach(), requires_grad=False)
        self.bias = bias  # [out] (a decoder's projections may have none)
        self.lora_a = nn.Parameter(torch.empty(rank, base.in_features))  # [r, in]
        nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))  # as nn.Linear (and LoRA) do
        self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank))
        self.scale = alpha / rank

    @property
    def in_features(self) -> int:
        return self.weight.shape[1]

    def merged_weight(self) -> torch.Tensor:
        """``W + (alpha / r) B A`` ``[out, in]`` (differentiable in A and B)."""
        return torch.addmm(self.weight, self.lora_b, self.lora_a, alpha=self.scale)

    def delta(self, x: torch.Tensor) -> torch.Tensor:
        """The update's output ``(alpha / r) (x A^T) B^T``: ``[..., in]`` -> ``[..., out]``."""
        return torch.matmul(torch.matmul(x, self.lora_a.t()), self.lora_b.t()).mul_(self.scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self)


def add_adapters(model: nn.Module, cfg: AdapterConfig) -> nn.Module:
    """Replace every ``nn.Linear`` named ``...<target>`` (in the blocks ``layers.<i>.`` that
    ``cfg.layers`` lists, or anywhere when None) by a :class:`LoRALinear` around it."""
    for path, module in list(model.named_modules()):
        parts = path.split(".")
        block = int(parts[1]) if len(parts) > 1 and parts[0] == "layers" else None
        if cfg.layers is not None and block not in cfg.layers:
            continue
        for child_name, child in list(module.named_children()):
            if type(child) is nn.Linear and child_name in cfg.targets:
                setattr(module, child_name, LoRALinear(child, cfg.rank, cfg.alpha))
    return model


def merge_adapters(model: nn.Module) -> nn.Module:
    """Fold every adapter into its weight and swap it back for an ``nn.Linear`` (inference)."""
    for module in list(model.modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, LoRALinear):
                has_bias = child.bias is not None
                plain = nn.Linear(child.in_features, child.weight.shape[0], bias=has_bias)
                with torch.no_grad():
                    plain.weight.copy_(child.merged_weight())
                    if has_bias:
                        plain.bias.copy_(child.bias)
                setattr(module, child_name, plain)
    return model
