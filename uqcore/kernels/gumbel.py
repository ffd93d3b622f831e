"""Gumbel-softmax attention: STO-TRANS and H-STO-TRANS (Pei, Wang, Szarvas, AAAI 2022).

STO:   ``softmax((Q K^T + lambda*g) / tau2)`` on the raw, unscaled ``Q K^T``.
H-STO: ``P = softmax((K C + lambda*g1) / tau1)`` over ``c`` centroids, ``K~ = P C^T``, then
       ``softmax((Q K~^T + lambda*g2) / tau2)``; or on the query side, ``Q~ = P_q C^T``.
In hard mode the forward value is one-hot (straight-through gradients), so a temperature
changes only gradients, not samples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from uqcore.kernels.common import (
    AttentionKernel,
    KernelOut,
    KernelRequest,
    Shortcut,
    attend,
    attend_repeated,
    masked_bias,
    scores_plus,
    softmax_last,
)
from uqcore.nets.maps import LayerMaps
from uqcore.nets.noise import SampleNoise


def gumbel_softmax(
    logits: torch.Tensor, tau: float, noise_scale: float, noise: SampleNoise | None, hard: bool
) -> torch.Tensor:
    """``softmax((logits + noise_scale * g) / tau)`` over the last dim; ``-inf`` logits stay 0.

    ``logits`` has the rows first and is overwritten (callers pass a fresh tensor); ``noise``
    may be None (then no noise is added).
    """
    if noise is not None and noise_scale != 0.0:
        logits = logits.sub_(noise.neg_gumbel(*logits.shape[1:]), alpha=noise_scale)  # + lambda*g
    return soft_or_hard(softmax_last(logits.div_(tau)), hard)


def gumbel_softmax_tiled(
    logits: torch.Tensor,  # [B, ...]
    repeats: int,
    tau: float | torch.Tensor,
    noise_scale: float,
    noise: SampleNoise | None,
    hard: bool,
) -> torch.Tensor:
    """``gumbel_softmax(logits.repeat(repeats, 1, ...), ...)`` (``R`` sample-major copies of
    the unique rows' ``logits``, not modified) without the copy: the fresh noise tensor takes
    ``logits - lambda * (-g)`` in place, the same operation on the same operands, hence the same
    bits. -> ``[R*B, ...]``"""
    if noise is None or noise_scale == 0.0:
        return gumbel_softmax(
            logits.repeat(repeats, *([1] * (logits.dim() - 1))), tau, 0, None, hard
        )
    if isinstance(tau, float | int) and tau == noise_scale:
        return soft_or_hard(_race(logits, repeats, float(tau), noise), hard)
    z = noise.neg_gumbel(*logits.shape[1:])  # [R*B, ...] = -g, fresh
    tiles = z.view(repeats, *logits.shape)  # [R, B, ...]
    torch.sub(logits, tiles, alpha=noise_scale, out=tiles)  # + lambda * g, each copy
    return soft_or_hard(softmax_last(z.div_(tau)), hard)


def _race(logits: torch.Tensor, repeats: int, tau: float, noise: SampleNoise) -> torch.Tensor:
    """``softmax((logits + lambda * g) / tau)`` over the last dim when ``lambda == tau``, for
    ``R`` sample-major copies of ``logits [B, ...]``, as the exponential race it is: with
    ``g = -log E``, ``E = -log u``, the weights are ``exp(logits / tau - m) / E`` normalised
    (``m``: the row's largest ``logits / tau``). ``exp`` then runs once per example instead of
    once per sample, and the draws' second logarithm, the per-sample maximum and shift are
    gone: four passes over the samples' tensor instead of ten. The same uniforms ``u`` (the
    draw :func:`gumbel_softmax_tiled` makes), the same weights within float rounding (the
    sums and quotients are taken in another order). Finite: ``u`` lies in ``[1e-6, 1 - 1e-6]``,
    so ``E`` in ``[1e-6, 13.8]`` and each weight in ``(0, 1e6]`` before normalising.
    -> ``[R*B, ...]``"""
    w = logits / tau  # [B, ..., c] once per example
    w -= w.amax(-1, keepdim=True)
    z = noise.uniform(*logits.shape[1:]).log_()  # log u = -E < 0, [R*B, ..., c]
    tiles = z.view(repeats, *logits.shape)  # [R, B, ..., c]
    torch.div(w.exp_(), tiles, out=tiles)  # -exp(logits - m) / E
    return z.div_(z.sum(-1, keepdim=True))  # the signs cancel


def soft_or_hard(y: torch.Tensor, hard: bool) -> torch.Tensor:
    """``y`` itself, or in hard mode ``one_hot(argmax y) - y.detach() + y`` (straight-through)."""
    if not hard:
        return y
    y_hard = torch.zeros_like(y).scatter_(-1, y.argmax(dim=-1, keepdim=True), 1.0)
    return y_hard - y.detach() + y


def sto_attention(
    q: torch.Tensor,  # [N, H, L, d_h]
    k: torch.Tensor,  # [N, H, L, d_h]
    v: torch.Tensor,  # [N, H, L, d_h]
    mask: torch.Tensor,  # [N, L]
    tau2: float,
    noise_scale: float,
    noise: SampleNoise | None,
    hard: bool = False,
) -> KernelOut:
    """STO-TRANS attention over values. ``attn`` rows sum to 1 over real keys."""
    noisy = noise is not None and noise_scale != 0.0
    w = noise.neg_gumbel(q.shape[1], q.shape[2], k.shape[2]) if noisy else None  # -g
    scores = scores_plus(q, k, mask, tau2, w, -noise_scale)  # (QK^T + lambda g) / tau2
    attn = soft_or_hard(softmax_last(scores), hard)  # [N, H, L, L]
    return KernelOut(attend(attn, v), LayerMaps(attention=attn))


def centroid_assign(
    x: torch.Tensor,  # [N, H, L, d_h]
    centroids: torch.Tensor,  # [d_h, c] shared, or [H, d_h, c] per head
    tau1: float,
    noise_scale: float,
    noise: SampleNoise | None,
    hard: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Assign each vector to the centroids. Returns ``(P [N,H,L,c], x~ = P C^T [N,H,L,d_h])``."""
    if centroids.dim() == 2:
        logits = torch.matmul(x, centroids)  # [N, H, L, c]
        p = gumbel_softmax(logits, tau1, noise_scale, noise, hard)  # [N, H, L, c]
        return p, torch.matmul(p, centroids.transpose(0, 1))  # [N, H, L, d_h]
    logits = torch.einsum("nhld,hdc->nhlc", x, centroids)  # [N, H, L, c]
    p = gumbel_softmax(logits, tau1, noise_scale, noise, hard)
    return p, torch.einsum("nhlc,hdc->nhld", p, centroids)  # [N, H, L, d_h]


def centroid_attention(
    q: torch.Tensor,  # [N, H, L, d_h]
    k: torch.Tensor,  # [N, H, L, d_h]
    v: torch.Tensor,  # [N, H, L, d_h]
    mask: torch.Tensor,  # [N, L]
    centroids: torch.Tensor,  # [d_h, c] or [H, d_h, c]
    tau1: float,
    tau2: float,
    noise_scale: float,
    noise: SampleNoise | None,
    hard: bool = False,
    side: str = "key",
    key_assign: torch.Tensor | None = None,
) -> KernelOut:
    """H-STO-TRANS attention. ``maps.centroids``: assignments ``P`` ``[N, H, L, c]``
    (``L`` = keys on the key side, queries on the query side).

    ``side="key"`` replaces keys by ``P C^T``; ``side="query"`` replaces queries instead.
    ``key_assign``: key-side ``P`` already sampled (e.g. for other query rows of the same
    sample); it is reused instead of drawn, so both row sets attend to the same keys.
    """
    if side == "key" and key_assign is not None:
        p = key_assign
        k = (
            torch.matmul(p, centroids.transpose(0, 1))
            if centroids.dim() == 2
            else (torch.einsum("nhlc,hdc->nhld", p, centroids))
        )  # [N, H, L, d_h]
    elif side == "key":
        p, k = centroid_assign(k, centroids, tau1, noise_scale, noise, hard)
    elif side == "query":
        p, q = centroid_assign(q, centroids, tau1, noise_scale, noise, hard)
    else:
        raise ValueError(f"centroid side must be 'key' or 'query', got {side!r}.")
    out = sto_attention(q, k, v, mask, tau2, noise_scale, noise, hard)
    out.maps.centroids = p
    return out


def _noisy_scores(raw, mask, noise_scale, noise, repeats) -> torch.Tensor:
    """``raw + lambda * g`` with padded keys at ``-inf``: the unscaled scores ``raw
    [R*B, H, Lq, L]`` (overwritten) of ``R`` copies of the rows, with the draw
    :func:`sto_attention` makes."""
    raw += masked_bias(mask, repeats, raw.dtype)
    if noise is not None and noise_scale != 0.0:  # + lambda * g
        raw.sub_(noise.neg_gumbel(raw.shape[1], raw.shape[2], raw.shape[3]), alpha=noise_scale)
    return raw


def _finish(z, v, s, repeats) -> torch.Tensor:
    """``softmax(z / tau2)`` (one-hot in hard mode) over ``v``; ``z`` is not changed."""
    return attend_repeated(soft_or_hard(softmax_last(z / s.tau2), s.hard), v)


def sto_shortcut() -> Shortcut:
    """STO's :class:`Shortcut`: the scores ``Q K^T`` once, the Gumbel noise per sample."""

    def prepare(q, k, weights) -> tuple[torch.Tensor, ...]:
        return (torch.matmul(k, q.transpose(-1, -2)),)  # [B, H, L, Lq]: K Q^T

    def noisy(parts, v, mask, s, noise, repeats) -> torch.Tensor:
        raw = parts[0].transpose(-1, -2).repeat(repeats, 1, 1, 1)  # [R*B, H, Lq, L]
        return _noisy_scores(raw, mask, s.noise_scale, noise, repeats)

    return Shortcut(prepare, noisy, _finish, finish_reads=("tau2",))


def hsto_shortcut() -> Shortcut:
    """Key-side H-STO's :class:`Shortcut`: ``K C`` and ``Q C`` once; per sample the
    assignments ``P`` (noise ``g1``), the scores ``Q K~^T = (Q C) P^T`` and the attention over
    values (noise ``g2``), as :func:`centroid_attention` draws them."""

    def prepare(q, k, weights) -> tuple[torch.Tensor, ...]:
        c = weights["centroids"]
        if c.dim() == 2:
            return torch.matmul(k, c), torch.matmul(q, c)  # [B, H, L, c], [B, H, Lq, c]
        return torch.einsum("bhld,hdc->bhlc", k, c), torch.einsum("bhqd,hdc->bhqc", q, c)

    def noisy(parts, v, mask, s, noise, repeats) -> torch.Tensor:
        kc, qc = parts
        p = gumbel_softmax_tiled(kc, repeats, s.tau1, s.noise_scale, noise, s.hard)
        raw = torch.matmul(qc.repeat(repeats, 1, 1, 1), p.transpose(-1, -2))  # [R*B,H,Lq,L]
        return _noisy_scores(raw, mask, s.noise_scale, noise, repeats)

    return Shortcut(prepare, noisy, _finish, finish_reads=("tau2",))


@dataclass(frozen=True)
class StoParams:
    """STO-TRANS has no structural hyper-parameters: its knobs (tau2, noise scale, hard) are
    inference settings (:class:`uqcore.settings.SamplingSettings`)."""


def bind_sto(params: StoParams) -> AttentionKernel:
    """STO-TRANS: ``softmax((Q K^T + lambda * g) / tau2)``."""

    def kernel(q, k, v, mask, s, noise, weights, req: KernelRequest) -> KernelOut:
        return sto_attention(q, k, v, mask, s.tau2, s.noise_scale, noise, s.hard)

    kernel.shortcut = sto_shortcut()
    return kernel


@dataclass(frozen=True)
class HstoParams:
    """H-STO-TRANS structure: ``n_centroids`` learnable centroids per layer, shared by the heads
    (or one set per head), replacing the keys (``side="key"``) or the queries."""

    n_centroids: int = 2
    centroid_side: Literal["key", "query"] = "key"
    centroids_per_head: bool = False


def hsto_weights(params: HstoParams, n_heads: int, d_head: int) -> dict[str, nn.Parameter]:
    """The layer's centroids ``C``: ``[d_h, c]`` shared, or ``[H, d_h, c]`` per head."""
    c = params.n_centroids
    shape = (n_heads, d_head, c) if params.centroids_per_head else (d_head, c)
    return {"centroids": nn.Parameter(torch.randn(shape) / math.sqrt(d_head))}


def bind_hsto(params: HstoParams) -> AttentionKernel:
    """H-STO-TRANS: keys (or queries) pulled to centroids, then STO attention over values."""
    side = params.centroid_side

    def kernel(q, k, v, mask, s, noise, weights, req: KernelRequest) -> KernelOut:
        return centroid_attention(
            q,
            k,
            v,
            mask,
            weights["centroids"],
            s.tau1,
            s.tau2,
            s.noise_scale,
            noise,
            s.hard,
            side,
            key_assign=req.key_assign,
        )

    if side == "key":  # query-side assignments are per query row: no shortcut
        kernel.shortcut = hsto_shortcut()
    return kernel
