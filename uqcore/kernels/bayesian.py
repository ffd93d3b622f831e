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

import torch

from uqcore.kernels.common import KernelOut, attend, scores_plus
from uqcore.noise import SampleNoise

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

    ``noise_scale`` multiplies the noise term (0 gives exactly ``a``). Extras:
    ``prior`` ``[N, H, L]`` (pi, 0 on padding), ``posterior_mean`` ``[N, H, L, L]`` (a),
    ``kl`` ``[N, H]`` (KL summed over real query/key pairs, differentiable; only if ``need_kl``).
    Without ``need_extras`` (and ``need_kl``) neither the prior nor ``a`` is computed: a sample
    only needs ``log a``. ``prior_logits`` may then be a callable that is never called.
    ``query_mask [N, Lq]``: which query rows are real, when ``q`` holds a subset of the rows
    (default: ``mask``, i.e. queries and keys are the same tokens).
    """
    tau = math.sqrt(q.shape[-1])
    sampled = sample and noise is not None and noise_scale != 0.0
    if sampled:  # drawn first, so the sample never depends on what else is asked
        attn = torch.softmax(
            _noisy_scores(q, k, mask, tau, dist, shape_k, sigma, noise_scale, noise), -1
        )
    if not (need_kl or need_extras):
        if not sampled:
            attn = torch.softmax(scores_plus(q, k, mask, tau), dim=-1)  # a
        return KernelOut(out=attend(attn, v), attn=attn)
    scores = scores_plus(q, k, mask, tau)  # [N, H, L, L]
    a = torch.softmax(scores, dim=-1)  # posterior mean
    log_a = torch.log_softmax(scores, dim=-1)
    if not sampled:
        attn = a
    if callable(prior_logits):
        prior_logits = prior_logits()
    if prior_logits is None:
        n_real = mask.sum(-1, keepdim=True).to(q.dtype)  # [N, 1]
        log_pi = (-torch.log(n_real))[:, None, :].expand(k.shape[0], k.shape[1], k.shape[2])
        log_pi = log_pi.masked_fill(~mask[:, None, :], float("-inf"))  # [N, H, L]
    else:
        log_pi = torch.log_softmax(prior_logits.masked_fill(~mask[:, None, :], float("-inf")), -1)
    extras = {"prior": log_pi.exp(), "posterior_mean": a}
    if need_kl:
        qmask = mask if query_mask is None else query_mask
        extras["kl"] = _kl(log_a, log_pi, qmask, mask, dist, shape_k, sigma, beta, prior_sigma)
    return KernelOut(out=attend(attn, v), attn=attn, extras=extras)


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


def _kl(log_a, log_pi, qmask, mask, dist, shape_k, sigma, beta, prior_sigma) -> torch.Tensor:
    """KL per head ``[N, H]`` from ``log a [N,H,Lq,L]`` and ``log pi [N,H,L]``, masked by the
    query mask ``qmask [N, Lq]`` and the key mask ``mask [N, L]``."""
    valid = qmask[:, None, :, None] & mask[:, None, None, :]  # [N, 1, Lq, L] real query & key
    # zero the masked entries *before* arithmetic so no inf/NaN reaches the gradient
    log_a_safe = log_a.masked_fill(~valid, 0.0)  # [N, H, L, L]
    log_pi_safe = log_pi.masked_fill(~mask[:, None, :], 0.0)[:, :, None, :]  # [N, H, 1, L]
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
