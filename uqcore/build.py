"""Building models: a backbone's classifier, the deep ensemble, adapters, and a pretrained base.

:func:`build_model` is the one way a model is made from a :class:`ModelConfig` (training,
checkpoint loading, the app): a :class:`DeepEnsemble` of the family's ``member_family`` members
or one classifier (:func:`build_one`), with low-rank adapters when the config has some. The
backbone table (:mod:`uqcore.backbones`) is data; :data:`CLASSIFIERS` maps its classifier kinds
to the code: the class a member is, the tensors a pretrained base provides
(:func:`frozen_names`: a checkpoint does not store them) and how they are copied into a model
(:func:`attach_base`). This module imports every classifier, so the modules it imports never
import it back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn
from torch.func import functional_call

from uqcore.backbones import get_backbone
from uqcore.config import ModelConfig
from uqcore.nets.bert import BertClassifier, frozen_base_names, load_hf_bert
from uqcore.nets.decoder import DecoderClassifier
from uqcore.nets.linear import add_adapters, matmul_linear_only
from uqcore.nets.maps import LayerMaps
from uqcore.nets.model import EncoderClassifier, ForwardOutput
from uqcore.nets.posterior import POSTERIOR, attach_posterior
from uqcore.readers.decoder_weights import decoder_frozen_names, load_hf_decoder
from uqcore.settings import resolve


def _no_base(cfg: ModelConfig) -> frozenset[str]:
    return frozenset()


@dataclass(frozen=True)
class ClassifierKind:
    """The code of one classifier kind (``BackboneSpec.classifier``): ``build(cfg)``, a fresh
    classifier of one member; ``frozen(cfg)``, the tensor names its pretrained base provides
    (none when it has no base); ``load_base(model, folder, share_tables=...)``, copies them from
    a base folder into one member (None: no base)."""

    build: Callable[[ModelConfig], nn.Module]
    frozen: Callable[[ModelConfig], frozenset[str]] = _no_base
    load_base: Callable[..., nn.Module] | None = None


CLASSIFIERS: dict[str, ClassifierKind] = {
    "word": ClassifierKind(EncoderClassifier),
    "bert": ClassifierKind(BertClassifier, frozen_base_names, load_hf_bert),
    "decoder": ClassifierKind(DecoderClassifier, decoder_frozen_names, load_hf_decoder),
}


def _kind(cfg: ModelConfig) -> ClassifierKind:
    return CLASSIFIERS[get_backbone(cfg.backbone).classifier]


def build_one(cfg: ModelConfig) -> nn.Module:
    """One classifier of ``cfg``'s backbone, with its low-rank adapters if it has some, and a
    weight posterior over what training made when its family has one (Laplace)."""
    model = _kind(cfg).build(cfg)
    model = add_adapters(model, cfg.adapters) if cfg.adapters is not None else model
    if not cfg.spec.weight_posterior:
        return model
    return attach_posterior(model, frozen_names(cfg), cfg.attention.from_block)


def build_model(cfg: ModelConfig) -> nn.Module:
    """A freshly initialised model of ``cfg`` (validated) in eval mode."""
    cfg.validate()
    model = DeepEnsemble(cfg) if cfg.spec.ensemble else build_one(cfg)
    return model.eval()


def build_unset(cfg: ModelConfig) -> nn.Module:
    """A model of ``cfg`` whose parameters are allocated but neither initialised nor touched
    (built on the meta device, then given empty storage): for a loader that overwrites every
    one of them (:func:`uqcore.checkpoint.load_checkpoint`). A page never written is not held,
    so a parameter pointed at a base copy already held
    (:func:`uqcore.readers.base_model.share_base`) costs no memory at all, and the random
    initialisation (3 s for SmolLM2) is not done. A model with buffers (values computed when it is
    built) is built as :func:`build_model` does."""
    with torch.device("meta"):
        model = build_model(cfg)
    # a weight posterior's buffers are read from the checkpoint like the weights
    if any(not n.startswith(f"{POSTERIOR}.") for n, _ in model.named_buffers()):
        return build_model(cfg)
    return model.to_empty(device="cpu")


def frozen_names(cfg: ModelConfig) -> frozenset[str]:
    """The tensor names whose values come from ``cfg``'s pretrained base and never change (a
    checkpoint does not store them; unprefixed, as in one member); empty without a base."""
    return _kind(cfg).frozen(cfg)


def load_base(member: nn.Module, folder: str | Path) -> None:
    """Copy the pretrained base in ``folder`` into one classifier ``member`` (its own copy of
    every tensor: training). ``ValueError`` for a backbone without a base."""
    load = _kind(member.cfg).load_base
    if load is None:
        raise ValueError(f"The {member.cfg.backbone!r} backbone has no pretrained base to load.")
    load(member, folder)


def attach_base(model: nn.Module, folder: str | Path) -> None:
    """Copy the pretrained base in ``folder`` into ``model`` (every member of a deep ensemble,
    one copy of the embedding tables for all of them: inference only, see
    :func:`uqcore.nets.bert.load_hf_bert`). ``ValueError`` for a backbone without a base."""
    load = _kind(model.cfg).load_base
    if load is None:
        raise ValueError(f"The {model.cfg.backbone!r} backbone has no pretrained base to attach.")
    for member in getattr(model, "members", [model]):  # a deep ensemble: every member
        load(member, folder, share_tables=True)  # one copy of the embedding tables


def _stacked_tensors(named: list, leave_out: Collection[str]) -> dict[str, torch.Tensor]:
    """Each name's tensors of every member (``named``: one ``named_parameters()`` or
    ``named_buffers()`` per member) stacked on a leading ``[M, ...]`` dimension, detached, less
    the names in ``leave_out``."""
    each = [dict(n) for n in named]
    return {
        name: torch.stack([d[name].detach() for d in each])
        for name in each[0]
        if name not in leave_out
    }


class DeepEnsemble(nn.Module):
    """``ensemble_size`` independently initialised members (of the spec's ``member_family``).

    ``forward`` returns every member's output stacked on a leading ``M`` dimension. Without
    gradients, members that share their first block (a pretrained base whose lower blocks carry
    no adapters: SmolLM2's 0-15) run together in one ``torch.func.vmap`` call over stacked
    weights, which computes what they share once (:meth:`runs_together`); otherwise, and with
    gradients (training, so each member's weights get grads), they run one after another.
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg.validate()
        member_cfg = cfg.replace(family=cfg.spec.member_family, ensemble_size=1)
        self.members = nn.ModuleList(build_one(member_cfg) for _ in range(cfg.ensemble_size))
        self._stack: tuple[tuple, tuple[dict, dict, dict], bool] | None = None

    def _stacked(self) -> tuple[dict, dict, dict]:
        """The members' weights stacked on a leading ``M`` dimension and the ones they share
        (:meth:`_common`), rebuilt only when a weight changed (training steps bump a tensor's
        version) or moved."""
        if self._stack is None or self._stack[0] != self._key():
            # normal tensors even when called under inference_mode: the members' own weights
            # become views of them (one copy in memory, not two), and training needs them
            with torch.inference_mode(False), torch.no_grad():
                common = self._common()  # never stacked: a shared base is held once, not M times
                params = _stacked_tensors([m.named_parameters() for m in self.members], common)
                buffers = _stacked_tensors([m.named_buffers() for m in self.members], {})
                for i, member in enumerate(self.members):
                    for name, p in member.named_parameters():
                        if name in params:
                            p.data = params[name][i]
                    for name in dict(member.named_buffers()):
                        path, _, leaf = name.rpartition(".")
                        member.get_submodule(path)._buffers[leaf] = buffers[name][i]
            self._stack = (self._key(), (params, buffers, common), self._shares_first(common))
        return self._stack[1]

    def _shares_first(self, common: dict) -> bool:
        """Whether every weight of the members' first block is in ``common`` (held once)."""
        first = getattr(self.members[0], "layers", None)
        if first is None or len(first) == 0:
            return False
        return all(f"layers.0.{n}" in common for n, _ in first[0].named_parameters())

    def _common(self) -> dict[str, torch.Tensor]:
        """Parameters every member holds in one storage (a pretrained base's embedding tables,
        shared at loading): passed to ``vmap`` once, unbatched, instead of stacked M times."""
        named = [dict(m.named_parameters()) for m in self.members]
        return (
            {
                n: t.detach()
                for n, t in named[0].items()
                if all(d[n].data_ptr() == t.data_ptr() and d[n].shape == t.shape for d in named[1:])
            }
            if len(named) > 1
            else {}
        )

    def _key(self) -> tuple:
        """What the stacked weights depend on: every tensor's identity, version and device."""
        tensors = [*self.parameters(), *self.buffers()]
        return tuple((id(t), t._version, t.device) for t in tensors)

    def runs_together(self) -> bool:
        """Whether ``forward`` without gradients runs the members in one ``vmap``: only when
        every weight of their first block is shared (:meth:`_common`), so that ``vmap``
        computes the blocks below their own weights once for all members. When every block is
        a member's own (word-level nets, MiniLM with adapters in all six blocks) ``vmap`` shares
        nothing and costs: it takes the manual attention path (SDPA has no batching rule) and
        a plain matmul for the linear layers, so a loop over the members is faster (measured by
        ``python -m uqlab.benches.ensemble``: docs/performance.md)."""
        self._stacked()  # rebuilt (and the answer with it) only when a weight changed
        return self._stack[2]

    def forward(
        self, ids, mask, settings=None, noise=None, capture: Collection[int] = ()
    ) -> ForwardOutput:
        s = settings or resolve(self.cfg)
        if (
            torch.is_grad_enabled()
            or (s.dropout_on and noise is not None)
            or not self.runs_together()
        ):
            return self.one_by_one(ids, mask, s, noise, capture)
        return self.together(ids, mask, s, capture)

    def one_by_one(self, ids, mask, s, noise=None, capture: Collection[int] = ()) -> ForwardOutput:
        """The members one after another, their outputs stacked ``[M, ...]``."""
        outs = [m(ids, mask, s, noise, capture) for m in self.members]
        maps = {
            i: outs[0]
            .maps[i]
            .map(lambda name, _, i=i: torch.stack([getattr(o.maps[i], name) for o in outs]))
            for i in outs[0].maps
        }
        logits = torch.stack([o.logits for o in outs])  # [M, N, C]
        features = torch.stack([o.features for o in outs])  # [M, N, D]
        return ForwardOutput(logits=logits, maps=maps, features=features)

    def together(self, ids, mask, s, capture: Collection[int] = ()) -> ForwardOutput:
        """The members in one ``vmap`` over their stacked weights, without noise or gradients;
        the same numbers as :meth:`one_by_one` within float rounding."""
        params, buffers, common = self._stacked()  # common: unbatched, one for every member
        base = self.members[0]
        capture = tuple(capture)
        s = dataclasses.replace(s, fused_attention=False)

        def one(p, b, c):
            out = functional_call(
                base, ({**p, **c}, b), (ids, mask), {"settings": s, "capture": capture}
            )
            maps = {i: dict(m.items()) for i, m in out.maps.items()}  # a pytree
            return out.logits, maps, out.features

        with matmul_linear_only():  # oneDNN's fused linear has no vmap batching rule
            # [M, N, C], {layer: {name: [M..]}}, [M, N, D]
            logits, maps, features = torch.vmap(one, in_dims=(0, 0, None))(params, buffers, common)
        maps = {i: LayerMaps(**m) for i, m in maps.items()}
        return ForwardOutput(logits=logits, maps=maps, features=features)
