"""Bayesian Attention Modules (Fan et al., NeurIPS 2020): Weibull or Lognormal attention.

Posterior mean ``a = softmax(Q K^T / sqrt(d_h))``. A sample normalises positive weights with
mean ``a``:
  Weibull(k, lambda = a / Gamma(1 + 1/k)):
      ``softmax(log a - lgamma(1+1/k) + (1/k) log(-log(1-u)))``
  Lognormal(mu = log a - s^2/2, s):          ``softmax(log a - s^2/2 + s * eps)``
The prior over keys is ``pi``: contextual (``softmax_keys(W2 relu(W1 K))``, computed by the
layer and passed here as ``prior_logits``) or fixed (uniform over real keys). The prior on the
unnormalised weights is Gamma(alpha = beta * pi, beta) for Weibull and
Lognormal(log pi - sp^2/2, sp) for Lognormal; both have mean ``pi``. The closed-form KL per
element is summed over real (query, key) pairs and stays in the autograd graph.
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
    key_mask,
    log_softmax_last,
    masked_bias,
    query_rows,
    scores_plus,
    softmax_last,
)
from uqcore.nets.maps import LayerMaps
from uqcore.nets.noise import SampleNoise

EULER_GAMMA = 0.5772156649015329
_MIN_ALPHA = 1e-8  # Gamma shape floor so lgamma(alpha) stays finite when pi underflows


def kl_weibull_gamma(
    log_lam: torch.Tensor, k: float, alpha: torch.Tensor, beta: float
) -> torch.Tensor:
    """Elementwise KL(Weibull(k, lambda) || Gamma(alpha, beta)), with ``log_lam = log lambda``.

    ``= g*alpha/k - alpha*log(lam) + log k + beta*lam*Gamma(1+1/k) - g - 1 - alpha*log(beta)
    + lgamma(alpha)`` with ``g`` the Euler-Mascheroni constant. Always >= 0.
    """
    lam_mean = torch.exp(log_lam + math.lgamma(1.0 + 1.0 / k))  # lambda * Gamma(1 + 1/k)
    return (
        EULER_GAMMA * alpha / k
        - alpha * log_lam
        + math.log(k)
        + beta * lam_mean
        - EULER_GAMMA
        - 1.0
        - alpha * math.log(beta)
        + torch.lgamma(alpha)
    )


def kl_lognormal(mu1: torch.Tensor, s1: float, mu2: torch.Tensor, s2: float) -> torch.Tensor:
    """Elementwise KL(Lognormal(mu1, s1^2) || Lognormal(mu2, s2^2)). Always >= 0."""
    return math.log(s2 / s1) + (s1**2 + (mu1 - mu2) ** 2) / (2.0 * s2**2) - 0.5


def bam_attention(
    q: torch.Tensor,  # [N, H, L, d_h]
    k: torch.Tensor,  # [N, H, L, d_h]
    v: torch.Tensor,  # [N, H, L, d_h]
    mask: torch.Tensor,  # [N, L]
    *,
    dist: str,
    prior_logits,  # [N, H, L] contextual prior logits over keys (or a callable), None = fixed
    shape_k: float,
    sigma: float,
    beta: float,
    prior_sigma: float,
    sample: bool,
    noise_scale: float,
    noise: SampleNoise | None,
    need_kl: bool = True,
    need_extras: bool = True,
    query_mask: torch.Tensor | None = None,
) -> KernelOut:
    """BAM attention. ``sample=False`` (or no noise) uses the posterior mean ``a``.

    ``noise_scale`` multiplies the noise term (0 gives exactly ``a``). Maps besides
    ``attention``: ``prior`` ``[N, H, L]`` (pi, 0 on padding), ``posterior_mean``
    ``[N, H, L, L]`` (a), ``kl_per_head`` ``[N, H]`` (KL summed over real query/key pairs,
    differentiable; only if ``need_kl``).
    Without ``need_extras`` (and ``need_kl``) neither the prior nor ``a`` is computed: a sample
    only needs ``log a``. ``prior_logits`` may then be a callable that is never called.
    ``query_mask [N, Lq]``: which query rows are real, when ``q`` holds a subset of the rows
    (default: ``mask``, i.e. queries and keys are the same tokens).
    """
    tau = math.sqrt(q.shape[-1])
    sampled = sample and noise is not None and noise_scale != 0.0
    if sampled:  # drawn first, so the sample never depends on what else is asked
        attn = softmax_last(
            _noisy_scores(q, k, mask, tau, dist, shape_k, sigma, noise_scale, noise)
        )
    if not (need_kl or need_extras):
        if not sampled:
            attn = softmax_last(scores_plus(q, k, mask, tau))  # a
        return KernelOut(attend(attn, v), LayerMaps(attention=attn))
    scores = scores_plus(q, k, mask, tau)  # [N, H, L, L]
    a = softmax_last(scores)  # posterior mean
    log_a = log_softmax_last(scores)
    if not sampled:
        attn = a
    if callable(prior_logits):
        prior_logits = prior_logits()
    allowed = key_mask(mask)  # [N, 1, 1 or Lq, L]: a per-query mask gives each query a prior
    if prior_logits is None:
        n_real = allowed.sum(-1, keepdim=True).to(q.dtype)  # [N, 1, 1 or Lq, 1]
        shape = (k.shape[0], k.shape[1], allowed.shape[2], k.shape[2])  # [N, H, 1 or Lq, L]
        log_pi = (-torch.log(n_real)).expand(shape).masked_fill(~allowed, float("-inf"))
    else:
        log_pi = log_softmax_last(prior_logits[:, :, None].masked_fill(~allowed, float("-inf")))
    # log_pi [N, H, 1 or Lq, L]; the map keeps the key-mask layout [N, H, L] for a key mask
    prior = log_pi.exp()
    maps = LayerMaps(
        attention=attn, prior=prior[:, :, 0] if mask.dim() == 2 else prior, posterior_mean=a
    )
    if need_kl:
        qmask = query_rows(mask) if query_mask is None else query_mask
        maps.kl_per_head = _kl(
            log_a, log_pi, qmask, allowed, dist, shape_k, sigma, beta, prior_sigma
        )
    return KernelOut(attend(attn, v), maps)


def bam_shortcut(params: BamParams) -> Shortcut:
    """BAM's :class:`Shortcut`: the scores ``Q K^T / tau`` once; per sample the Weibull /
    Lognormal term (the draw :func:`bam_attention` makes) and the softmax."""

    def prepare(q, k, weights) -> tuple[torch.Tensor, ...]:
        return (torch.matmul(k, q.transpose(-1, -2)) / math.sqrt(q.shape[-1]),)  # [B,H,L,Lq]

    def noisy(parts, v, mask, s, noise, repeats) -> torch.Tensor:
        tau = math.sqrt(v.shape[-1])
        scores = parts[0].transpose(-1, -2).repeat(repeats, 1, 1, 1)  # [R*B, H, Lq, L]
        scores += masked_bias(mask, repeats, scores.dtype)
        if s.bam_mode == "sample" and noise is not None and s.noise_scale != 0.0:
            shape = scores.shape[1:]
            if params.dist == "weibull":
                term, alpha = noise.neg_gumbel(*shape), s.noise_scale * tau / params.weibull_k
            else:
                term, alpha = noise.normal(*shape), s.noise_scale * params.lognormal_sigma * tau
            scores.add_(term, alpha=alpha / tau)  # (Q K^T + alpha * term) / tau
        return scores

    def finish(z, v, s, repeats) -> torch.Tensor:
        return attend_repeated(softmax_last(z), v)

    return Shortcut(prepare, noisy, finish)


def _noisy_scores(q, k, mask, tau, dist, shape_k, sigma, noise_scale, noise) -> torch.Tensor:
    """Logits of a normalised Weibull / Lognormal sample with mean ``a``. -> ``[N, H, L, L]``

    Weibull: ``log a + lambda * (1/k) log(-log u)`` (``1 - u`` is uniform like ``u``);
    Lognormal: ``log a + lambda * sigma * eps``. Inside a softmax, ``log a`` may be replaced by
    the scores ``Q K^T / tau`` (they differ by a per-row constant), and the constants
    ``-lgamma(1+1/k)`` and ``-sigma^2/2`` of the guide's formulas drop out for the same reason.
    """
    shape = (q.shape[1], q.shape[2], k.shape[2])
    if dist == "weibull":
        term, alpha = noise.neg_gumbel(*shape), noise_scale * tau / shape_k  # log(-log u)
    else:
        term, alpha = noise.normal(*shape), noise_scale * sigma * tau
    return scores_plus(q, k, mask, tau, term, alpha)


def _kl(log_a, log_pi, qmask, allowed, dist, shape_k, sigma, beta, prior_sigma) -> torch.Tensor:
    """KL per head ``[N, H]`` from ``log a [N,H,Lq,L]`` and ``log pi [N,H,1 or Lq,L]``, masked
    by the query mask ``qmask [N, Lq]`` and the allowed keys ``allowed [N, 1, 1 or Lq, L]``
    (:func:`uqcore.kernels.common.key_mask` of the kernel's mask)."""
    valid = qmask[:, None, :, None] & allowed  # [N, 1, Lq, L] real query & allowed key
    # zero the masked entries *before* arithmetic so no inf/NaN reaches the gradient
    log_a_safe = log_a.masked_fill(~valid, 0.0)  # [N, H, L, L]
    log_pi_safe = log_pi.masked_fill(~allowed, 0.0)  # [N, H, 1 or Lq, L]
    if dist == "weibull":
        alpha = (beta * log_pi_safe.exp()).clamp_min(_MIN_ALPHA)  # [N, H, 1, L]
        log_lam = log_a_safe - math.lgamma(1.0 + 1.0 / shape_k)
        kl = kl_weibull_gamma(log_lam, shape_k, alpha, beta)  # [N, H, L, L]
    elif dist == "lognormal":
        mu1 = log_a_safe - sigma**2 / 2.0
        mu2 = log_pi_safe - prior_sigma**2 / 2.0
        kl = kl_lognormal(mu1, sigma, mu2, prior_sigma)  # [N, H, L, L]
    else:
        raise ValueError(f"BAM distribution must be 'weibull' or 'lognormal', got {dist!r}.")
    return kl.masked_fill(~valid, 0.0).sum(dim=(-1, -2))  # [N, H]


@dataclass(frozen=True)
class BamParams:
    """BAM structure: the posterior distribution of the unnormalised weights and its shape
    (``weibull_k`` for Weibull, ``lognormal_sigma`` for Lognormal), and the prior over keys:
    ``contextual`` (a per-head network of hidden width ``prior_d_mid`` on the keys) or ``fixed``
    (uniform), Gamma(``prior_beta`` * pi, ``prior_beta``) or Lognormal(..., ``prior_sigma``)."""

    dist: Literal["weibull", "lognormal"] = "weibull"
    prior: Literal["contextual", "fixed"] = "contextual"
    weibull_k: float = 10.0  # larger = less noise
    lognormal_sigma: float = 0.5
    prior_beta: float = 1.0
    prior_sigma: float = 1.0
    prior_d_mid: int = 10


def bam_weights(params: BamParams, n_heads: int, d_head: int) -> dict[str, nn.Parameter]:
    """The contextual prior network ``W2 relu(W1 k + b1)`` per head (none for a fixed prior)."""
    if params.prior != "contextual":
        return {}
    m = params.prior_d_mid
    return {
        "prior_w1": nn.Parameter(torch.randn(n_heads, d_head, m) / math.sqrt(d_head)),
        "prior_b1": nn.Parameter(torch.zeros(n_heads, m)),
        "prior_w2": nn.Parameter(torch.randn(n_heads, m) / math.sqrt(m)),
    }


def contextual_prior_logits(k: torch.Tensor, weights: dict[str, torch.Tensor]) -> torch.Tensor:
    """Contextual prior ``W2 relu(W1 k + b1)`` per head. ``[N, H, L, d_h]`` -> ``[N, H, L]``."""
    hidden = torch.relu(
        torch.einsum("nhld,hdm->nhlm", k, weights["prior_w1"]) + weights["prior_b1"][:, None]
    )
    return torch.einsum("nhlm,hm->nhl", hidden, weights["prior_w2"])


def bind_bam(params: BamParams) -> AttentionKernel:
    """Bayesian Attention Modules with the structure of ``params``; ``s.bam_mode`` picks samples
    or the posterior mean, ``s.noise_scale`` scales the noise."""
    contextual = params.prior == "contextual"

    def kernel(q, k, v, mask, s, noise, weights, req: KernelRequest) -> KernelOut:
        return bam_attention(
            q,
            k,
            v,
            mask,
            dist=params.dist,
            prior_logits=(lambda: contextual_prior_logits(k, weights)) if contextual else None,
            shape_k=params.weibull_k,
            sigma=params.lognormal_sigma,
            beta=params.prior_beta,
            prior_sigma=params.prior_sigma,
            sample=s.bam_mode == "sample",
            noise_scale=s.noise_scale,
            noise=noise,
            need_kl=req.need_kl,
            need_extras=req.weights,
            query_mask=req.query_mask,
        )

    kernel.shortcut = bam_shortcut(params)
    return kernel
