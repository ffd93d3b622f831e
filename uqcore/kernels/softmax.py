"""Deterministic scaled softmax attention (TRANS, MC dropout, BayesFormer, ensemble members)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from uqcore.kernels.common import KernelOut, attend, key_mask, masked_scores


def softmax_attention(
    q: torch.Tensor,  # [N, H, L, d_h]
    k: torch.Tensor,  # [N, H, L, d_h]
    v: torch.Tensor,  # [N, H, L, d_h]
    mask: torch.Tensor,  # [N, L] bool, True = real token
    tau: float,
    *,
    need_weights: bool = True,
    fused: bool = True,
) -> KernelOut:
    """``softmax(Q K^T / tau) V`` with padded keys masked before the softmax.

    The output always comes from the fused ``F.scaled_dot_product_attention``, so it is
    bitwise the same whether or not weights are asked for. With ``need_weights`` the weights
    ``[N, H, L, L]`` are computed by the manual path as well (``manual_softmax_weights``);
    otherwise ``attn`` is None. ``fused=False`` computes everything on the manual path (needed
    under ``torch.vmap``, for which SDPA has no batching rule).
    """
    if not fused:
        attn = manual_softmax_weights(q, k, mask, tau)
        return KernelOut(out=attend(attn, v), attn=attn)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=key_mask(mask), scale=1.0 / tau)
    attn = manual_softmax_weights(q, k, mask, tau) if need_weights else None
    return KernelOut(out=out, attn=attn)


def manual_softmax_weights(
    q: torch.Tensor, k: torch.Tensor, mask: torch.Tensor, tau: float
) -> torch.Tensor:
    """``softmax(Q K^T / tau)`` over real keys. ``[N,H,L,d_h]`` x2 -> ``[N, H, L, L]``."""
    scores = torch.matmul(q, k.transpose(-1, -2)) / tau  # [N, H, L, L]
    return torch.softmax(masked_scores(scores, mask), dim=-1)
