"""Pieces shared by every attention kernel: the output record and key masking."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class KernelOut:
    """What a kernel returns.

    ``out``: ``[N, H, L, d_h]`` attended values (None if the caller asked for weights only).
    ``attn``: ``[N, H, L, L]`` the attention weights actually used (rows sum to 1 over real
    keys, 0 on padded keys). ``extras``: named intermediates for the app (centroid
    assignments, prior, posterior mean, attention before EM, KL per head), each documented by
    the kernel that fills it.
    """

    out: torch.Tensor | None
    attn: torch.Tensor | None
    extras: dict[str, torch.Tensor] = field(default_factory=dict)


def key_mask(mask: torch.Tensor) -> torch.Tensor:
    """``[N, L]`` bool -> ``[N, 1, 1, L]`` broadcastable over heads and queries."""
    return mask[:, None, None, :]


def scores_plus(
    q: torch.Tensor,  # [N, H, Lq, d_h]
    k: torch.Tensor,  # [N, H, Lk, d_h]
    mask: torch.Tensor,  # [N, Lk]
    tau: float,
    noise_term: torch.Tensor | None = None,  # [N, H, Lq, Lk]
    noise_alpha: float = 0.0,
) -> torch.Tensor:
    """``(Q K^T + noise_alpha * noise_term) / tau`` with padded keys at ``-inf``, in one
    ``baddbmm`` whose additive input carries the noise and the mask. -> ``[N, H, Lq, Lk]``"""
    n, h, lq, d = q.shape
    lk = k.shape[2]
    bias = torch.zeros(n, 1, 1, lk, dtype=q.dtype, device=q.device)
    bias = bias.masked_fill_(~key_mask(mask), float("-inf"))  # [N, 1, 1, Lk]
    if noise_term is not None:
        base = torch.add(bias, noise_term, alpha=noise_alpha).view(n * h, lq, lk)
    else:
        base = bias.expand(n, h, 1, lk).reshape(n * h, 1, lk)
    qs = q.reshape(n * h, lq, d)
    ks = k.reshape(n * h, lk, d).transpose(1, 2)
    scores = torch.baddbmm(base, qs, ks, beta=1.0 / tau, alpha=1.0 / tau)  # [N*H, Lq, Lk]
    return scores.view(n, h, lq, lk)


def attend(weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``[N,H,L,L] @ [N,H,L,d_h] -> [N,H,L,d_h]``."""
    return torch.matmul(weights, v)
