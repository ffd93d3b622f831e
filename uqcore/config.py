"""Typed configuration of the encoder classifier: its shape, its family's attention structure
and the inference settings it was trained with.

A :class:`ModelConfig` fully describes a model: it is serialised to ``config.json`` beside the
weights (format version 2) and :func:`uqcore.build.build_model` rebuilds the exact architecture
from it. ``attention`` is the family's own structural dataclass (``FamilySpec.params``: H-STO's
centroids, BAM's distributions; empty for softmax families) and ``inference`` the trained values
of the knobs the family reads (a :class:`SamplingSettings` with only those set). A request's
overrides are another :class:`SamplingSettings`, merged by :func:`uqcore.settings.resolve`, so a
request never mutates a model. Format 1 (one flat attention record of every family's fields) is
read through :func:`upgrade_v1`.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

from uqcore.backbones import BACKBONES, get_backbone
from uqcore.exceptions import ConfigError, check_positive
from uqcore.families import FAMILIES, get_family
from uqcore.knobs import KNOBS
from uqcore.nets.linear import AdapterConfig
from uqcore.settings import SamplingSettings

FORMAT_VERSION = 2


@dataclass(frozen=True)
class ModelConfig:
    """Architecture of an encoder classifier: embeddings + ``n_layers`` pre-LN blocks + [CLS] head.

    Token ids: 0 = padding, 1 = unknown word, 2 = [CLS]; real words start at 3
    (see :mod:`uqcore.text.vocab`). ``max_len`` counts the [CLS] token. ``attention`` defaults to
    the family's default structure; ``inference`` to no trained values (the library's fallbacks).
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
    attention: Any = None  # the family's FamilySpec.params instance (None = its defaults)
    inference: SamplingSettings = field(default_factory=SamplingSettings)
    backbone: str = "word"  # uqcore.backbones: "word" (from scratch) or "bert" (pretrained)
    backbone_params: Any = None  # the backbone's BackboneSpec.params instance (None = defaults)
    # Layers whose attention is the family's; the others attend with plain softmax and, when no
    # dropout is drawn, are computed once per input for all T samples. None = every layer.
    stochastic_layers: tuple[int, ...] | None = None
    adapters: AdapterConfig | None = (
        None  # low-rank adapters on the linear layers (uqcore.nets.linear)
    )

    def __post_init__(self) -> None:
        if self.attention is None and isinstance(self.family, str) and self.family in FAMILIES:
            object.__setattr__(self, "attention", FAMILIES[self.family].params())
        if self.backbone_params is None and self.backbone in BACKBONES:
            object.__setattr__(self, "backbone_params", BACKBONES[self.backbone].params())
        if isinstance(self.stochastic_layers, list):  # from JSON
            object.__setattr__(self, "stochastic_layers", tuple(self.stochastic_layers))
        if isinstance(self.adapters, dict):  # from JSON
            targets = tuple(self.adapters.get("targets", AdapterConfig.targets))
            layers = self.adapters.get("layers")
            layers = tuple(layers) if isinstance(layers, list) else layers
            object.__setattr__(
                self,
                "adapters",
                AdapterConfig(**{**self.adapters, "targets": targets, "layers": layers}),
            )

    # ------------------------------------------------------------------ derived
    @property
    def spec(self):
        """The family's :class:`uqcore.families.FamilySpec`."""
        return get_family(self.family)

    def is_stochastic_layer(self, index: int) -> bool:
        """Whether layer ``index`` runs the family's attention (else plain softmax)."""
        return self.stochastic_layers is None or index in self.stochastic_layers

    @property
    def first_stochastic_layer(self) -> int:
        """The lowest layer with the family's attention (0 when every layer has it)."""
        return 0 if self.stochastic_layers is None else min(self.stochastic_layers)

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @property
    def softmax_tau(self) -> float:
        """Temperature of the deterministic softmax: the trained ``tau`` or ``sqrt(d_head)``."""
        tau = self.inference.tau
        return math.sqrt(self.d_head) if tau is None else tau

    def n_parameters(self) -> int:
        """About how many parameters a model of this config has (embeddings, every layer's
        projections and FFN, the head; times the ensemble's members): computed from the numbers
        alone, so a config describing a huge model is refused before anything is built. Position
        rows are counted where a table is learned, not for rotary positions (no table)."""
        d, f, n = self.d_model, self.d_ff, self.n_layers
        rotary = getattr(self.backbone_params, "positions", None) == "rotary"
        embeddings = (self.vocab_size + (0 if rotary else self.max_len) + 2) * d
        layer = 4 * d * d + 2 * d * f + 9 * d + f  # Q, K, V, O, FFN, biases, norms
        return self.ensemble_size * (embeddings + n * layer + d * d + d * self.num_classes)

    # ------------------------------------------------------------------ checks
    def validate(self) -> ModelConfig:
        """Raise :class:`ConfigError` naming the first impossible field; return ``self``."""
        spec = get_family(self.family)
        ints = {
            "vocab_size": (self.vocab_size, 4),
            "num_classes": (self.num_classes, 2),
            "max_len": (self.max_len, 2),
            "n_layers": (self.n_layers, 1),
            "n_heads": (self.n_heads, 1),
            "d_model": (self.d_model, 1),
            "d_ff": (self.d_ff, 1),
            "ensemble_size": (self.ensemble_size, 1),
        }
        for name, (value, low) in ints.items():
            _check_int(name, value, low)
        if self.d_model % self.n_heads:
            raise ConfigError(
                f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}; "
                "choose n_heads that divides d_model."
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"dropout must be in [0, 1), got {self.dropout!r}.")
        if spec.ensemble and self.ensemble_size < 2:
            raise ConfigError("An ensemble needs ensemble_size >= 2 members.")
        if not spec.ensemble and self.ensemble_size != 1:
            raise ConfigError(
                f"ensemble_size is only for an ensemble family; set it to 1 for {self.family!r}."
            )
        if not isinstance(self.attention, spec.params):
            raise ConfigError(
                f"attention of a {self.family!r} model must be a {spec.params.__name__}, got "
                f"{type(self.attention).__name__}."
            )
        _check_params(self.attention, n_layers=self.n_layers)
        _check_inference(self.inference, spec)
        backbone = get_backbone(self.backbone)
        if not isinstance(self.backbone_params, backbone.params):
            raise ConfigError(
                f"backbone_params of a {self.backbone!r} model must be a "
                f"{backbone.params.__name__}, got {type(self.backbone_params).__name__}."
            )
        _check_params(self.backbone_params, "backbone_params")
        skip = getattr(self.backbone_params, "pool_skip_id", None)
        if skip is not None and skip >= self.vocab_size:
            raise ConfigError(
                f"backbone_params.pool_skip_id {skip} is not a token id (the vocabulary has "
                f"{self.vocab_size}); use null or the classifier's pad_token_id."
            )
        layers = self.stochastic_layers
        if layers is not None and (
            not isinstance(layers, tuple)
            or not layers
            or len(set(layers)) != len(layers)
            or any(
                isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < self.n_layers
                for i in layers
            )
        ):
            raise ConfigError(
                f"stochastic_layers must be null (every layer) or distinct layer indices in "
                f"[0, {self.n_layers - 1}], got {layers!r}."
            )
        if self.adapters is not None:
            a = self.adapters
            if not isinstance(a, AdapterConfig):
                raise ConfigError(f"adapters must be null or an object, got {a!r}.")
            _check_int("adapters.rank", a.rank, 1)
            check_positive("adapters.alpha", a.alpha)
            known = (*AdapterConfig.targets, "ff_gate")
            if not a.targets or not set(a.targets) <= set(known):
                raise ConfigError(
                    f"adapters.targets must be a non-empty subset of {list(known)}, "
                    f"got {list(a.targets)}."
                )
            if a.layers is not None and (
                not isinstance(a.layers, tuple)
                or not a.layers
                or len(set(a.layers)) != len(a.layers)
                or any(
                    isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < self.n_layers
                    for i in a.layers
                )
            ):
                raise ConfigError(
                    "adapters.layers must be null (every block) or distinct block indices in "
                    f"[0, {self.n_layers - 1}], got {a.layers!r}."
                )
        return self

    # ------------------------------------------------------------ (de)serialise
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (format 2): ``attention`` holds the family's structure only and
        ``inference`` the trained values of the knobs it reads."""
        top = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        top["attention"] = dataclasses.asdict(self.attention)
        top["inference"] = self.inference.set_fields()
        top["backbone_params"] = dataclasses.asdict(self.backbone_params)
        top["stochastic_layers"] = (
            None if self.stochastic_layers is None else list(self.stochastic_layers)
        )
        top["adapters"] = None if self.adapters is None else self.adapters.to_dict()
        return top

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        """Build and validate a config from a format-2 dict; unknown keys are an error (a typo
        must not pass)."""
        if not isinstance(data, dict):
            raise ConfigError(f"A model config must be a JSON object, got {type(data).__name__}.")
        data = dict(data)
        spec = get_family(data.get("family", "trans"))
        att = data.pop("attention", {}) or {}
        inf = data.pop("inference", {}) or {}
        bb = data.pop("backbone_params", {}) or {}
        backbone = get_backbone(data.get("backbone", "word"))
        for what, part in (("attention", att), ("inference", inf), ("backbone_params", bb)):
            if not isinstance(part, dict):
                raise ConfigError(f"config {what!r} must be a JSON object.")
        _reject_unknown(cls, data, "model config")
        _reject_unknown(spec.params, att, f"{spec.name!r} attention config")
        _reject_unknown(SamplingSettings, inf, "inference settings")
        _reject_unknown(backbone.params, bb, f"{backbone.name!r} backbone config")
        try:
            return cls(
                **data,
                attention=spec.params(**att),
                inference=SamplingSettings(**inf),
                backbone_params=backbone.params(**bb),
            ).validate()
        except TypeError as exc:  # pragma: no cover - guarded by _reject_unknown
            raise ConfigError(f"Invalid model config: {exc}") from None

    def replace(self, **changes: Any) -> ModelConfig:
        """A copy with top-level fields changed, validated. ``attention=dict(...)`` and
        ``inference=dict(...)`` change single fields. A new ``family`` takes that family's
        default structure (unless ``attention`` is given) and keeps the trained values of the
        knobs it reads."""
        family = changes.get("family", self.family)
        spec = get_family(family)
        att = changes.pop("attention", None)
        base = self.attention if isinstance(self.attention, spec.params) else spec.params()
        if isinstance(att, dict):
            changes["attention"] = dataclasses.replace(base, **att)
        else:
            changes["attention"] = base if att is None else att
        inf = changes.pop("inference", None)
        if isinstance(inf, dict):
            inf = dataclasses.replace(self.inference, **inf)
        inf = self.inference if inf is None else inf
        if family != self.family:
            inf = SamplingSettings(**{k: v for k, v in inf.set_fields().items() if spec.reads(k)})
        changes["inference"] = inf
        return dataclasses.replace(self, **changes).validate()


def family_fields(family: str, values: dict[str, Any]) -> tuple[Any, SamplingSettings]:
    """Sort flat ``values`` (structure fields such as ``n_centroids``, knob values such as
    ``tau2``) into ``family``'s structure dataclass and its trained inference settings. Keys the
    family does not have are left out, so one dict can describe several families."""
    spec = get_family(family)
    structure = {f.name for f in dataclasses.fields(spec.params)}
    params = spec.params(**{k: v for k, v in values.items() if k in structure})
    knobs = SamplingSettings(
        **{k: v for k, v in values.items() if k not in structure and spec.reads(k)}
    )
    return params, knobs


# Format 1 kept every family's fields in one flat "attention" record; format 2 names BAM's
# fields without the prefix and moves the trained inference values to "inference".
_V1_RENAMES = {
    "bam_dist": "dist",
    "bam_prior": "prior",
    "bam_k": "weibull_k",
    "bam_sigma": "lognormal_sigma",
    "bam_beta": "prior_beta",
    "bam_prior_sigma": "prior_sigma",
    "bam_d_mid": "prior_d_mid",
    "bam_inference": "bam_mode",
}
_V1_FIELDS = frozenset(
    {
        "tau",
        "tau1",
        "tau2",
        "noise_scale",
        "hard",
        "n_centroids",
        "centroid_side",
        "centroids_per_head",
        "em_iterations",
        "em_precision",
        *_V1_RENAMES,
    }
)


def upgrade_v1(model: dict[str, Any], family: str | None = None) -> dict[str, Any]:
    """A format-1 model dict (or a partial one, as training config files hold, with the
    ``family`` given apart) as format 2.

    Fields of the flat ``attention`` record that the family's structure has go to
    ``attention`` (BAM's without their ``bam_`` prefix); trained values of knobs the family reads
    go to ``inference``; fields the family never read are dropped (they did not change the
    model). An unknown field raises :class:`ConfigError`.
    """
    if not isinstance(model, dict):
        raise ConfigError(f"A model config must be a JSON object, got {type(model).__name__}.")
    out = dict(model)
    flat = out.pop("attention", None) or {}
    if not isinstance(flat, dict):
        raise ConfigError("config 'attention' must be a JSON object.")
    spec = get_family(family or out.get("family", "trans"))
    structure = {f.name for f in dataclasses.fields(spec.params)}
    attention: dict[str, Any] = {}
    inference: dict[str, Any] = dict(out.pop("inference", None) or {})
    for key, value in flat.items():
        if key not in _V1_FIELDS:
            raise ConfigError(
                f"Unknown field {key!r} in a format-1 attention config; known: "
                f"{', '.join(sorted(_V1_FIELDS))}."
            )
        name = _V1_RENAMES.get(key, key)
        if name in structure:
            attention[name] = value
        elif spec.reads(name) and value is not None:
            inference[name] = value
    if attention or "family" in out:
        out["attention"] = attention
    if inference:
        out["inference"] = inference
    return out


def _check_int(name: str, value: Any, low: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}.")


def _check_params(params: Any, where: str = "attention", n_layers: int | None = None) -> None:
    """Check a structure dataclass (a family's or a backbone's) field by field from its type
    hints: ``int`` >= 1, ``int | None`` null or >= 0, ``float`` finite > 0, ``bool``,
    ``Literal`` one of its values; then, given the model's depth ``n_layers``, the dataclass's own
    ``check(n_layers)`` if it has one (a block index it names)."""
    hints = typing.get_type_hints(type(params))
    for f in dataclasses.fields(params):
        name, value, hint = f"{where}.{f.name}", getattr(params, f.name), hints[f.name]
        if typing.get_origin(hint) is Literal:
            allowed = typing.get_args(hint)
            if value not in allowed:
                raise ConfigError(f"{name} must be one of {allowed}, got {value!r}.")
        elif hint is bool:
            if not isinstance(value, bool):
                raise ConfigError(f"{name} must be true or false, got {value!r}.")
        elif hint is int:
            _check_int(name, value, 1)
        elif hint == int | None:  # a token id, or none
            if value is not None:
                _check_int(name, value, 0)
        elif hint is float:
            check_positive(name, value)
    check = getattr(params, "check", None)
    if n_layers is not None and callable(check):
        check(n_layers)


def _check_inference(inf: SamplingSettings, spec) -> None:
    """Trained inference values: only knobs the family reads, each in range."""
    if not isinstance(inf, SamplingSettings):
        raise ConfigError(f"inference must be a SamplingSettings, got {type(inf).__name__}.")
    stray = [k for k in inf.set_fields() if not spec.reads(k) or k in ("dropout", "mc_dropout")]
    if stray:
        raise ConfigError(
            f"inference setting(s) {', '.join(stray)} are not read by a {spec.name!r} model; "
            f"it reads: {', '.join(k for k in spec.knobs) or 'none'}."
        )
    for name, value in inf.set_fields().items():  # each by its knob's check (the knob table)
        if KNOBS[name].kind is bool and not isinstance(value, bool):  # a request's is coerced
            raise ConfigError(f"inference.{name} must be true or false, got {value!r}.")
        KNOBS[name].check(f"inference.{name}", value)


def _reject_unknown(cls: type, data: dict[str, Any], what: str) -> None:
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(
            f"Unknown field(s) in {what}: {', '.join(unknown)}. Known: {', '.join(sorted(known))}."
        )
