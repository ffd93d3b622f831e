"""Attention kernels: pure functions of ``q, k, v``, a key mask and a noise source.

Shapes everywhere: ``q, k, v`` are ``[N, H, L, d_h]`` (N rows = samples x batch), ``mask`` is
``[N, L]`` bool with True on real tokens. Each kernel returns a :class:`KernelOut`; the layer
that calls it owns the projections, the heads and what is captured for the app.
"""

from uqcore.kernels.bayesian import bam_attention, kl_lognormal, kl_weibull_gamma
from uqcore.kernels.common import KernelOut, scores_plus
from uqcore.kernels.em import em_adapt_keys, probtrans_attention
from uqcore.kernels.gumbel import centroid_attention, gumbel_softmax, sto_attention
from uqcore.kernels.softmax import softmax_attention

__all__ = [
    "KernelOut",
    "bam_attention",
    "centroid_attention",
    "em_adapt_keys",
    "gumbel_softmax",
    "kl_lognormal",
    "kl_weibull_gamma",
    "probtrans_attention",
    "scores_plus",
    "softmax_attention",
    "sto_attention",
]
