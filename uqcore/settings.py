"""Inference-time settings: what a caller may override without touching the model.

:class:`SamplingSettings` holds optional overrides (None = the checkpoint's trained value);
:func:`resolve` validates them against a :class:`ModelConfig` and returns the concrete
:class:`ForwardSettings` that the layers read. Models never store these.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from uqcore.errors import ConfigError, check_positive

if TYPE_CHECKING:  # types only: config imports this module (the family is read as cfg.spec)
    from uqcore.config import ModelConfig

MAX_EM_ITERATIONS = 1000
KNOB_NAMES = (
    "tau",
    "tau1",
    "tau2",
    "noise_scale",
    "hard",
    "bam_mode",
    "em_iterations",
    "em_precision",
    "dropout",
)


@dataclass(frozen=True)
class SamplingSettings:
    """Inference settings, each optional. As a request's overrides, None keeps the checkpoint's
    value; as a checkpoint's trained values (``ModelConfig.inference``), only the knobs its
    family reads are set and None means the library's fallback (:data:`FALLBACKS`)."""

    tau: float | None = None  # softmax temperature of deterministic attention
    tau1: float | None = None  # H-STO keys -> centroids
    tau2: float | None = None  # STO / H-STO attention over values
    noise_scale: float | None = None  # lambda for Gumbel noise; scales BAM noise too
    hard: bool | None = None  # straight-through one-hot samples (STO / H-STO)
    bam_mode: Literal["sample", "mean"] | None = None  # BAM: sampled weights or their mean
    em_iterations: int | None = None
    em_precision: float | None = None
    mc_dropout: bool | None = None  # keep dropout on at inference
    dropout: float | None = None  # dropout probability used when dropout is on

    def set_fields(self) -> dict[str, object]:
        """The fields that are not None (what a checkpoint stores), in declaration order."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


# What a knob is when neither the request nor the checkpoint sets it (tau: sqrt(d_head);
# dropout: the model's training rate; mc_dropout: the family's default).
FALLBACKS = {
    "tau1": 1.0,
    "tau2": 1.0,
    "noise_scale": 1.0,
    "hard": False,
    "bam_mode": "sample",
    "em_iterations": 0,
    "em_precision": 1.0,
}


@dataclass(frozen=True)
class ForwardSettings:
    """Concrete values read by the layers during one forward pass."""

    tau: float
    tau1: float
    tau2: float
    noise_scale: float
    hard: bool
    bam_mode: Literal["sample", "mean"]
    em_iterations: int
    em_precision: float
    dropout: float
    dropout_on: bool
    fused_attention: bool = True  # False inside vmap: SDPA has no batching rule
    need_kl: bool = True  # BAM: compute the KL (training always; the sampler only on request)

    @property
    def drop_p(self) -> float:
        """The dropout probability this pass applies: ``dropout`` when ``dropout_on``, else 0.
        The one test of "does this pass drop anything" (layers, the sampler's sharing)."""
        return self.dropout if self.dropout_on else 0.0


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
    spec = cfg.spec
    trained = cfg.inference

    def pick(name: str):
        request, own = getattr(s, name), getattr(trained, name)
        return request if request is not None else own if own is not None else FALLBACKS[name]

    tau = check_positive("tau", cfg.softmax_tau if s.tau is None else s.tau)
    tau1 = check_positive("tau1", pick("tau1"))
    tau2 = check_positive("tau2", pick("tau2"))
    em_precision = check_positive("em_precision", pick("em_precision"))
    noise_scale = check_noise_scale(pick("noise_scale"))
    em_iterations = check_em_iterations(pick("em_iterations"))
    dropout = cfg.dropout if s.dropout is None else s.dropout
    try:
        dropout = float(dropout)
    except (TypeError, ValueError):
        raise ConfigError(f"dropout must be a number in [0, 1), got {dropout!r}.") from None
    if not 0.0 <= dropout < 1.0:
        raise ConfigError(f"dropout must be in [0, 1), got {dropout!r}.")
    dropout_on = training or (spec.mc_dropout if s.mc_dropout is None else bool(s.mc_dropout))
    if dropout_on and not training and spec.ensemble:
        raise ConfigError(
            "MC dropout is not available for a deep ensemble: its samples are its members. "
            "Turn MC dropout off, or pick an 'mcdropout' checkpoint."
        )
    mode = check_bam_mode(pick("bam_mode"))
    return ForwardSettings(
        tau=tau,
        tau1=tau1,
        tau2=tau2,
        noise_scale=noise_scale,
        hard=bool(pick("hard")),
        bam_mode="sample" if training else mode,
        em_iterations=0 if training else em_iterations,
        em_precision=em_precision,
        dropout=dropout,
        dropout_on=dropout_on,
    )


def check_noise_scale(value) -> float:
    """``value`` as a finite float >= 0, else :class:`ConfigError`."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"noise_scale must be a number >= 0, got {value!r}.") from None
    if isinstance(value, bool) or not math.isfinite(v) or v < 0:
        raise ConfigError(f"noise_scale must be a finite number >= 0, got {value!r}.")
    return v


def check_em_iterations(value) -> int:
    """``value`` if it is an int in [0, MAX_EM_ITERATIONS], else :class:`ConfigError`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_EM_ITERATIONS:
        raise ConfigError(
            f"em_iterations must be an integer in [0, {MAX_EM_ITERATIONS}], got {value!r}."
        )
    return value


def check_bam_mode(value) -> str:
    if value not in ("sample", "mean"):
        raise ConfigError(f"bam_mode must be 'sample' or 'mean', got {value!r}.")
    return value


def is_stochastic(cfg: ModelConfig, fs: ForwardSettings) -> bool:
    """True when two samples of one input can differ (ensembles: see the sampler)."""
    if fs.drop_p > 0:
        return True
    return cfg.spec.noisy(fs)
