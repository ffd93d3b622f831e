"""The family table: what each model family is, in one entry each.

A :class:`FamilySpec` names the family's attention kernel (bound once, at layer construction,
with the family's structural hyper-parameters, :attr:`FamilySpec.params`), the learnable tensors
that kernel needs, the inference knobs it reads (and so which settings a checkpoint of it
stores and which sidebar controls the app enables), the maps it produces, where its dropout
goes, and when its samples differ. Every other module asks this table; nothing else compares a
family's name. Adding a family = one kernel file in :mod:`uqcore.kernels` + one entry below.

The knobs themselves are the knob table (:data:`uqcore.knobs.KNOBS`); a knob a family does not
read is shown disabled with :func:`disabled_reason`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from torch import nn

from uqcore.exceptions import ConfigError
from uqcore.kernels.bayesian import BamParams, bam_weights, bind_bam
from uqcore.kernels.common import AttentionKernel
from uqcore.kernels.em import ProbtransParams, bind_probtrans
from uqcore.kernels.gumbel import HstoParams, StoParams, bind_hsto, bind_sto, hsto_weights
from uqcore.kernels.softmax import NoParams, bind_softmax
from uqcore.knobs import KNOBS
from uqcore.nets.posterior import LaplaceParams
from uqcore.settings import ForwardSettings, SamplingSettings


def _never(s: ForwardSettings) -> bool:
    return False


# A pretrained classifier, no training (uqlab.import_hf). STO: tau2 = sqrt(d_head), the model's
# own scale, so lambda = 0 is the model; BAM: a fixed (uniform) prior, Weibull shape k = 10 at
# lambda = 1 (k = 10 / lambda), mean = the model's attention.
BAM_UNTRAINED_K = 10.0


def _bind_plain(params: object):
    """A family whose attention is plain softmax whatever its structure says (Laplace)."""
    return bind_softmax(NoParams())


def _untrained_plain(d_head: int):
    return NoParams(), SamplingSettings()


def _untrained_sto(d_head: int):
    return StoParams(), SamplingSettings(tau2=math.sqrt(d_head), noise_scale=1.0)


def _untrained_bam(d_head: int):
    return (
        BamParams(prior="fixed", weibull_k=BAM_UNTRAINED_K),
        SamplingSettings(noise_scale=1.0, bam_mode="sample"),
    )


@dataclass(frozen=True)
class FamilySpec:
    """One model family.

    ``params``: the frozen dataclass of its attention's structural hyper-parameters (stored in
    ``ModelConfig.attention``); ``bind(params)`` returns its :class:`AttentionKernel`;
    ``weights(params, n_heads, d_head)`` the learnable tensors the kernel reads, registered on
    the attention layer under these names (checkpoint keys); ``knobs``: the inference settings
    it reads (a checkpoint stores their trained values in ``ModelConfig.inference``);
    ``maps``: the :class:`uqcore.nets.maps.LayerMaps` fields it fills besides ``attention``;
    ``dropout_site``: ``"standard"`` (embeddings, attention probabilities, sub-layer outputs) or
    ``"variational"`` (BayesFormer: inputs of Q, K, V per head and of the FFN, token inputs);
    ``mc_dropout``: dropout stays on at inference unless the caller says otherwise;
    ``member_family``: a deep ensemble of members of that family (a sample = a member);
    ``noisy(s)``: whether its attention draws noise under resolved settings ``s``;
    ``needs_every_query(s)``: its last layer must attend from every token (EM);
    ``extra_bytes``: activations per row and token beyond the standard ones, in units of
    ``n_heads * d_model`` floats (BayesFormer's per-head masked inputs), for chunk sizing;
    ``has_kl``: its kernel returns a KL term (added to the training loss);
    ``untrained(d_head)``: how the family applies to a pretrained classifier with no training
    (an imported Hugging Face model, :mod:`uqlab.import_hf`): its structure and its knobs'
    values, chosen so that zero noise is the model itself; None: it needs training.
    ``untrained_help``: that in one line, for the app.
    ``weight_posterior``: a Gaussian over the trained weights (:mod:`uqcore.nets.posterior`);
    a sample = one draw of those weights, scaled by the noise-scale knob.
    ``sample_is``: one plain sentence saying what one of its T samples is (a forward pass with
    fresh attention noise, a fresh dropout mask, one member...), or that every sample is the
    same; the explorer's histogram caption shows it. Every entry sets it.
    """

    name: str
    title: str
    params: type
    bind: Callable[[object], AttentionKernel]
    weights: Callable[[object, int, int], dict[str, nn.Parameter]] = lambda p, h, d: {}
    knobs: tuple[str, ...] = ("tau",)
    maps: tuple[str, ...] = ()
    dropout_site: Literal["standard", "variational"] = "standard"
    mc_dropout: bool = False
    member_family: str | None = None
    noisy: Callable[[ForwardSettings], bool] = field(default=_never)
    needs_every_query: Callable[[ForwardSettings], bool] = field(default=_never)
    extra_bytes: int = 0
    has_kl: bool = False
    untrained: Callable[[int], tuple[object, SamplingSettings]] | None = None
    untrained_help: str = ""
    sample_is: str = ""
    weight_posterior: bool = False

    @property
    def layered(self) -> bool:
        """Its noise is in the attention, so which layers draw it is a choice."""
        return "noise_scale" in self.knobs and not self.weight_posterior

    @property
    def ensemble(self) -> bool:
        return self.member_family is not None

    @property
    def can_vary(self) -> bool:
        """Some settings make its samples differ (attention noise, dropout kept on, or the
        members of an ensemble); False: every sample is the same forward pass, whatever the
        settings."""
        return self.ensemble or self.mc_dropout or self.noisy is not _never

    def reads(self, knob: str) -> bool:
        """Whether this family's attention (or dropout) uses ``knob`` at inference."""
        if knob == "dropout":
            return self.mc_dropout
        return knob in self.knobs

    def controls(self) -> tuple[str, ...]:
        """The sidebar controls for this family, in :data:`KNOBS` order: every knob it reads
        that has a control, plus the always-shown ones (disabled when not read)."""
        return tuple(k for k, i in KNOBS.items() if i.control and (i.always or self.reads(k)))


SOFTMAX_KNOBS = ("tau",)

# Hand-laid (fmt: off): one family per entry, read as a table.
# fmt: off
FAMILIES: dict[str, FamilySpec] = {
    spec.name: spec
    for spec in (
        FamilySpec("trans", "Deterministic transformer", NoParams, bind_softmax,
                   untrained=_untrained_plain, untrained_help="the model as it is: one answer",
                   sample_is="A deterministic transformer draws nothing at random: every "
                             "sample is the same forward pass, so all T samples are identical."),
        FamilySpec("mcdropout", "MC dropout", NoParams, bind_softmax, mc_dropout=True,
                   untrained=_untrained_plain,
                   untrained_help="dropout kept on, at the model's own rate",
                   sample_is="Each sample is one forward pass with a fresh dropout mask "
                             "(dropout kept on at inference)."),
        FamilySpec("ensemble", "Deep ensemble", NoParams, bind_softmax, member_family="trans",
                   sample_is="Each sample is one member of the ensemble, a model trained "
                             "with another seed (sample t is member t mod the ensemble size)."),
        FamilySpec(
            "sto", "STO-TRANS", StoParams, bind_sto,
            knobs=("tau2", "noise_scale", "hard"),
            noisy=lambda s: s.noise_scale > 0, untrained=_untrained_sto,
            untrained_help="Gumbel noise on the attention logits (lambda = 0: the model)",
            sample_is="Each sample is one forward pass with fresh Gumbel noise on the "
                      "attention scores.",
        ),
        FamilySpec(
            "hsto", "H-STO-TRANS", HstoParams, bind_hsto, weights=hsto_weights,
            knobs=("tau1", "tau2", "noise_scale", "hard"), maps=("centroids",),
            noisy=lambda s: s.noise_scale > 0,
            sample_is="Each sample is one forward pass with fresh Gumbel noise on the keys' "
                      "centroid assignments and on the attention scores.",
        ),
        FamilySpec(
            "bam", "Bayesian Attention Modules", BamParams, bind_bam, weights=bam_weights,
            knobs=("noise_scale", "bam_mode"), maps=("prior", "posterior_mean", "kl_per_head"),
            noisy=lambda s: s.bam_mode == "sample" and s.noise_scale > 0, has_kl=True,
            untrained=_untrained_bam,
            untrained_help="Weibull attention weights around the model's own attention",
            sample_is="Each sample is one forward pass with attention weights drawn afresh "
                      "(Weibull) around the posterior.",
        ),
        FamilySpec(
            "bayesformer", "BayesFormer", NoParams, bind_softmax, dropout_site="variational",
            mc_dropout=True, extra_bytes=3,
            sample_is="Each sample is one forward pass with fresh dropout masks on the inputs "
                      "of each head's queries, keys and values and of the feed-forward layers.",
        ),
        FamilySpec(
            "probtrans", "Probabilistic Transformer (EM keys)", ProbtransParams, bind_probtrans,
            knobs=("tau", "em_iterations", "em_precision"), maps=("attention_before_em",),
            needs_every_query=lambda s: s.em_iterations > 0,
            sample_is="The EM key adaptation draws nothing at random: every sample is the "
                      "same forward pass, so all T samples are identical.",
        ),
        FamilySpec(
            "laplace", "Laplace (Bayesian weights)", LaplaceParams, _bind_plain,
            knobs=("tau", "noise_scale"), weight_posterior=True,
            noisy=lambda s: s.noise_scale > 0,
            sample_is="Each sample is one draw of the trained weights (adapters and head) from "
                      "their Laplace posterior, so the attention maps move with it.",
        ),
    )
}
# fmt: on

FAMILY_NAMES: tuple[str, ...] = tuple(FAMILIES)
TRAINING_FREE: tuple[str, ...] = tuple(n for n, f in FAMILIES.items() if f.untrained)

# The attention of a layer that ModelConfig.stochastic_layers leaves out: plain softmax, no
# structure and no weights of its own (the family's dropout placement still applies).
PLAIN: FamilySpec = FAMILIES["trans"]


def get_family(name: str) -> FamilySpec:
    """The spec of family ``name``; :class:`ConfigError` listing the known ones otherwise."""
    spec = FAMILIES.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ConfigError(f"Unknown model family {name!r}. Use one of: {', '.join(FAMILIES)}.")
    return spec


def title(name: str) -> str:
    """A family's display name (the name itself for an unknown family, e.g. a broken folder)."""
    spec = FAMILIES.get(name)
    return spec.title if spec else str(name)


def disabled_reason(spec: FamilySpec, knob: str) -> str:
    """Why the control of ``knob`` is disabled for ``spec``, naming the families that read it."""
    users = [f.title for f in FAMILIES.values() if f.reads(knob)]
    if not users:
        return f"Disabled: {spec.title} {KNOBS[knob].lacks}; no family uses {knob}."
    named = users[0] if len(users) == 1 else f"{', '.join(users[:-1])} and {users[-1]}"
    verb = "uses" if len(users) == 1 else "use"
    return f"Disabled: {spec.title} {KNOBS[knob].lacks}; only {named} {verb} {knob}."
