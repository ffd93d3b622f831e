"""Pieces shared by every attention kernel: the output record and key masking."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class KernelOut:
    """What a kernel returns.

    ``out``: ``[N, H, L, d_h]`` attended values. ``attn``: ``[N, H, L, L]`` the attention
    weights actually used (rows sum to 1 over real keys, 0 on padded keys). ``extras``: named
    intermediates for the app (centroid assignments, prior, posterior mean, attention before EM,
    KL per head), each documented by the kernel that fills it.
    """

    out: torch.Tensor
    attn: torch.Tensor | None
    extras: dict[str, torch.Tensor] = field(default_factory=dict)


def key_mask(mask: torch.Tensor) -> torch.Tensor:
    """``[N, L]`` bool -> ``[N, 1, 1, L]`` broadcastable over heads and queries."""
    return mask[:, None, None, :]


def masked_scores(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Set scores of padded keys to ``-inf`` *before* normalisation. ``[N,H,L,L]`` -> same."""
    return scores.masked_fill(~key_mask(mask), float("-inf"))


def masked_log_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log-softmax over keys with padded keys at ``-inf``. ``[N,H,L,L]`` -> same."""
    return torch.log_softmax(masked_scores(scores, mask), dim=-1)


def attend(weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``[N,H,L,L] @ [N,H,L,d_h] -> [N,H,L,d_h]``."""
    return torch.matmul(weights, v)
