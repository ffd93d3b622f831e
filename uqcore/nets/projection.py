"""BayesFormer's per-head masked input projection.

For each row ``n`` and each of the ``G = 3H`` head groups (Q, K and V of every head), a keep
mask ``m[n, g] in {0, 1}^D`` (shared over positions) hides input dimensions before that head's
projection: ``out[n, g] = (x[n] * m[n, g] / (1 - p)) W_g^T + b_g``. Since
``(x * m) W^T = x (W * m)^T``, each row's masks are folded into its own copy of the
(transposed) weights and one batched matmul projects all heads. (A sparse variant that corrects
``x W^T`` over the dropped dimensions only was measured slower at these sizes: not kept.)
"""

from __future__ import annotations

import torch

_CHUNK_BYTES = 2 << 20  # per-row masked weights are built 2 MiB at a time (stay in cache)


def masked_head_projection(
    x: torch.Tensor,  # [N, L, D]
    weight: torch.Tensor,  # [G * d_g, D] (nn.Linear layout)
    bias: torch.Tensor,  # [G * d_g]
    keep: torch.Tensor,  # [N, G, D] bool
    scale: float,  # 1 / (1 - p)
) -> torch.Tensor:
    """Per-head masked projection. -> ``[N, L, G * d_g]`` (the layout ``nn.Linear`` gives)."""
    n, _, d = x.shape
    g = keep.shape[1]
    out_features = weight.shape[0]
    wt = weight.t().contiguous().view(1, d, g, -1)  # [1, D, G, d_g]: W^T, so bmm reads rows
    m = keep.to(x.dtype).mul_(scale).transpose(1, 2)[..., None]  # [N, D, G, 1]
    step = max(1, _CHUNK_BYTES // (4 * weight.numel()))  # rows per chunk
    parts = []
    for lo in range(0, n, step):
        wm = (wt * m[lo : lo + step]).view(-1, d, out_features)  # [rows, D, G*d_g]
        parts.append(torch.baddbmm(bias, x[lo : lo + step], wm))
    return torch.cat(parts) if len(parts) > 1 else parts[0]  # [N, L, G*d_g]
