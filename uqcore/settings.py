"""Inference-time settings: what a caller may override without touching the model.

:class:`SamplingSettings` holds optional overrides (None = the checkpoint's trained value);
:func:`resolve` validates them against a model's config (:class:`uqcore.config.ModelConfig`)
and returns the concrete :class:`ForwardSettings` that the layers read. Models never store
these. Both dataclasses are made from the knob table (:data:`uqcore.knobs.KNOBS`): one field per
knob, in the table's order, so a new knob is one entry there.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from uqcore.exceptions import ConfigError
from uqcore.knobs import KNOBS, TRAINED

KNOB_NAMES: tuple[str, ...] = tuple(n for n, k in KNOBS.items() if k.forward)
"""The knobs the layers read (the fields of :class:`ForwardSettings` that come from a knob)."""

# What a knob is when neither the request nor the checkpoint sets it (tau: sqrt(d_head), from
# the config; dropout: the model's training rate; mc_dropout: the family's default).
FALLBACKS: dict[str, Any] = {
    n: k.fallback for n, k in KNOBS.items() if k.forward and k.source == TRAINED
}


class _Overrides:
    def set_fields(self) -> dict[str, object]:
        """The fields that are not None (what a checkpoint stores), in declaration order."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


SamplingSettings = dataclasses.make_dataclass(
    "SamplingSettings",
    [(n, k.kind | None, dataclasses.field(default=None)) for n, k in KNOBS.items()],
    bases=(_Overrides,),
    namespace={
        "__module__": __name__,  # as if written here (pickle, repr, docs)
        "__doc__": "Inference settings, each optional, one per knob of :data:`uqcore.knobs."
        "KNOBS`. As a request's overrides, None keeps the checkpoint's value; as a "
        "checkpoint's trained values (``ModelConfig.inference``), only the knobs its family "
        "reads are set and None means the library's fallback (:data:`FALLBACKS`).",
    },
    frozen=True,
)


class _Resolved:
    @property
    def drop_p(self) -> float:
        """The dropout probability this pass applies: ``dropout`` when ``dropout_on``, else 0.
        The one test of "does this pass drop anything" (layers, the sampler's sharing)."""
        return self.dropout if self.dropout_on else 0.0


ForwardSettings = dataclasses.make_dataclass(
    "ForwardSettings",
    [
        *((n, KNOBS[n].kind) for n in KNOB_NAMES),
        ("dropout_on", bool),
        # False inside vmap: SDPA has no batching rule
        ("fused_attention", bool, dataclasses.field(default=True)),
        # BAM: compute the KL (training always; the sampler only on request)
        ("need_kl", bool, dataclasses.field(default=True)),
    ],
    bases=(_Resolved,),
    namespace={
        "__module__": __name__,  # as if written here (pickle, repr, docs)
        "__doc__": "Concrete values read by the layers during one forward pass: every knob of "
        ":data:`KNOB_NAMES`, whether dropout is on, and how (not what) is computed.",
    },
    frozen=True,
)


class Family(Protocol):
    """What :func:`resolve` reads of a family (a :class:`uqcore.families.FamilySpec`)."""

    mc_dropout: bool

    @property
    def ensemble(self) -> bool: ...

    def noisy(self, s: Any) -> bool: ...


class Model(Protocol):
    """What :func:`resolve` reads of a model's config (a :class:`uqcore.config.ModelConfig`;
    named by what it holds, not imported: the config imports this module)."""

    softmax_tau: float
    dropout: float
    inference: Any  # a SamplingSettings: the trained values of the knobs its family reads

    @property
    def spec(self) -> Family: ...


def resolve(
    cfg: Model, s: SamplingSettings | None = None, *, training: bool = False
) -> ForwardSettings:
    """Merge overrides ``s`` (a :class:`SamplingSettings`, None = none) into the config's values,
    validating each one; return a :class:`ForwardSettings`.

    Each knob takes the request's value, else its :attr:`uqcore.knobs.Knob.source` (the
    checkpoint's trained value, else the knob's fallback; or a config field), checked by its
    ``check``. ``training=True`` turns dropout on and BAM sampling on, as a training step needs,
    and EM key adaptation off: Movellan & Gabbur adapt the keys of a trained model at inference
    ("on-line unsupervised key learning"), so a Probabilistic Transformer trains as a standard
    one and its ``em_iterations`` apply when it is sampled.
    Raises :class:`ConfigError` with the offending name and the allowed range.
    """
    s = s or SamplingSettings()
    spec = cfg.spec
    values = {}
    for name in KNOB_NAMES:
        knob = KNOBS[name]
        value = knob.check(name, _pick(cfg, s, name))
        values[name] = knob.trains_as(value) if training else value
    asked = s.mc_dropout
    dropout_on = training or (spec.mc_dropout if asked is None else bool(asked))
    if dropout_on and not training and spec.ensemble:
        raise ConfigError(
            "MC dropout is not available for a deep ensemble: its samples are its members. "
            "Turn MC dropout off, or pick an 'mcdropout' checkpoint."
        )
    return ForwardSettings(**values, dropout_on=dropout_on)


def _pick(cfg: Model, s: SamplingSettings, name: str):
    """Knob ``name``'s value before its check: the request's, else its source's."""
    knob = KNOBS[name]
    request = getattr(s, name)
    if request is not None:
        return request
    if knob.source != TRAINED:
        return getattr(cfg, knob.source)
    own = getattr(cfg.inference, name)
    return own if own is not None else knob.fallback


def is_stochastic(cfg: Model, fs: ForwardSettings) -> bool:
    """True when two samples of one input can differ (ensembles: see the sampler)."""
    if fs.drop_p > 0:
        return True
    return cfg.spec.noisy(fs)
