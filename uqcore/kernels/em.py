"""Probabilistic Transformer attention with inference-time EM key adaptation.

Attention is ``w_ij ∝ exp(alpha * xi_j^T q_i)`` (the beta -> 0 limit of Movellan & Gabbur's
Gaussian-mixture view, i.e. standard attention with ``alpha = 1/tau``). EM adapts the keys to
the queries of the input, starting from the trained keys ``xi^0``:
``xi_k <- (theta * xi_k^0 + alpha * sum_i w_ik q_i) / (theta + alpha * sum_i w_ik)``,
repeated ``n`` times with ``w`` recomputed from the current keys; ``theta`` is the prior
precision (large = keys stay put). With ``n = 0`` this is plain attention.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from uqcore.kernels.common import (
    AttentionKernel,
    KernelOut,
    KernelRequest,
    attend,
    query_rows,
    scores_plus,
    softmax_last,
)
from uqcore.nets.maps import LayerMaps


def _weights(q: torch.Tensor, xi: torch.Tensor, mask: torch.Tensor, alpha: float) -> torch.Tensor:
    return softmax_last(scores_plus(q, xi, mask, 1.0 / alpha))  # [N, H, L, L]


def em_adapt_keys(
    q: torch.Tensor,  # [N, H, L, d_h]
    k: torch.Tensor,  # [N, H, L, d_h] trained keys xi^0
    mask: torch.Tensor,  # [N, L]
    alpha: float,
    theta: float,
    iterations: int,
) -> torch.Tensor:
    """Return adapted keys ``[N, H, L, d_h]``; only real queries contribute to the M-step."""
    if iterations < 0:
        raise ValueError(f"EM iterations must be >= 0, got {iterations}.")
    qmask = query_rows(mask)[:, None, :, None].to(q.dtype)  # [N, 1, L, 1]
    xi = k
    for _ in range(iterations):
        w = _weights(q, xi, mask, alpha) * qmask  # [N, H, Lq, Lk], padded queries zeroed
        resp = w.sum(dim=-2)  # [N, H, Lk] responsibility mass per key
        pulled = torch.matmul(w.transpose(-1, -2), q)  # [N, H, Lk, d_h]
        xi = (theta * k + alpha * pulled) / (theta + alpha * resp).unsqueeze(-1)
    return xi


def probtrans_attention(
    q: torch.Tensor,  # [N, H, L, d_h]
    k: torch.Tensor,  # [N, H, L, d_h]
    v: torch.Tensor,  # [N, H, L, d_h]
    mask: torch.Tensor,  # [N, L]
    alpha: float,
    theta: float,
    iterations: int,
    *,
    keep_prior: bool = False,
) -> KernelOut:
    """Attention with EM-adapted keys. With ``keep_prior`` also fills
    ``maps.attention_before_em`` ``[N, H, L, L]``: the attention with the trained keys."""
    before = _weights(q, k, mask, alpha) if keep_prior else None
    xi = em_adapt_keys(q, k, mask, alpha, theta, iterations)
    attn = _weights(q, xi, mask, alpha)  # [N, H, L, L]
    return KernelOut(attend(attn, v), LayerMaps(attention=attn, attention_before_em=before))


@dataclass(frozen=True)
class ProbtransParams:
    """The Probabilistic Transformer has no structural hyper-parameters: EM iterations and the
    prior precision theta are inference settings (:class:`uqcore.settings.SamplingSettings`)."""


def bind_probtrans(params: ProbtransParams) -> AttentionKernel:
    """``w_ij ∝ exp(xi_j^T q_i / tau)`` with keys adapted by ``s.em_iterations`` EM steps."""

    def kernel(q, k, v, mask, s, noise, weights, req: KernelRequest) -> KernelOut:
        return probtrans_attention(
            q, k, v, mask, 1.0 / s.tau, s.em_precision, s.em_iterations, keep_prior=req.weights
        )

    return kernel
