"""Typed configuration of the encoder classifier and of every attention family.

A :class:`ModelConfig` fully describes a model: it is serialised to ``config.json`` beside the
weights and :func:`uqcore.model.build_model` rebuilds the exact architecture from it.
Inference-time overrides (temperatures, sample count, ...) live in
:class:`uqcore.settings.SamplingSettings`, never here, so a request cannot mutate a model.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Literal

from uqcore.errors import ConfigError

FAMILIES: tuple[str, ...] = (
    "trans",  # deterministic softmax attention
    "mcdropout",  # same architecture, dropout kept on at inference
    "ensemble",  # N independently seeded "trans" members; a sample = one member
    "sto",  # Gumbel-softmax over values (STO-TRANS)
    "hsto",  # Gumbel-softmax over centroids, then over values (H-STO-TRANS)
    "bam",  # Bayesian Attention Modules (Weibull / Lognormal)
    "bayesformer",  # BayesFormer dropout placement, kept on at inference
    "probtrans",  # Probabilistic Transformer attention with EM key adaptation
)

FAMILY_TITLES: dict[str, str] = {
    "trans": "Deterministic transformer",
    "mcdropout": "MC dropout",
    "ensemble": "Deep ensemble",
    "sto": "STO-TRANS",
    "hsto": "H-STO-TRANS",
    "bam": "Bayesian Attention Modules",
    "bayesformer": "BayesFormer",
    "probtrans": "Probabilistic Transformer (EM keys)",
}

FORMAT_VERSION = 1


@dataclass(frozen=True)
class AttentionConfig:
    """Hyper-parameters of the attention kernels. Fields that a family does not use are ignored.

    Temperatures follow the paper: ``tau`` scales the deterministic softmax (``None`` means
    ``sqrt(d_head)``), ``tau2`` divides the *raw* ``QK^T`` plus noise of STO / H-STO,
    ``tau1`` divides the key-to-centroid logits of H-STO.
    """

    tau: float | None = None
    tau1: float = 1.0
    tau2: float = 1.0
    noise_scale: float = 1.0  # lambda: 1 = the paper, 0 = the noise-free skeleton
    hard: bool = False  # straight-through one-hot samples (tau then only changes gradients)
    # H-STO
    n_centroids: int = 2
    centroid_side: Literal["key", "query"] = "key"
    centroids_per_head: bool = False
    # BAM
    bam_dist: Literal["weibull", "lognormal"] = "weibull"
    bam_prior: Literal["contextual", "fixed"] = "contextual"
    bam_k: float = 10.0  # Weibull shape: larger = less noise
    bam_sigma: float = 0.5  # Lognormal posterior std of log S
    bam_beta: float = 1.0  # Gamma prior rate (alpha = beta * pi)
    bam_prior_sigma: float = 1.0  # Lognormal prior std of log S
    bam_d_mid: int = 10  # hidden width of the contextual prior network
    bam_inference: Literal["sample", "mean"] = "sample"
    # Probabilistic Transformer
    em_iterations: int = 0
    em_precision: float = 1.0  # theta, prior precision of the keys


@dataclass(frozen=True)
class ModelConfig:
    """Architecture of an encoder classifier: embeddings + ``n_layers`` pre-LN blocks + [CLS] head.

    Token ids: 0 = padding, 1 = unknown word, 2 = [CLS]; real words start at 3
    (see :mod:`uqcore.vocab`). ``max_len`` counts the [CLS] token.
    """

    family: str = "trans"
    vocab_size: int = 1000
    num_classes: int = 2
    max_len: int = 256
    n_layers: int = 1
    n_heads: int = 8
    d_model: int = 128
    d_ff: int = 512
    dropout: float = 0.1
    ensemble_size: int = 1
    attention: AttentionConfig = field(default_factory=AttentionConfig)

    # ------------------------------------------------------------------ derived
    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @property
    def softmax_tau(self) -> float:
        """Temperature of the deterministic softmax: ``attention.tau`` or ``sqrt(d_head)``."""
        tau = self.attention.tau
        return math.sqrt(self.d_head) if tau is None else tau

    @property
    def mc_dropout_default(self) -> bool:
        """Whether dropout stays on at inference unless the caller says otherwise."""
        return self.family in ("mcdropout", "bayesformer")

    # ------------------------------------------------------------------ checks
    def validate(self) -> ModelConfig:
        """Raise :class:`ConfigError` naming the first impossible field; return ``self``."""
        a = self.attention
        if self.family not in FAMILIES:
            raise ConfigError(
                f"Unknown model family {self.family!r}. Use one of: {', '.join(FAMILIES)}."
            )
        ints = {
            "vocab_size": (self.vocab_size, 4),
            "num_classes": (self.num_classes, 2),
            "max_len": (self.max_len, 2),
            "n_layers": (self.n_layers, 1),
            "n_heads": (self.n_heads, 1),
            "d_model": (self.d_model, 1),
            "d_ff": (self.d_ff, 1),
            "ensemble_size": (self.ensemble_size, 1),
            "attention.n_centroids": (a.n_centroids, 1),
            "attention.bam_d_mid": (a.bam_d_mid, 1),
            "attention.em_iterations": (a.em_iterations, 0),
        }
        for name, (value, low) in ints.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}.")
        if self.d_model % self.n_heads:
            raise ConfigError(
                f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}; "
                "choose n_heads that divides d_model."
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"dropout must be in [0, 1), got {self.dropout!r}.")
        if self.family == "ensemble" and self.ensemble_size < 2:
            raise ConfigError("An ensemble needs ensemble_size >= 2 members.")
        if self.family != "ensemble" and self.ensemble_size != 1:
            raise ConfigError("ensemble_size is only for family 'ensemble'; set it to 1.")
        positive = {
            "attention.tau1": a.tau1,
            "attention.tau2": a.tau2,
            "attention.bam_k": a.bam_k,
            "attention.bam_sigma": a.bam_sigma,
            "attention.bam_beta": a.bam_beta,
            "attention.bam_prior_sigma": a.bam_prior_sigma,
            "attention.em_precision": a.em_precision,
        }
        if a.tau is not None:
            positive["attention.tau"] = a.tau
        for name, value in positive.items():
            check_positive(name, value)
        if not (math.isfinite(a.noise_scale) and a.noise_scale >= 0):
            raise ConfigError(
                f"attention.noise_scale must be finite and >= 0, got {a.noise_scale!r}."
            )
        choices = {
            "attention.centroid_side": (a.centroid_side, ("key", "query")),
            "attention.bam_dist": (a.bam_dist, ("weibull", "lognormal")),
            "attention.bam_prior": (a.bam_prior, ("contextual", "fixed")),
            "attention.bam_inference": (a.bam_inference, ("sample", "mean")),
        }
        for name, (value, allowed) in choices.items():
            if value not in allowed:
                raise ConfigError(f"{name} must be one of {allowed}, got {value!r}.")
        return self

    # ------------------------------------------------------------ (de)serialise
    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        """Build and validate a config; unknown keys are an error (a typo must not pass)."""
        if not isinstance(data, dict):
            raise ConfigError(f"A model config must be a JSON object, got {type(data).__name__}.")
        data = dict(data)
        att = data.pop("attention", {}) or {}
        if not isinstance(att, dict):
            raise ConfigError("config 'attention' must be a JSON object.")
        _reject_unknown(cls, data, "model config")
        _reject_unknown(AttentionConfig, att, "attention config")
        try:
            return cls(**data, attention=AttentionConfig(**att)).validate()
        except TypeError as exc:  # pragma: no cover - guarded by _reject_unknown
            raise ConfigError(f"Invalid model config: {exc}") from exc

    def replace(self, **changes: Any) -> ModelConfig:
        """A copy with top-level fields and/or ``attention=dict(...)`` fields changed, validated."""
        att = changes.pop("attention", None)
        if isinstance(att, dict):
            changes["attention"] = dataclasses.replace(self.attention, **att)
        elif att is not None:
            changes["attention"] = att
        return dataclasses.replace(self, **changes).validate()


def check_positive(name: str, value: Any) -> float:
    """Return ``value`` as float if it is a finite number > 0, else raise ConfigError."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number > 0, got {value!r}.") from None
    if isinstance(value, bool) or not math.isfinite(v) or v <= 0:
        raise ConfigError(f"{name} must be a finite number > 0, got {value!r}.")
    return v


def _reject_unknown(cls: type, data: dict[str, Any], what: str) -> None:
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(
            f"Unknown field(s) in {what}: {', '.join(unknown)}. Known: {', '.join(sorted(known))}."
        )
