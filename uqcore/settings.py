"""Inference-time settings: what a caller may override without touching the model.

:class:`SamplingSettings` holds optional overrides (None = the checkpoint's trained value);
:func:`resolve` validates them against a :class:`ModelConfig` and returns the concrete
:class:`ForwardSettings` that the layers read. Models never store these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from uqcore.config import ModelConfig, check_positive
from uqcore.errors import ConfigError

MAX_EM_ITERATIONS = 1000

# Which knob each family actually reads (the app greys out the others and says why).
TAU_FAMILIES = ("trans", "mcdropout", "ensemble", "bayesformer", "probtrans")
TAU2_FAMILIES = ("sto", "hsto")
TAU1_FAMILIES = ("hsto",)
NOISE_FAMILIES = ("sto", "hsto", "bam")


@dataclass(frozen=True)
class SamplingSettings:
    """Optional overrides of a checkpoint's inference behaviour. None keeps the trained value."""

    tau: float | None = None  # softmax temperature of deterministic attention
    tau1: float | None = None  # H-STO keys -> centroids
    tau2: float | None = None  # STO / H-STO attention over values
    noise_scale: float | None = None  # lambda for Gumbel noise; scales BAM noise too
    hard: bool | None = None  # straight-through one-hot samples (STO / H-STO)
    bam_inference: Literal["sample", "mean"] | None = None
    em_iterations: int | None = None
    em_precision: float | None = None
    mc_dropout: bool | None = None  # keep dropout on at inference
    dropout: float | None = None  # dropout probability used when dropout is on


@dataclass(frozen=True)
class ForwardSettings:
    """Concrete values read by the layers during one forward pass."""

    tau: float
    tau1: float
    tau2: float
    noise_scale: float
    hard: bool
    bam_sample: bool
    em_iterations: int
    em_precision: float
    dropout: float
    dropout_on: bool
    fused_attention: bool = True  # False inside vmap: SDPA has no batching rule
    need_kl: bool = True  # BAM: compute the KL (training always; the sampler only on request)


def resolve(
    cfg: ModelConfig, s: SamplingSettings | None = None, *, training: bool = False
) -> ForwardSettings:
    """Merge overrides into the config's values, validating each one.

    ``training=True`` turns dropout on and BAM sampling on, as a training step needs, and
    EM key adaptation off: Movellan & Gabbur adapt the keys of a trained model at inference
    ("on-line unsupervised key learning"), so a Probabilistic Transformer trains as a standard
    one and its ``em_iterations`` apply when it is sampled.
    Raises :class:`ConfigError` with the offending name and the allowed range.
    """
    s = s or SamplingSettings()
    a = cfg.attention
    tau = check_positive("tau", cfg.softmax_tau if s.tau is None else s.tau)
    tau1 = check_positive("tau1", a.tau1 if s.tau1 is None else s.tau1)
    tau2 = check_positive("tau2", a.tau2 if s.tau2 is None else s.tau2)
    em_precision = check_positive(
        "em_precision", a.em_precision if s.em_precision is None else s.em_precision
    )
    noise_scale = a.noise_scale if s.noise_scale is None else s.noise_scale
    try:
        noise_scale = float(noise_scale)
    except (TypeError, ValueError):
        raise ConfigError(f"noise_scale must be a number >= 0, got {noise_scale!r}.") from None
    if not math.isfinite(noise_scale) or noise_scale < 0:
        raise ConfigError(f"noise_scale must be a finite number >= 0, got {noise_scale!r}.")
    em_iterations = a.em_iterations if s.em_iterations is None else s.em_iterations
    if (
        isinstance(em_iterations, bool)
        or not isinstance(em_iterations, int)
        or not 0 <= em_iterations <= MAX_EM_ITERATIONS
    ):
        raise ConfigError(
            f"em_iterations must be an integer in [0, {MAX_EM_ITERATIONS}], got {em_iterations!r}."
        )
    dropout = cfg.dropout if s.dropout is None else s.dropout
    try:
        dropout = float(dropout)
    except (TypeError, ValueError):
        raise ConfigError(f"dropout must be a number in [0, 1), got {dropout!r}.") from None
    if not 0.0 <= dropout < 1.0:
        raise ConfigError(f"dropout must be in [0, 1), got {dropout!r}.")
    dropout_on = training or (
        cfg.mc_dropout_default if s.mc_dropout is None else bool(s.mc_dropout)
    )
    if dropout_on and not training and cfg.family == "ensemble":
        raise ConfigError(
            "MC dropout is not available for a deep ensemble: its samples are its members. "
            "Turn MC dropout off, or pick an 'mcdropout' checkpoint."
        )
    mode = a.bam_inference if s.bam_inference is None else s.bam_inference
    if mode not in ("sample", "mean"):
        raise ConfigError(f"bam_inference must be 'sample' or 'mean', got {mode!r}.")
    hard = a.hard if s.hard is None else bool(s.hard)
    return ForwardSettings(
        tau=tau,
        tau1=tau1,
        tau2=tau2,
        noise_scale=noise_scale,
        hard=hard,
        bam_sample=training or mode == "sample",
        em_iterations=0 if training else em_iterations,
        em_precision=em_precision,
        dropout=dropout,
        dropout_on=dropout_on,
    )


def is_stochastic(cfg: ModelConfig, fs: ForwardSettings) -> bool:
    """True when two samples of one input can differ (ensembles: see the sampler)."""
    if fs.dropout_on and fs.dropout > 0:
        return True
    if cfg.family in ("sto", "hsto"):
        return fs.noise_scale > 0
    if cfg.family == "bam":
        return fs.bam_sample and fs.noise_scale > 0
    return False
