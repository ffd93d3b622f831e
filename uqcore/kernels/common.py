"""Pieces shared by every attention kernel: the call signature, the output record, key masking."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import torch

from uqcore.nets.maps import LayerMaps
from uqcore.nets.noise import SampleNoise
from uqcore.settings import ForwardSettings


@dataclass
class KernelOut:
    """What a kernel returns.

    ``out``: ``[N, H, Lq, d_h]`` attended values (None if the caller asked for weights only).
    ``maps``: the typed record of what the kernel shows (:class:`uqcore.nets.maps.LayerMaps`):
    ``maps.attention [N, H, Lq, L]`` is always the weights actually used (rows sum to 1 over real
    keys, 0 on padded keys); the family's other fields (centroid assignments, prior, posterior
    mean, attention before EM, KL per head) are filled by the kernel that has them.
    """

    out: torch.Tensor | None
    maps: LayerMaps = field(default_factory=LayerMaps)


@dataclass(frozen=True)
class KernelRequest:
    """What the layer asks of one kernel call (the same for every family).

    ``weights``: keep the weights and the family's maps (else only what the output needs);
    ``output``: compute attended values; ``need_kl``: BAM's KL (training always, the sampler on
    request); ``query_mask [N, Lq]``: which query rows are real when ``q`` holds a subset of the
    rows (None = ``mask``); ``key_assign``: H-STO key-side assignments already drawn for these
    keys (other query rows of the same sample reuse them).
    """

    weights: bool = True
    output: bool = True
    need_kl: bool = False
    query_mask: torch.Tensor | None = None
    key_assign: torch.Tensor | None = None


class AttentionKernel(Protocol):
    """One family's attention, bound once (at layer construction) to its structural
    hyper-parameters. Every family's kernel has this one call signature:

    ``kernel(q, k, v, mask, s, noise, weights, req) -> KernelOut`` with ``q [N, H, Lq, d_h]``,
    ``k, v [N, H, L, d_h]``, ``mask [N, L]`` bool, ``s`` the resolved
    :class:`uqcore.settings.ForwardSettings`, ``noise`` the rows'
    :class:`uqcore.nets.noise.SampleNoise` (None = no noise), ``weights`` the layer's learnable
    tensors of this family (centroids, prior network; ``{}`` for most) and ``req`` a
    :class:`KernelRequest`."""

    def __call__(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        mask: torch.Tensor,
        s: ForwardSettings,
        noise: SampleNoise | None,
        weights: dict[str, torch.Tensor],
        req: KernelRequest,
    ) -> KernelOut: ...


@dataclass(frozen=True)
class Shortcut:
    """The optional shortcut of a kernel (its ``shortcut`` attribute) for a layer that attends
    from its first ``Lq`` query rows only (the last layer: [CLS]) on ``R`` sample-major copies of
    deterministic projections, when only the output is wanted (no maps, no KL, no dropout).

    ``prepare(q [B, H, Lq, d_h], k [B, H, L, d_h], weights) -> parts``: what the noisy part needs
    of the unique rows, deterministic (kept across calls by :mod:`uqcore.inference.prefix`); each
    part is ``[B, H, L, *]`` (per key) or ``[B, H, 1, *]`` (per query row), never masked, so padding
    may hold anything.

    ``noisy(parts, v, mask [B, L], s, noise, R) -> z [R*B, H, Lq, L]``: every draw of the sample
    and everything that does not read the settings named in ``finish_reads`` (padded keys
    ``-inf``); ``finish(z, v [B, H, L, d_h], s, R) -> out [R*B, H, Lq, d_h]`` reads ``z``
    without changing it (so a kept ``z`` serves another value of those settings: a tau2 change
    reruns ``finish`` only). Together they make the same draws in the same order as the kernel
    on the copied rows (the numbers agree within float rounding); the values are never copied.
    """

    prepare: Callable[..., tuple[torch.Tensor, ...]]
    noisy: Callable[..., torch.Tensor]
    finish: Callable[..., torch.Tensor]
    finish_reads: tuple[str, ...] = ()

    def repeated(self, parts, v, mask, s, noise, repeats: int) -> torch.Tensor:
        """``finish(noisy(...))``: the output ``[R*B, H, Lq, d_h]`` of ``R`` samples."""
        return self.finish(self.noisy(parts, v, mask, s, noise, repeats), v, s, repeats)


def masked_bias(mask: torch.Tensor, repeats: int, dtype) -> torch.Tensor:
    """``[R*B, 1, 1, L]`` (``[R*B, 1, Lq, L]`` for a per-query mask): 0 on allowed keys,
    ``-inf`` elsewhere, for ``R`` copies of ``mask``."""
    bias = torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(
        ~mask, float("-inf")
    )
    return key_mask(bias.repeat(repeats, *([1] * (mask.dim() - 1))))


def attend_repeated(attn: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``attn [R*B, H, Lq, L]`` of ``R`` sample-major copies over the unique rows'
    ``v [B, H, L, d_h]`` -> ``[R*B, H, Lq, d_h]``, without copying ``v`` R times."""
    b, h, length, d = v.shape
    r = attn.shape[0] // b
    out = torch.einsum("rbhql,bhld->rbhqd", attn.view(r, b, h, -1, length), v)
    return out.reshape(r * b, h, -1, d)


def key_mask(mask: torch.Tensor) -> torch.Tensor:
    """``[N, L]`` -> ``[N, 1, 1, L]``, broadcastable over heads and queries. Every kernel also
    takes a per-query mask ``[N, Lq, L]`` (which keys each query may see: a decoder's causal
    mask with its padding, :mod:`uqcore.nets.decoder`) -> ``[N, 1, Lq, L]``."""
    return mask[:, None, None, :] if mask.dim() == 2 else mask[:, None]


def query_rows(mask: torch.Tensor) -> torch.Tensor:
    """Which query rows are real, ``[N, Lq]``: ``mask`` itself when it is a key mask
    ``[N, L]`` (queries and keys are the same tokens), else the rows of a per-query mask
    ``[N, Lq, L]`` that see at least one key."""
    return mask if mask.dim() == 2 else mask.any(-1)


def scores_plus(
    q: torch.Tensor,  # [N, H, Lq, d_h]
    k: torch.Tensor,  # [N, H, Lk, d_h]
    mask: torch.Tensor,  # [N, Lk]
    tau: float,
    noise_term: torch.Tensor | None = None,  # [N, H, Lq, Lk]
    noise_alpha: float = 0.0,
) -> torch.Tensor:
    """``(Q K^T + noise_alpha * noise_term) / tau`` with padded keys at ``-inf``, in one
    ``baddbmm`` whose additive input carries the noise and the mask. ``mask`` may also be a
    per-query mask ``[N, Lq, Lk]`` (:func:`key_mask`): the keys it hides from a query are at
    ``-inf`` in that query's row, before any noise or softmax. -> ``[N, H, Lq, Lk]``"""
    n, h, lq, d = q.shape
    lk = k.shape[2]
    allowed = key_mask(mask)  # [N, 1, 1 or Lq, Lk]
    bias = torch.zeros(allowed.shape, dtype=q.dtype, device=q.device)
    bias = bias.masked_fill_(~allowed, float("-inf"))  # [N, 1, 1 or Lq, Lk]
    rows = bias.shape[2]
    if noise_term is not None:
        base = torch.add(bias, noise_term, alpha=noise_alpha).view(n * h, lq, lk)
    else:
        base = bias.expand(n, h, rows, lk).reshape(n * h, rows, lk)
    qs = q.reshape(n * h, lq, d)
    ks = k.reshape(n * h, lk, d).transpose(1, 2)
    scores = torch.baddbmm(base, qs, ks, beta=1.0 / tau, alpha=1.0 / tau)  # [N*H, Lq, Lk]
    return scores.view(n, h, lq, lk)


SOFTMAX_MIN_ROW = 16  # PyTorch's CPU softmax runs rows narrower than this scalar (see below)


def _short_rows(x: torch.Tensor) -> bool:
    """Whether ``x``'s rows take the short-row path: on the CPU, without gradients, narrower
    than :data:`SOFTMAX_MIN_ROW`."""
    n = x.shape[-1]
    return 1 < n < SOFTMAX_MIN_ROW and x.device.type == "cpu" and not torch.is_grad_enabled()


def softmax_last(x: torch.Tensor) -> torch.Tensor:
    """``torch.softmax(x, -1)``, fast for short rows.

    PyTorch's CPU kernel vectorises a row only from 16 entries: shorter rows (a 12-token
    sentence's attention, H-STO's 2-8 centroids) run 3-6x slower than the same softmax written
    as whole-tensor operations (max, subtract, exp, sum, divide), which is what such rows get
    here, on the CPU without gradients (``python -m uqlab.benches.sampler``, "Softmax rows"). The
    weights agree with the plain kernel within 3e-7 (another exp implementation). With gradients
    (training) and on other devices the plain kernel runs, so retraining reproduces the shipped
    weights. ``x`` is not modified."""
    if not _short_rows(x):
        return torch.softmax(x, dim=-1)
    e = (x - x.amax(-1, keepdim=True)).exp_()  # [..., n]
    return e.div_(e.sum(-1, keepdim=True))


def log_softmax_last(x: torch.Tensor) -> torch.Tensor:
    """``torch.log_softmax(x, -1)`` with the short-row path of :func:`softmax_last`."""
    if not _short_rows(x):
        return torch.log_softmax(x, dim=-1)
    shifted = x - x.amax(-1, keepdim=True)  # [..., n]
    return shifted.sub_(shifted.exp().sum(-1, keepdim=True).log_())


def attend(weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``[N,H,L,L] @ [N,H,L,d_h] -> [N,H,L,d_h]``."""
    return torch.matmul(weights, v)
