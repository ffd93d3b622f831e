"""Rotary position embeddings (RoPE, Su et al. 2021) as the Llama family applies them.

Position ``m`` turns each pair ``(x_i, x_{i + d/2})`` of a query or key by the angle
``m * theta^(-2i/d)``; the score ``q_m . k_n`` then depends on ``m - n`` only, so shifting every
position by one constant (left padding counted or not) leaves the attention unchanged.
:func:`rotary_tables` gives the cos / sin tables once per forward pass; :func:`apply_rotary` is
called by :class:`uqcore.nets.layers.MultiHeadAttention` on ``q`` and ``k`` before the scores.
"""

from __future__ import annotations

import torch


def rotary_tables(
    positions: torch.Tensor,  # [N, L] long
    d_head: int,
    theta: float,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(cos, sin)``, each ``[N, L, d_head]``: the half-split layout of Hugging Face's
    ``rotate_half`` (the frequencies repeated over the two halves), computed in float32."""
    inv_freq = 1.0 / theta ** (
        torch.arange(0, d_head, 2, device=positions.device, dtype=torch.float32) / d_head
    )  # [d_h / 2]
    freqs = positions.float()[:, :, None] * inv_freq  # [N, L, d_h / 2]
    emb = torch.cat([freqs, freqs], dim=-1)  # [N, L, d_h]
    return emb.cos().to(dtype), emb.sin().to(dtype)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    """``[..., d]`` -> ``cat(-x2, x1)`` with ``x1, x2`` the two halves."""
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def apply_rotary(
    x: torch.Tensor,  # [N, H, L, d_h]
    cos: torch.Tensor,  # [N, L, d_h]
    sin: torch.Tensor,  # [N, L, d_h]
) -> torch.Tensor:
    """``x`` turned by its rows' positions: ``x cos + rotate_half(x) sin``, ``[N, H, L, d_h]``."""
    return x * cos[:, None] + _rotate_half(x) * sin[:, None]
