"""Deterministic scaled softmax attention (TRANS, MC dropout, BayesFormer, ensemble members)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from uqcore.kernels.common import (
    AttentionKernel,
    KernelOut,
    KernelRequest,
    attend,
    key_mask,
    scores_plus,
    softmax_last,
)
from uqcore.nets.maps import LayerMaps

FUSED_MIN_LEN = 128  # below this, CPU SDPA is slower than the manual path


def softmax_attention(
    q: torch.Tensor,  # [N, H, L, d_h]
    k: torch.Tensor,  # [N, H, L, d_h]
    v: torch.Tensor,  # [N, H, L, d_h]
    mask: torch.Tensor,  # [N, L] bool, True = real token
    tau: float,
    *,
    need_weights: bool = True,
    need_output: bool = True,
    fused: bool = True,
) -> KernelOut:
    """``softmax(Q K^T / tau) V`` with padded keys masked before the softmax.

    The path depends only on ``fused`` and the length, never on ``need_weights``, so asking for
    the weights does not change the output. From ``FUSED_MIN_LEN`` tokens the output comes from
    ``F.scaled_dot_product_attention`` (less memory; the weights, if asked, are computed beside
    it); shorter inputs use the manual path, which is faster there on CPU. ``fused=False``
    forces the manual path (needed under ``torch.vmap``: SDPA has no batching rule there).
    ``need_output=False`` returns only the weights (``out`` is None), for callers that drop
    some of them before attending.
    """
    if not need_output:
        return KernelOut(None, LayerMaps(attention=manual_softmax_weights(q, k, mask, tau)))
    if not fused or q.shape[-2] < FUSED_MIN_LEN:
        attn = manual_softmax_weights(q, k, mask, tau)
        return KernelOut(attend(attn, v), LayerMaps(attention=attn))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=key_mask(mask), scale=1.0 / tau)
    attn = manual_softmax_weights(q, k, mask, tau) if need_weights else None
    return KernelOut(out, LayerMaps(attention=attn))


def manual_softmax_weights(
    q: torch.Tensor, k: torch.Tensor, mask: torch.Tensor, tau: float
) -> torch.Tensor:
    """``softmax(Q K^T / tau)`` over real keys. ``[N,H,L,d_h]`` x2 -> ``[N, H, L, L]``."""
    return softmax_last(scores_plus(q, k, mask, tau))


@dataclass(frozen=True)
class NoParams:
    """Attention without structural hyper-parameters of its own (softmax families)."""


def bind_softmax(params: NoParams) -> AttentionKernel:
    """TRANS, MC dropout, ensemble members and BayesFormer: ``softmax(Q K^T / tau)``."""

    def kernel(q, k, v, mask, s, noise, weights, req: KernelRequest) -> KernelOut:
        return softmax_attention(
            q,
            k,
            v,
            mask,
            s.tau,
            need_weights=req.weights,
            need_output=req.output,
            fused=s.fused_attention,
        )

    return kernel
